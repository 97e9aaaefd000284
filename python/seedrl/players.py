"""Turn-based games of several players as the rows of one connection (`seedrl.actor`), with
PettingZoo's AEC API, duck-typed (pettingzoo need not be installed):

    game.possible_agents          the seats, in a fixed order ("player_0", "player_1", ...)
    game.reset(seed=)             a new game
    game.agent_selection          the seat to act
    game.observe(agent)           what a seat sees: an array, or {"observation", "action_mask"}
    game.step(action)             the acting seat's move
    game.rewards, terminations, truncations, infos   dicts by seat, after each move
    game.observation_space(agent), game.action_space(agent)   (Discrete: n)

Every seat the learner plays is a row of every game: row g * seats + s is the learner's seat s of
game g. At a step its seat does not act a row is *waiting* (the protocol's flag bit 3: the server
answers it and stores nothing); its first move is flagged first with reward 0, its later moves
carry what its seat earned since its previous one, and when the game ends every seat that has
moved sends its last view, terminated (or truncated), with what it earned since. Without
opponents the learner plays every seat (self-play); `opponents` (callables
`(observation, mask, rng) -> action`, played here, never sent) take the other seats, which
rotate from game to game so the learner plays every position. A legal-action mask comes from the
observation's "action_mask" or the seat's `infos[agent]["action_mask"]` and travels as bits.
"""

import random

from seedrl import protocol as p
from seedrl.vector import Rows, action_spec_of, flat, observation_spec_of, takes_argument


def random_player(observation, mask, rng):
    """A legal action drawn uniformly (any action without a mask)."""
    legal = [a for a, ok in enumerate(mask) if ok] if mask is not None else None
    return rng.choice(legal) if legal else 0


class _Game:
    """One game and who sits where in it."""

    def __init__(self, game):
        self.game = game
        self.round = -1             # games played here, to rotate the seats
        self.agent_of_row = []      # the agent of each of the learner's seats
        self.moved, self.earned, self.total = {}, {}, {}
        self.over = False


class TurnBasedRows(Rows):
    """`num_games` games from `make_game(seed)` (or `make_game()`), the learner on every seat not
    taken by one of `opponents`."""

    def __init__(self, make_game, num_games, seed, opponents=(), observation_dtype=None):
        super().__init__()
        takes_seed = takes_argument(make_game)
        self.games = [_Game(make_game(seed * 1009 + g) if takes_seed else make_game())
                      for g in range(num_games)]
        probe = self.games[0].game
        self.agents = list(probe.possible_agents)
        if len(self.agents) < 2:
            raise ValueError(f"a turn-based game has 2 seats or more, this one "
                             f"{len(self.agents)}")
        self.opponents = list(opponents)
        if len(self.opponents) >= len(self.agents):
            raise ValueError(f"{len(self.opponents)} opponents leave no seat of "
                             f"{len(self.agents)} to the learner")
        self.seats = len(self.agents) - len(self.opponents)
        self.num_rows = num_games * self.seats
        space = probe.observation_space(self.agents[0])
        self._dict_observation = _is_mapping(space) and "observation" in _keys(space)
        observation = observation_spec_of(space["observation"] if self._dict_observation
                                          else space, observation_dtype)
        actions = action_spec_of(probe.action_space(self.agents[0]))
        if actions.kind != 0:
            raise ValueError(f"turn-based games take one discrete action a move, not {actions}")
        fields = ()
        if self._dict_observation and "action_mask" in _keys(space):
            fields = (p.FieldSpec(p.ACTION_MASK_FIELD, p.Tensor("u8", (actions.num_actions,))),)
        self.spec = p.StepSpec(observation, actions, fields)
        self._mask_bytes = actions.num_actions
        self._seed = seed
        self._rng = random.Random(seed)
        self.wins = self.draws = self.losses = 0   # the learner's seats against opponents
        self.scores = []                           # the last 1000 of them: 1, 0.5, 0

    def start(self):
        n = self.num_rows
        self.observations = [bytes(self.spec.observation.nbytes)] * n
        self.fields = [self._waiting_fields()] * n
        self.rewards, self.flags = [0.0] * n, [p.WAITING] * n
        for g in range(len(self.games)):
            self._new_game(g)
            self._emit(g)

    def advance(self, actions):
        for g, state in enumerate(self.games):
            if state.over:
                self._new_game(g)
            else:
                row = self._acting_row(g)
                state.game.step(int(actions[row]))
                self._collect(state)
            self._emit(g)

    # ---- one game ----

    def _new_game(self, g):
        state = self.games[g]
        state.round += 1
        self._seed += 1
        state.game.reset(seed=self._seed)
        k = len(self.agents)
        order = [self.agents[(i + state.round) % k] for i in range(k)]
        state.agent_of_row = order[:self.seats]
        state.opponent_of = {a: self.opponents[i] for i, a in enumerate(order[self.seats:])}
        state.moved = {a: False for a in self.agents}
        state.earned = {a: 0.0 for a in self.agents}
        state.total = {a: 0.0 for a in self.agents}
        state.over = False
        self._collect(state)

    def _collect(self, state):
        """After a move: the rewards it gave, the opponents' moves until a learner's seat is to
        act, and whether the game is over."""
        game = state.game
        while True:
            for a, r in (game.rewards or {}).items():
                state.earned[a] = state.earned.get(a, 0.0) + float(r)
                state.total[a] = state.total.get(a, 0.0) + float(r)
            live = list(game.agents)
            if not live or all(game.terminations.get(a) or game.truncations.get(a)
                               for a in live):
                state.over = True
                state.truncated = any(game.truncations.get(a) for a in live) and not any(
                    game.terminations.get(a) for a in live)
                return
            agent = game.agent_selection
            opponent = state.opponent_of.get(agent)
            if opponent is None:
                return
            observation, mask = self._view(game, agent)
            game.step(int(opponent(observation, mask, self._rng)))

    def _acting_row(self, g):
        state = self.games[g]
        return g * self.seats + state.agent_of_row.index(state.game.agent_selection)

    def _emit(self, g):
        """Every learner's row of game g for the next STEP."""
        state = self.games[g]
        acting = None if state.over else state.game.agent_selection
        for s, agent in enumerate(state.agent_of_row):
            row = g * self.seats + s
            if state.over and state.moved[agent]:
                flag = p.TRUNCATED if state.truncated else p.TERMINATED
            elif agent == acting:
                flag = 0 if state.moved[agent] else p.FIRST
            else:
                self.observations[row], self.fields[row] = self._waiting_view()
                self.rewards[row], self.flags[row] = 0.0, p.WAITING
                continue
            observation, mask = self._view(state.game, agent)
            self.observations[row] = p.tensor_bytes(observation, self.spec.observation,
                                                    "observation")
            self.fields[row] = self._fields(mask)
            self.rewards[row] = state.earned[agent] if flag != p.FIRST else 0.0
            self.flags[row] = flag
            state.earned[agent] = 0.0
            state.moved[agent] = True
        if state.over:
            self._score(state)

    def _score(self, state):
        for agent in state.agent_of_row:
            if state.moved[agent]:
                self.end_episode(state.total[agent])
        if not self.opponents:
            return
        for agent in state.agent_of_row:
            total = state.total[agent]
            score = 1.0 if total > 0 else 0.0 if total < 0 else 0.5
            self.wins += score == 1.0
            self.losses += score == 0.0
            self.draws += score == 0.5
            self.scores = (self.scores + [score])[-1000:]

    def _view(self, game, agent):
        seen = game.observe(agent)
        if self._dict_observation:
            mask = seen.get("action_mask")
            seen = seen["observation"]
        else:
            mask = (game.infos.get(agent) or {}).get("action_mask")
        return seen, (flat(mask) if mask is not None else None)

    def _fields(self, mask):
        if not self.spec.fields:
            return []
        return [bytes(1 if v else 0 for v in mask)]

    def _waiting_fields(self):
        return [bytes(self._mask_bytes)] if self.spec.fields else []

    def _waiting_view(self):
        return bytes(self.spec.observation.nbytes), self._waiting_fields()

    def summary(self):
        out = super().summary()
        if self.opponents:
            recent = self.scores
            out.update(wins=self.wins, draws=self.draws, losses=self.losses,
                       recent_games=len(recent),
                       recent_score=round(sum(recent) / len(recent), 4) if recent else None,
                       recent_losses=sum(1 for s in recent if s == 0.0))
        return out


def _is_mapping(space):
    return hasattr(space, "keys") or hasattr(space, "spaces")


def _keys(space):
    if hasattr(space, "spaces") and hasattr(space.spaces, "keys"):
        return list(space.spaces.keys())
    return list(space.keys())
