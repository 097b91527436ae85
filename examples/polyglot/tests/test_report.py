"""Receipts: report.py, which formats amounts with money.py."""
import unittest

import report


class ReportTest(unittest.TestCase):
    def test_line_is_padded_with_dots(self):
        line = report.receipt_line("tea", 450, "USD")
        self.assertEqual(line, "tea ................... USD 4.50")
        self.assertEqual(len(line), report.WIDTH)

    def test_long_name_is_refused(self):
        with self.assertRaises(ValueError):
            report.receipt_line("x" * 30, 100, "USD")

    def test_receipt_ends_with_the_total(self):
        text = report.receipt([("tea", 450)], 486, "USD")
        self.assertEqual(text.splitlines()[-1], "TOTAL ................. USD 4.86")


if __name__ == "__main__":
    unittest.main()
