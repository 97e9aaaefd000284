"""Tic-tac-toe with PettingZoo's AEC API (the API of `pettingzoo.classic.tictactoe_v3`), in the
standard library: a turn-based game of two players to train a seedrl learner from Python through
waiting seats (seedrl.players).

    distributed_learner --env custom --observation f32[3,3,2] --actions 9 --mask ...
    python -m seedrl.actor --path python/examples --game tictactoe:make --num-games 16 \\
        --observation-dtype f32
    python -m seedrl.actor --path python/examples --game tictactoe:make --num-games 16 \\
        --observation-dtype f32 --opponent random --evaluation --summary

A seat observes the board as planes [3, 3, 2] of int8, as PettingZoo's does (plane 0 its own
marks, plane 1 the other player's; sent as the f32 the learner's MLP takes), and a legal-action
mask of the 9 squares (square 3 * row + column); the winner gets +1, the loser -1, a draw 0 each.
"""

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
LINES_THROUGH = [[line for line in LINES if square in line] for square in range(9)]


class Space:
    """The little of Gymnasium's spaces the actor reads."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)


class TicTacToe:
    possible_agents = ["player_0", "player_1"]

    def __init__(self):
        self._observation = {"observation": Space(shape=(3, 3, 2), dtype="int8"),
                             "action_mask": Space(shape=(9,), dtype="int8")}
        self._actions = Space(n=9)
        self.reset()

    def observation_space(self, agent):
        return self._observation

    def action_space(self, agent):
        return self._actions

    def reset(self, seed=None, options=None):
        self.board = [None] * 9  # the index of the player who marked each square
        self.agents = list(self.possible_agents)
        self.agent_selection = self.agents[0]
        self.rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}

    def observe(self, agent):
        me = self.possible_agents.index(agent)
        planes = []
        for square in self.board:
            planes += [1 if square == me else 0, 1 if square is not None and square != me else 0]
        mask = [1 if square is None else 0 for square in self.board]
        if any(self.terminations.values()):
            mask = [0] * 9
        return {"observation": planes, "action_mask": mask}

    def step(self, action):
        if any(self.terminations.values()):
            raise ValueError("the game is over: reset it")
        me = self.possible_agents.index(self.agent_selection)
        if not 0 <= action < 9 or self.board[action] is not None:
            raise ValueError(f"{self.agent_selection}: square {action} is not free")
        self.board[action] = me
        self.rewards = {a: 0 for a in self.agents}
        board = self.board  # a move can only complete a line through its own square
        if any(board[a] == board[b] == board[c] == me for a, b, c in LINES_THROUGH[action]):
            for i, a in enumerate(self.agents):
                self.rewards[a] = 1 if i == me else -1
            self.terminations = {a: True for a in self.agents}
        elif None not in board:
            self.terminations = {a: True for a in self.agents}
        self.agent_selection = self.agents[1 - me]


def make(seed=None):
    return TicTacToe()
