"""Order pricing: line totals, a bulk discount, and tax.

The rates come from a config file chosen by the environment: $POLY_CONFIG,
else config/default.ini. Tests that use different files depend on
different files, and ste records whichever one each test opened.
"""
import configparser
import os

from money import percent_of


def config_path():
    return os.environ.get("POLY_CONFIG", "config/default.ini")


def load_config(path=None):
    parser = configparser.ConfigParser()
    with open(path or config_path()) as f:
        parser.read_file(f)
    section = parser["pricing"]
    return {
        "currency": section["currency"],
        "tax_percent": section.getint("tax_percent"),
        "bulk_threshold": section.getint("bulk_threshold"),
        "bulk_discount_percent": section.getint("bulk_discount_percent"),
    }


def line_total(unit_cents, quantity, config):
    """unit price x quantity, less the bulk discount from the threshold on."""
    total = unit_cents * quantity
    if quantity >= config["bulk_threshold"]:
        total -= percent_of(total, config["bulk_discount_percent"])
    return total


def order_total(lines, config):
    """lines: [(unit_cents, quantity)]. The total with tax, in cents."""
    subtotal = sum(line_total(unit, qty, config) for unit, qty in lines)
    return subtotal + percent_of(subtotal, config["tax_percent"])
