"""Shipping weights: imports units only, so a change to money.py, pricing
or the configs never selects it."""
import unittest

import units


class UnitsTest(unittest.TestCase):
    def test_parse_weight(self):
        self.assertEqual(units.parse_weight("1.5kg"), 1500)
        self.assertEqual(units.parse_weight("250g"), 250)
        self.assertEqual(units.parse_weight("2lb"), 908)
        self.assertEqual(units.parse_weight(" 3 OZ "), 84)

    def test_no_unit(self):
        with self.assertRaises(ValueError):
            units.parse_weight("12")

    def test_shipping_band(self):
        self.assertEqual(units.shipping_band(100), "letter")
        self.assertEqual(units.shipping_band(101), "parcel")
        self.assertEqual(units.shipping_band(20000), "parcel")
        self.assertEqual(units.shipping_band(20001), "freight")


if __name__ == "__main__":
    unittest.main()
