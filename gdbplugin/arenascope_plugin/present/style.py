"""Named styles and the one helper that applies them; `enabled = False` gives plain text
(set arena colour off), where the map uses distinct letters instead of colours."""

STYLES = {
    "tensor": "34",       # blue: planned activations in the head
    "scratch": "35",      # magenta: scratch buffers
    "temp": "33",         # yellow: temp above the head
    "free": "32",         # green: intact free band
    "persistent": "36",   # cyan: persistent buffers in the tail
    "metadata": "90",     # grey: TFLM bookkeeping in the tail
    "guard": "37",        # white: guard band
    "damage": "1;31",     # bold red: canary damage
    "PASS": "32", "WARN": "33", "FAIL": "1;31",
    "title": "1",
}
MARKERS = {"tensor": "T", "scratch": "s", "temp": "t", "free": ".", "persistent": "P", "metadata": "m",
           "guard": "g", "damage": "X", "head": "H"}

enabled = True


def paint(text, style):
    if not enabled or style not in STYLES:
        return text
    return f"\x1b[{STYLES[style]}m{text}\x1b[0m"


def block(style):
    """One map cell: a coloured block, or the style's letter when colour is off."""
    return paint("\u2588", style) if enabled else MARKERS.get(style, "?")
