"""Plain-text receipts."""
from money import format_cents

WIDTH = 32


def receipt_line(name, amount_cents, currency):
    """'coffee ........... USD 4.50', exactly WIDTH characters."""
    amount = format_cents(amount_cents, currency)
    dots = WIDTH - len(name) - len(amount) - 2
    if dots < 1:
        raise ValueError(f"name too long for a receipt: {name!r}")
    return f"{name} {'.' * dots} {amount}"


def receipt(items, total_cents, currency):
    """items: [(name, amount_cents)]. Lines, a rule, the total."""
    lines = [receipt_line(name, cents, currency) for name, cents in items]
    lines.append("-" * WIDTH)
    lines.append(receipt_line("TOTAL", total_cents, currency))
    return "\n".join(lines) + "\n"
