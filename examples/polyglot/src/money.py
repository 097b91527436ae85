"""Money helpers, in integer cents. Shared by pricing, report and the CLI.

Several tests import this module and some do not: a change here selects
exactly the tests whose processes opened it.
"""


def to_cents(text):
    """'12.34' -> 1234, '7' -> 700, '0.5' -> 50."""
    whole, _, frac = text.partition(".")
    return int(whole) * 100 + int((frac + "00")[:2])


def format_cents(cents, currency="USD"):
    """1234 -> 'USD 12.34', -5 -> '-USD 0.05'."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{currency} {cents // 100}.{cents % 100:02d}"


def round_half_up(numerator, denominator):
    """numerator / denominator rounded to an integer, halves up (>= 0)."""
    return (2 * numerator + denominator) // (2 * denominator)


def percent_of(cents, percent):
    """percent % of an amount, rounded half up: percent_of(950, 8) == 76."""
    return round_half_up(cents * percent, 100)
