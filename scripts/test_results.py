#!/usr/bin/env python3
"""Tests of scripts/results.py (CTest: results_tool). Standard library only.

The statistics against independent references (the interquartile mean by its definition on
every ordering, the bootstrap against an exhaustive enumeration of the resamples), and the
registry's check on a small repository of its own: it passes when the blocks match, and fails,
naming what is wrong, when a figure in a document is changed, a raw file is missing, a block
names an unknown figure, a figure has no block, or a checked page has a table outside a block.
"""

import itertools
import json
import os
import random
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402


class Statistics(unittest.TestCase):
    def test_iqm_is_the_mean_of_the_middle_half(self):
        # n = 4k: the middle 2k; other n: int(n / 4) cut from each end, as scipy's trim_mean.
        cases = {(1.0,): 1.0, (1.0, 2.0, 3.0): 2.0, (1.0, 2.0, 3.0, 10.0): 2.5,
                 (0.0, 1.0, 2.0, 3.0, 100.0): 2.0, (5.0, 1.0, 9.0, 2.0, 7.0, 3.0, 8.0, 4.0): 4.75}
        rng = random.Random(3)
        for values, expected in cases.items():
            orders = itertools.permutations(values) if len(values) <= 5 else \
                (rng.sample(values, len(values)) for _ in range(200))
            for order in orders:
                self.assertAlmostEqual(results.iqm(list(order)), expected)

    def test_bootstrap_matches_the_exhaustive_distribution(self):
        # Three seeds have 27 equally likely resamples: the interval's ends must be the
        # quantiles of that exact distribution, within the resampling noise of 10,000 draws.
        values = [1.0, 4.0, 10.0]
        exact = sorted(results.iqm(list(r)) for r in itertools.product(values, repeat=3))
        lo, hi = results.bootstrap_interval(values)
        self.assertIn(lo, exact)
        self.assertIn(hi, exact)
        below_lo = sum(e < lo for e in exact) / len(exact)
        above_hi = sum(e > hi for e in exact) / len(exact)
        self.assertLessEqual(below_lo, 0.025 + 1e-9)
        self.assertLessEqual(above_hi, 0.025 + 1e-9)
        self.assertEqual(lo, 1.0)
        self.assertEqual(hi, 10.0)

    def test_bootstrap_is_deterministic_and_brackets_the_estimate(self):
        values = [32.0, 29.2, 37.4, 30.5, 35.1]
        a = results.bootstrap_interval(values)
        self.assertEqual(a, results.bootstrap_interval(values))
        self.assertLessEqual(a[0], results.iqm(values))
        self.assertGreaterEqual(a[1], results.iqm(values))
        self.assertGreaterEqual(a[0], min(values))
        self.assertLessEqual(a[1], max(values))

    def test_verdicts(self):
        self.assertEqual(results.verdict(28.0, (29.0, 37.0)), "met")
        self.assertEqual(results.verdict(28.0, (28.0, 37.0)), "met")
        self.assertEqual(results.verdict(30.0, (29.0, 37.0)), "level")
        self.assertEqual(results.verdict(38.0, (29.0, 37.0)), "below")
        self.assertIsNone(results.verdict(28.0, None))
        self.assertIsNone(results.verdict(None, (1.0, 2.0)))
        # Where lower is better (losses): the upper bound must reach down to the target.
        self.assertEqual(results.verdict(0.0, (0.0, 0.0), lower_is_better=True), "met")
        self.assertEqual(results.verdict(1.0, (0.0, 2.0), lower_is_better=True), "level")
        self.assertEqual(results.verdict(0.0, (0.5, 2.0), lower_is_better=True), "above")

    def test_dotted_members(self):
        record = {"as_first": {"losses": 3, "wins": 1}, "mean_return": 2.5}
        self.assertEqual(results.member(record, "as_first.losses"), 3)
        self.assertEqual(results.member(record, "mean_return"), 2.5)
        self.assertIsNone(results.member(record, "as_first.draws"))
        self.assertIsNone(results.member(record, "mean_return.x"))

    def test_seed_lists(self):
        self.assertEqual(results.seed_list([1, 2, 3]), "1-3")
        self.assertEqual(results.seed_list([101, 103, 102, 105]), "101-103, 105")
        self.assertEqual(results.seed_list([7]), "7")


FIGURE = {
    "id": "toy", "title": "Toy on two games", "program": "toy", "group_name": "game",
    "command": "toy --game {group} --seed {seed}", "at_defaults": True,
    "commit": "abc1234", "machine": "a test", "date": "2026-12-02",
    "seeds": [1, 2, 3, 4, 5], "seed_role": "reporting",
    "metric": "mean_return", "metric_name": "the mean return", "digits": 2,
    "groups": [{"name": "a", "raw": "docs/data/toy/a_{seed}.json", "target": 2.0,
                "target_from": "a paper"},
               {"name": "b", "raw": "docs/data/toy/b_{seed}.json"}],
}


class Registry(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="seedrl-results-")
        os.makedirs(os.path.join(self.root, "docs", "data", "toy"))
        for game, base in (("a", 2.0), ("b", 10.0)):
            for seed in range(1, 6):
                self.write(f"docs/data/toy/{game}_{seed}.json",
                           '{"progress":1}\n' + json.dumps({"mean_return": base + seed / 4}) + "\n")
        self.registry = {"figures": [dict(FIGURE)], "checked_pages": ["docs/results.md"]}
        self.save_registry()
        self.write("README.md", "# toy\n\nNo figures here.\n")
        self.write("docs/results.md", "# Results\n\n<!-- results:toy -->\n<!-- /results:toy -->\n")
        self.assertEqual(results.render(self.root), ["docs/results.md"])

    def tearDown(self):
        shutil.rmtree(self.root)

    def write(self, relpath, text):
        with open(os.path.join(self.root, relpath), "w", encoding="utf-8") as f:
            f.write(text)

    def read(self, relpath):
        with open(os.path.join(self.root, relpath), encoding="utf-8") as f:
            return f.read()

    def save_registry(self):
        self.write("docs/data/registry.json", json.dumps(self.registry))

    def test_a_rendered_page_passes(self):
        self.assertEqual(results.check(self.root), [])
        page = self.read("docs/results.md")
        # Seed 1 of game a: 2 + 1/4, linked relative to docs/.
        self.assertIn("[2.25](data/toy/a_1.json)", page)
        self.assertIn("| a |", page)
        self.assertIn("reporting seeds", page)
        # a: 2.25 .. 3.25, IQM 2.75: its interval is above the target of 2.
        self.assertIn("| met |", page)

    def test_a_changed_figure_fails(self):
        page = self.read("docs/results.md")
        self.write("docs/results.md", page.replace("[2.25]", "[2.35]"))
        problems = results.check(self.root)
        self.assertEqual(len(problems), 1)
        self.assertIn("the block 'toy' differs", problems[0])
        self.assertEqual(results.render(self.root), ["docs/results.md"])
        self.assertEqual(results.check(self.root), [])

    def test_changed_raw_data_fails_until_rendered(self):
        self.write("docs/data/toy/b_3.json", json.dumps({"mean_return": 99.0}) + "\n")
        self.assertIn("differs", results.check(self.root)[0])

    def test_a_missing_raw_file_is_named(self):
        os.remove(os.path.join(self.root, "docs/data/toy/b_4.json"))
        problems = results.check(self.root)
        self.assertEqual(len(problems), 1)
        self.assertIn("docs/data/toy/b_4.json", problems[0])

    def test_a_raw_file_without_the_metric_is_named(self):
        self.write("docs/data/toy/a_2.json", '{"frames": 10}\n')
        problems = results.check(self.root)
        self.assertIn("docs/data/toy/a_2.json: no JSON line with 'mean_return'", problems[0])

    def test_an_unknown_block_and_an_unshown_figure_fail(self):
        self.write("README.md", "<!-- results:nothing -->\n<!-- /results:nothing -->\n")
        self.write("docs/results.md", "# Results\n")
        problems = results.check(self.root)
        self.assertTrue(any("'nothing', which the registry does not list" in p for p in problems))
        self.assertTrue(any("figure 'toy' is shown in no document" in p for p in problems))

    def test_a_table_outside_a_block_on_a_checked_page_fails(self):
        page = self.read("docs/results.md")
        self.write("docs/results.md", page + "\n| game | return |\n|---|---|\n| a | 3.1 |\n")
        problems = results.check(self.root)
        self.assertEqual(len(problems), 1)
        self.assertIn("docs/results.md:", problems[0])
        self.assertIn("a table of figures outside a results block", problems[0])
        # Pages that are not checked may keep their tables (the history, the benchmarks).
        self.write("README.md", "| game | return |\n|---|---|\n| a | 3.1 |\n")
        self.assertEqual(len(results.check(self.root)), 1)

    def test_a_no_figures_table_is_allowed_on_a_checked_page(self):
        page = self.read("docs/results.md")
        self.write("docs/results.md", page + "\n<!-- no-figures -->\n| path | what |\n|---|---|\n"
                   "| src/ | the 2 libraries |\n\n| after | 3.5 |\n")
        problems = results.check(self.root)
        self.assertEqual(len(problems), 1)  # the second table, not the exempt one
        self.assertIn(f"docs/results.md:{len(page.splitlines()) + 7}:", problems[0])

    def test_a_headline_row_shows_its_figure(self):
        self.registry["headlines"] = [{"id": "front", "details": "docs/results.md", "rows": [
            {"figure": "toy", "group": "a", "task": "Toy A", "agent": "the toy"}]}]
        self.save_registry()
        self.write("README.md", "<!-- results:front -->\n<!-- /results:front -->\n")
        self.assertEqual(results.render(self.root), ["README.md"])
        self.assertEqual(results.check(self.root), [])
        readme = self.read("README.md")
        self.assertIn("| Toy A | the toy | 2.75 [", readme)
        self.assertIn("1-5, reporting: [2.25](docs/data/toy/a_1.json)", readme)
        self.assertIn("| 2 (a paper) | met |", readme)
        self.registry["headlines"][0]["rows"][0]["group"] = "c"
        self.save_registry()
        with self.assertRaises(results.RegistryError) as raised:
            results.check(self.root)
        self.assertIn("figure 'toy' has no group 'c'", str(raised.exception))

    def test_bad_entries_are_refused_by_name(self):
        bad = {
            "seed_role": ("seed_role", "looked"),
            "seeds": ("seeds", [1, 1]),
            "at_defaults": ("extra_flags", None),
            "raw": ("raw", "docs/data/toy/a.json"),
            "target_from": ("target", 3.0),
        }
        for what, (key, value) in bad.items():
            figure = json.loads(json.dumps(FIGURE))
            if key == "extra_flags":
                figure["at_defaults"] = False
            elif key == "raw":
                figure["groups"][0]["raw"] = value
            elif key == "target":
                figure["groups"][1]["target"] = value
            else:
                figure[key] = value
            self.registry["figures"] = [figure]
            self.save_registry()
            with self.assertRaises(results.RegistryError, msg=what) as raised:
                results.check(self.root)
            self.assertIn("registry figure 'toy'", str(raised.exception), what)

    def test_fewer_than_five_seeds_give_no_interval(self):
        self.registry["figures"][0]["seeds"] = [1, 2, 3]
        self.save_registry()
        results.render(self.root)
        page = self.read("docs/results.md")
        self.assertIn("(no interval: 3 seeds)", page)
        self.assertIn("| unconfirmed |", page)

    def test_one_seed_is_named_in_the_singular(self):
        self.registry["figures"][0]["seeds"] = [2]
        self.save_registry()
        results.render(self.root)
        page = self.read("docs/results.md")
        self.assertIn("(no interval: 1 seed)", page)
        self.assertIn("Seed 2: a reporting seed (not looked at while", page)


class Run(unittest.TestCase):
    """results.py run: a figure's missing raw files made by its command, through a program that
    stands in for an example (a shell script: progress on stderr, the JSON line on stdout)."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="seedrl-results-run-")
        self.build = os.path.join(self.root, "build")
        os.makedirs(os.path.join(self.build, "examples"))
        self.program = os.path.join(self.build, "examples", "toy")
        with open(self.program, "w", encoding="utf-8") as f:
            # toy --game G --seed S: fails for game 'bad', else returns S + 0.5.
            f.write('#!/bin/sh\necho "toy: starting $*" >&2\n'
                    '[ "$2" = bad ] && { echo "toy: no such game" >&2; exit 3; }\n'
                    'echo \'{"note":"not the result"}\'\n'
                    'echo "{\\"env\\":\\"$2\\",\\"mean_return\\":$4.5}"\n')
        os.chmod(self.program, 0o755)
        self.figure = json.loads(json.dumps(FIGURE))
        self.figure["seeds"] = [1, 2]
        self.logs = os.path.join(self.root, "logs")

    def tearDown(self):
        shutil.rmtree(self.root)

    def raw(self, game, seed):
        return os.path.join(self.root, "docs", "data", "toy", f"{game}_{seed}.json")

    def test_missing_raw_files_are_made_and_others_kept(self):
        os.makedirs(os.path.dirname(self.raw("a", 1)))
        with open(self.raw("a", 1), "w", encoding="utf-8") as f:
            f.write('{"mean_return": 7.0}\n')
        import results_run
        self.assertEqual(results_run.run(self.root, self.figure, self.build, jobs=2,
                                         logs=self.logs), 0)
        self.assertEqual(results.read_metric(self.root, "docs/data/toy/a_1.json",
                                             "mean_return"), 7.0)  # kept
        self.assertEqual(results.read_metric(self.root, "docs/data/toy/b_2.json",
                                             "mean_return"), 2.5)
        with open(os.path.join(self.logs, "b_2.json.log"), encoding="utf-8") as f:
            self.assertIn("toy: starting --game b --seed 2", f.read())
        self.assertEqual(results_run.run(self.root, self.figure, self.build, force=True,
                                         logs=self.logs), 0)
        self.assertEqual(results.read_metric(self.root, "docs/data/toy/a_1.json",
                                             "mean_return"), 1.5)  # made again

    def test_a_failed_run_leaves_no_raw_file(self):
        import results_run
        self.figure["groups"][1]["name"] = "bad"
        self.assertEqual(results_run.run(self.root, self.figure, self.build, logs=self.logs), 2)
        self.assertTrue(os.path.exists(self.raw("a", 2)))
        self.assertFalse(os.path.exists(self.raw("b", 1)))
        self.assertEqual([f for f in os.listdir(os.path.dirname(self.raw("a", 1)))
                          if f.startswith(".")], [])

    def test_an_ablation_runs_each_settings_own_command(self):
        # One step a seed; the group "bad" runs its own command, so it does not fail.
        self.figure["groups"][1].update(name="bad", program="toy",
                                        command="toy --game c --seed {seed}")
        import results_run
        self.assertEqual(results_run.run(self.root, self.figure, self.build, logs=self.logs), 0)
        with open(self.raw("b", 2), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["env"], "c")
        self.assertEqual(results.read_metric(self.root, "docs/data/toy/a_2.json",
                                             "mean_return"), 2.5)

    def test_a_chain_trains_then_evaluates_each_seed(self):
        # The figure's command trains into {workdir}; a group's own command reads it; groups
        # without one read the training line. A seed with a file missing runs its whole chain.
        evaluate = os.path.join(self.build, "examples", "toy_eval")
        with open(evaluate, "w", encoding="utf-8") as f:
            # toy_eval --from DIR: reads what toy left there.
            f.write('#!/bin/sh\nv=$(cat "$2/made")\n'
                    'echo "{\\"as_first\\":{\\"losses\\":$v},\\"as_second\\":{\\"losses\\":1}}"\n')
        os.chmod(evaluate, 0o755)
        with open(self.program, "a", encoding="utf-8") as f:
            f.write('[ -n "$6" ] && { mkdir -p "$6"; echo "$4" > "$6/made"; }\n')
        self.figure.update(command="toy --game g --seed {seed} --logdir {workdir}",
                           raw="docs/data/toy/train_{seed}.json")
        first = {"name": "first", "program": "toy_eval", "command": "toy_eval --from {workdir}",
                 "raw": "docs/data/toy/eval_{seed}.json", "metric": "as_first.losses",
                 "better": "lower", "target": 0, "target_from": "a rule"}
        second = dict(first, name="second", metric="as_second.losses")
        trained = {"name": "trained", "raw": "docs/data/toy/train_{seed}.json"}
        self.figure["groups"] = [first, second, trained]
        import results_run
        chains = results_run.planned_runs(self.root, self.figure, False, "/logs")
        self.assertEqual([[(p, r) for p, _, r in c] for c in chains],
                         [[("toy", "docs/data/toy/train_1.json"),
                           ("toy_eval", "docs/data/toy/eval_1.json")],
                          [("toy", "docs/data/toy/train_2.json"),
                           ("toy_eval", "docs/data/toy/eval_2.json")]])
        self.assertIn("/logs/toy-2", chains[1][1][1])
        self.assertEqual(results_run.run(self.root, self.figure, self.build, logs=self.logs), 0)
        self.assertEqual(results.read_metric(self.root, "docs/data/toy/eval_2.json",
                                             "as_first.losses"), 2.0)
        self.assertEqual(results.read_metric(self.root, "docs/data/toy/train_1.json",
                                             "mean_return"), 1.5)
        # A run again starts from an empty {workdir}: what a run left there would resume it.
        with open(os.path.join(self.logs, "toy-2", "stale"), "w", encoding="utf-8") as f:
            f.write("a checkpoint\n")
        self.assertEqual(results_run.run(self.root, self.figure, self.build, force=True,
                                         logs=self.logs), 0)
        self.assertFalse(os.path.exists(os.path.join(self.logs, "toy-2", "stale")))
        summary = results.summarize(self.root, self.figure, second)
        self.assertEqual(summary["values"], [1.0, 1.0])
        os.remove(self.raw("eval", 1))
        self.assertEqual(len(results_run.planned_runs(self.root, self.figure, False)), 1)

    def test_a_missing_program_is_named(self):
        import results_run
        self.figure["program"] = "absent"
        with self.assertRaises(FileNotFoundError) as raised:
            results_run.run(self.root, self.figure, self.build, logs=self.logs)
        self.assertIn("no program 'absent'", str(raised.exception))


if __name__ == "__main__":
    unittest.main(verbosity=1)
