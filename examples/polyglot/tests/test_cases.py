"""Table-driven pricing: every fixtures/cases/*.json is one case.

The cases are found with glob.glob, which lists the directory: ste records
a `listing` dependency on fixtures/cases, so adding or removing a case
selects this test (and editing one selects it through its content).
"""
import glob
import json
import unittest

import pricing


class PricingCasesTest(unittest.TestCase):
    def test_every_case(self):
        paths = sorted(glob.glob("fixtures/cases/*.json"))
        self.assertGreater(len(paths), 0, "no fixtures/cases/*.json found")
        config = pricing.load_config("config/default.ini")
        for path in paths:
            with open(path) as f:
                case = json.load(f)
            lines = [tuple(line) for line in case["lines"]]
            with self.subTest(case=path, name=case["name"]):
                self.assertEqual(pricing.order_total(lines, config), case["total"])


if __name__ == "__main__":
    unittest.main()
