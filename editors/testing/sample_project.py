"""The sample project the editors' full-turn tests work on: a module with two bugs the mock model
fixes, shared by the Helix and Neovim suites."""

CALC = '''def mean(values):
    total = 0
    for v in values:
        total += v
    return total / (len(values) - 1)


def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return lo
    return x
'''
FIXED = CALC.replace("(len(values) - 1)", "len(values)").replace("        return lo\n    return x", "        return hi\n    return x")
# Its tests, which the full-turn tests have the agent run.
TESTS = '''import unittest

from calc import clamp, mean


class CalcTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3]), 2)

    def test_clamp(self):
        self.assertEqual(clamp(5, 0, 3), 3)
'''
