"""Pricing with the default config (POLY_CONFIG unset: config/default.ini)."""
import unittest

import money
import pricing


class DefaultPricingTest(unittest.TestCase):
    def setUp(self):
        self.config = pricing.load_config()

    def test_reads_the_default_config(self):
        self.assertEqual(self.config["currency"], "USD")
        self.assertEqual(self.config["tax_percent"], 8)

    def test_small_order_pays_tax_only(self):
        # 2 x 5.00 = 10.00, + 8% tax
        self.assertEqual(pricing.order_total([(500, 2)], self.config), 1080)

    def test_bulk_discount_from_the_threshold_on(self):
        self.assertEqual(pricing.line_total(100, 9, self.config), 900)
        # 10 x 1.00 = 10.00, less 5% = 9.50
        self.assertEqual(pricing.line_total(100, 10, self.config), 950)

    def test_formatted_total(self):
        total = pricing.order_total([(100, 10)], self.config)
        self.assertEqual(money.format_cents(total, self.config["currency"]), "USD 10.26")


if __name__ == "__main__":
    unittest.main()
