#!/usr/bin/env python3
"""Tests of scripts/curve_summary.py (CTest: curve_summary_tool). Standard library only.

The largest fall against a brute force over every pair of points, the first crossing against a
plain scan, and the command line on files of its own: rows without a finite metric skipped, the
columns read at the peak, the low and the end, a bad file named while the good ones are still read.
"""

import gzip
import io
import json
import os
import random
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import curve_summary  # noqa: E402


def brute_drawdown(values):
    best = 0.0
    for i in range(len(values)):
        for j in range(i + 1, len(values)):
            best = max(best, values[i] - values[j])
    return best


class Drawdown(unittest.TestCase):
    def test_matches_brute_force(self):
        rng = random.Random(7)
        for _ in range(500):
            values = [rng.choice([rng.uniform(-5, 5), float(rng.randint(0, 3))])
                      for _ in range(rng.randint(1, 12))]
            fall, hi, lo = curve_summary.max_drawdown(values)
            self.assertAlmostEqual(fall, brute_drawdown(values))
            if fall > 0:
                self.assertLess(hi, lo)
                self.assertAlmostEqual(values[hi] - values[lo], fall)
                self.assertEqual(values[hi], max(values[: hi + 1]))
            else:
                self.assertEqual((hi, lo), (None, None))

    def test_rising_curve_never_falls(self):
        self.assertEqual(curve_summary.max_drawdown([1.0, 2.0, 2.0, 5.0]), (0.0, None, None))


class Summary(unittest.TestCase):
    def write(self, text):
        fd, path = tempfile.mkstemp(suffix=".csv")
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        self.addCleanup(os.remove, path)
        return path

    def run_main(self, args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = curve_summary.main(args)
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        return status, lines, err.getvalue()

    def test_a_curve(self):
        path = self.write(
            "step,mean_return,alpha\n"
            "10,nan,1\n"          # before the first episode: skipped
            "20,100,0.5\n"
            "30,600,0.2\n"
            "40,300,0.3\n"        # the low after the largest fall (300)
            "50,1200,0.1\n"
            "60,1100,0.05\n")
        status, lines, err = self.run_main(["--reach=500,600,1000,5000", "--at=alpha", path])
        self.assertEqual((status, err), (0, ""))
        (s,) = lines
        self.assertEqual(s["rows"], 5)
        self.assertEqual((s["final"], s["final_step"]), (1100.0, 60))
        self.assertEqual((s["peak"], s["peak_step"]), (1200.0, 50))
        self.assertEqual((s["max_drop"], s["drop_from"], s["drop_to"]), (300.0, 30, 40))
        self.assertEqual(s["reach"], {"500": 30, "600": 30, "1000": 50, "5000": None})
        self.assertEqual(s["at_peak"], {"alpha": 0.1})
        self.assertEqual(s["at_high"], {"alpha": 0.2})
        self.assertEqual(s["at_low"], {"alpha": 0.3})
        self.assertEqual(s["at_end"], {"alpha": 0.05})

    def test_gzip_is_read_as_the_plain_file(self):
        text = "step,mean_return,alpha\n1,10,0.5\n2,4,0.4\n3,30,0.3\n"
        plain = self.write(text)
        fd, packed = tempfile.mkstemp(suffix=".csv.gz")
        os.close(fd)
        self.addCleanup(os.remove, packed)
        with gzip.open(packed, "wt") as fh:
            fh.write(text)
        status, lines, _ = self.run_main([plain, packed])
        self.assertEqual(status, 0)
        for line in lines:
            del line["file"]
        self.assertEqual(lines[0], lines[1])
        self.assertEqual(lines[0]["max_drop"], 6.0)
        self.assertEqual(lines[0]["at_high"]["alpha"], 0.5)
        self.assertEqual(lines[0]["at_low"]["alpha"], 0.4)
        self.assertIsNone(lines[0]["at_low"]["mean_q"])  # a column the file lacks reads as null
        # A truncated archive is an error naming it, not a crash.
        with open(packed, "rb") as fh:
            data = fh.read()
        with open(packed, "wb") as fh:
            fh.write(data[: len(data) // 2])
        status, _, err = self.run_main([packed])
        self.assertEqual(status, 1)
        self.assertIn(packed, err)

    def test_bad_files_are_named_and_the_good_ones_read(self):
        good = self.write("step,mean_return\n1,5\n")
        no_column = self.write("step,return\n1,5\n")
        no_value = self.write("step,mean_return\n1,nan\n2,inf\n")
        missing = good + ".absent"
        status, lines, err = self.run_main(["--at=", no_column, good, no_value, missing])
        self.assertEqual(status, 1)
        self.assertEqual([line["file"] for line in lines], [good])
        self.assertNotIn("at_end", lines[0])
        for path in (no_column, no_value, missing):
            self.assertIn(path, err)
        self.assertIn("no finite value of 'mean_return'", err)

    def test_usage_errors(self):
        self.assertEqual(self.run_main([])[0], 2)
        status, _, err = self.run_main(["--threshold=3", "x.csv"])
        self.assertEqual(status, 2)
        self.assertIn("--threshold=3", err)


if __name__ == "__main__":
    unittest.main()
