"""Pricing with the EU config: run_test.sh sets POLY_CONFIG=config/eu.ini
for this file, so it reads eu.ini and never default.ini."""
import os
import unittest

import pricing


class EuPricingTest(unittest.TestCase):
    def setUp(self):
        self.assertEqual(os.environ.get("POLY_CONFIG"), "config/eu.ini",
                         "run this test with run_test.sh")
        self.config = pricing.load_config()

    def test_reads_the_eu_config(self):
        self.assertEqual(self.config["currency"], "EUR")
        self.assertEqual(self.config["tax_percent"], 20)

    def test_no_discount_below_twelve(self):
        # 11 x 2.00 = 22.00, + 20% tax
        self.assertEqual(pricing.order_total([(200, 11)], self.config), 2640)

    def test_bulk_order(self):
        # 12 x 2.00 = 24.00, less 10% = 21.60, + 20% tax = 25.92
        self.assertEqual(pricing.order_total([(200, 12)], self.config), 2592)


if __name__ == "__main__":
    unittest.main()
