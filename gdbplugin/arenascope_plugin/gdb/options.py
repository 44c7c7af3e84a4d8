"""argparse types shared by several commands."""
import argparse


def margin(text):
    """argparse type of --margin: a percentage in 0..100 in ASCII digits, as arenascope-plan takes it."""
    if text.isascii() and text.startswith("-") and text[1:].isdigit():
        raise argparse.ArgumentTypeError(f"{text}: use 0..100 percent")
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    value = int(text, 10)
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{value}: use 0..100 percent")
    return value


def width(text):
    """argparse type of --width: a cell count in 16..400."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 16 <= value <= 400:
        raise argparse.ArgumentTypeError(f"{value}: use 16..400 cells")
    return value
