"""money.py alone: parsing, formatting, rounding."""
import unittest

import money


class MoneyTest(unittest.TestCase):
    def test_to_cents(self):
        self.assertEqual(money.to_cents("12.34"), 1234)
        self.assertEqual(money.to_cents("7"), 700)
        self.assertEqual(money.to_cents("0.5"), 50)

    def test_format_cents(self):
        self.assertEqual(money.format_cents(1234), "USD 12.34")
        self.assertEqual(money.format_cents(5, "EUR"), "EUR 0.05")
        self.assertEqual(money.format_cents(-250), "-USD 2.50")

    def test_round_half_up(self):
        self.assertEqual(money.round_half_up(5, 2), 3)
        self.assertEqual(money.round_half_up(7, 2), 4)
        self.assertEqual(money.round_half_up(9, 3), 3)

    def test_percent_of(self):
        self.assertEqual(money.percent_of(950, 8), 76)
        self.assertEqual(money.percent_of(1000, 20), 200)


if __name__ == "__main__":
    unittest.main()
