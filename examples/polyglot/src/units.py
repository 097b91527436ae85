"""Shipping weights. Needs nothing else from the product (no money here)."""

GRAMS_PER_UNIT = {"g": 1, "kg": 1000, "lb": 454, "oz": 28}


def parse_weight(text):
    """'1.5kg' -> 1500, '250g' -> 250, '2lb' -> 908 (grams, rounded)."""
    text = text.strip().lower()
    for unit in sorted(GRAMS_PER_UNIT, key=len, reverse=True):
        if text.endswith(unit):
            number = float(text[: -len(unit)])
            return round(number * GRAMS_PER_UNIT[unit])
    raise ValueError(f"no unit in weight {text!r}")


def shipping_band(grams):
    """letter up to 100 g, parcel up to 20 kg, freight above."""
    if grams <= 100:
        return "letter"
    if grams <= 20000:
        return "parcel"
    return "freight"
