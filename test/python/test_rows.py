#!/usr/bin/env python3
"""What the Python actor sends for each kind of environment (seedrl.players, seedrl.vector), row
by row, without a learner: the waiting seats of a turn-based game (who is waiting when, the
first move's flag and reward, every seat's last view when the game ends, the seats rotating
against an opponent, the masks), and a vector environment's next-step autoreset mapped to the
protocol's flags (with numpy only); and the tic-tac-toe example's results against a check of
every line. Standard library otherwise.
"""

import os
import random
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "examples"))
from seedrl import protocol as p  # noqa: E402
from seedrl.players import TurnBasedRows, random_player  # noqa: E402
import tictactoe  # noqa: E402

W, F, T = p.WAITING, p.FIRST, p.TERMINATED


def legal(rows, row):
    return [a for a, ok in enumerate(rows.fields[row][0]) if ok]


class Players(unittest.TestCase):
    def test_spec_comes_from_the_dict_observation(self):
        rows = TurnBasedRows(tictactoe.make, 3, seed=1, observation_dtype="f32")
        self.assertEqual(rows.spec, p.StepSpec(p.Tensor("f32", (3, 3, 2)), p.ActionSpec.discrete(9),
                                               (p.FieldSpec("action_mask",
                                                            p.Tensor("u8", (9,))),)))
        self.assertEqual(rows.num_rows, 6)
        # PettingZoo's int8 planes are i32 on the wire unless told otherwise.
        self.assertEqual(TurnBasedRows(tictactoe.make, 1, seed=1).spec.observation.dtype, "i32")

    def test_self_play_a_whole_game(self):
        rows = TurnBasedRows(tictactoe.make, 1, seed=1)
        rows.start()
        self.assertEqual(rows.flags, [F, W])  # player_0 moves first; player_1 waits
        self.assertEqual(rows.fields[1], [bytes(9)])  # a waiting seat's mask may allow nothing
        # player_0 takes 0, 1, 2 (a row); player_1 takes 3, 4.
        for action, expected in [(0, [W, F]), (3, [0, W]), (1, [W, 0]), (4, [0, W])]:
            acting = rows.flags.index(0) if 0 in rows.flags else rows.flags.index(F)
            actions = [0, 0]
            actions[acting] = action
            rows.advance(actions)
            self.assertEqual(rows.flags, expected)
        self.assertEqual(rows.rewards, [0.0, 0.0])
        rows.advance([2, 0])  # player_0 completes its row: both seats end
        self.assertEqual(rows.flags, [T, T])
        self.assertEqual(rows.rewards, [1.0, -1.0])
        # Each seat's last view: its own marks in plane 0.
        board0 = p.Tensor("i32", (3, 3, 2))
        self.assertEqual(rows.observations[0],
                         p.tensor_bytes([1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0],
                                        board0))
        self.assertEqual(rows.episodes, 2)
        self.assertEqual(rows.returns, [1.0, -1.0])
        rows.advance([5, 5])  # the answers to the ending rows are not played: a new game
        self.assertEqual(sorted(rows.flags), [F, W])
        self.assertEqual(rows.fields[rows.flags.index(F)], [bytes([1] * 9)])

    def test_against_an_opponent_the_seats_rotate_and_are_scored(self):
        rows = TurnBasedRows(tictactoe.make, 4, seed=3, opponents=[random_player])
        self.assertEqual(rows.num_rows, 4)
        rows.start()
        # Game g's first round: the learner is player_0 (round 0) and moves first.
        self.assertEqual(rows.flags, [F] * 4)
        rng = random.Random(0)
        firsts = []
        for _ in range(400):
            firsts += [rows.games[g].agent_of_row[0] for g in range(4) if rows.flags[g] == F]
            rows.advance([rng.choice(legal(rows, r)) if rows.flags[r] != T else 0
                          for r in range(4)])
            for r in range(4):  # nobody waits: the opponent moves here, between STEPs
                self.assertNotEqual(rows.flags[r], W)
        self.assertIn("player_0", firsts)
        self.assertIn("player_1", firsts)
        summary = rows.summary()
        self.assertEqual(summary["wins"] + summary["draws"] + summary["losses"], rows.episodes)
        self.assertGreater(rows.episodes, 50)

    def test_games_of_one_seat_or_only_opponents_are_refused(self):
        with self.assertRaises(ValueError):
            TurnBasedRows(tictactoe.make, 1, seed=1, opponents=[random_player, random_player])


class Vector(unittest.TestCase):
    def setUp(self):
        try:
            import numpy  # noqa: F401
        except ImportError:
            self.skipTest("numpy is not installed")
        import cartpole_vector
        from seedrl.vector import VectorEnvRows
        self.rows = VectorEnvRows(cartpole_vector.make(3, seed=1), seed=1)

    def test_next_step_autoreset_becomes_the_protocols_flags(self):
        rows = self.rows
        self.assertEqual(rows.spec, p.StepSpec(p.Tensor("f32", (4,)), p.ActionSpec.discrete(2)))
        rows.start()
        self.assertEqual(list(rows.flags), [F] * 3)
        self.assertEqual(len(b"".join(rows.observations)), 3 * 16)
        ended_at, steps = None, 0
        while ended_at is None:
            rows.advance([1, 1, 0])  # always push: the pole falls within ~10 steps
            steps += 1
            flags = list(rows.flags)
            if flags[0] == T:
                ended_at = steps
                self.assertEqual(rows.rewards[0], 1.0)
        rows.advance([0, 0, 0])
        self.assertEqual(list(rows.flags)[0], F)  # the step after the end starts an episode
        self.assertEqual(rows.rewards[0], 0.0)
        self.assertIn(float(ended_at), rows.returns)  # every step of it rewarded 1


class TicTacToeExample(unittest.TestCase):
    def test_results_against_every_line_checked(self):
        """python/examples/tictactoe.py checks only the lines through the square just taken:
        its results over random games against all eight lines and a full board, move by move."""
        rng = random.Random(11)
        lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8),
                 (2, 4, 6)]
        game, outcomes = tictactoe.make(), set()
        for _ in range(3000):
            game.reset()
            marks = [None] * 9
            while not any(game.terminations.values()):
                me = game.possible_agents.index(game.agent_selection)
                square = rng.choice([i for i in range(9) if marks[i] is None])
                game.step(square)
                marks[square] = me
                won = any(marks[a] == marks[b] == marks[c] == me for a, b, c in lines)
                over = won or None not in marks
                self.assertEqual(all(game.terminations.values()), over, marks)
                expected = [0, 0] if not won else [1, -1] if me == 0 else [-1, 1]
                self.assertEqual([game.rewards[a] for a in game.possible_agents], expected,
                                 marks)
            outcomes.add(tuple(game.rewards[a] for a in game.possible_agents))
        self.assertEqual(outcomes, {(1, -1), (-1, 1), (0, 0)})


if __name__ == "__main__":
    unittest.main(verbosity=1)
