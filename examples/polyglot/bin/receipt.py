#!/usr/bin/python3
"""receipt ORDER_FILE: prints the receipt of an order.

An order file has one item per line: name|unit price|quantity.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import money  # noqa: E402
import pricing  # noqa: E402
import report  # noqa: E402


def main(argv):
    if len(argv) != 2:
        print("usage: receipt ORDER_FILE", file=sys.stderr)
        return 2
    config = pricing.load_config()
    items, lines = [], []
    with open(argv[1]) as f:
        for row in f:
            if not row.strip() or row.startswith("#"):
                continue
            name, unit, quantity = row.strip().split("|")
            unit_cents, qty = money.to_cents(unit), int(quantity)
            items.append((f"{qty} {name}", pricing.line_total(unit_cents, qty, config)))
            lines.append((unit_cents, qty))
    total = pricing.order_total(lines, config)
    sys.stdout.write(report.receipt(items, total, config["currency"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
