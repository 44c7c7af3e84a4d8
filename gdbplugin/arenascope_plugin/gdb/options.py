"""argparse types shared by several commands."""
import argparse
import os


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


FILE, EXPRESSION = "file", "expression"  # what complete() returns for a file or expression argument


def _kind(action):
    """What an argument's value is, from its metavar: FILE... or NAME.ext -> FILE, EXPR or ADDR -> EXPRESSION."""
    meta = action.metavar if isinstance(action.metavar, str) else ""
    if "FILE" in meta or "." in meta:
        return FILE
    if meta in ("EXPR", "ADDR"):
        return EXPRESSION
    return None


def _option(by_option, tok):
    """(the option argparse reads tok as, or None; whether tok holds its value): an option string,
    `--opt=value`, or a prefix of exactly one long option (argparse's allow_abbrev)."""
    name, eq, _value = tok.partition("=") if tok.startswith("--") else (tok, "", "")
    if name in by_option:
        return by_option[name], bool(eq)
    hits = {a for s, a in by_option.items() if name.startswith("--") and s.startswith(name)}
    return (hits.pop(), bool(eq)) if len(hits) == 1 else (None, False)


def _takes_value(action):
    return action.nargs != 0 and action.option_strings


def complete(parser, text, word):
    """Completion of an `arena SUB` line from its argparse parser, so no list is kept twice.
    text: the arguments typed so far; word: the part GDB replaces (GDB breaks words at '-', so
    after `--` word is empty). Returns candidates for `word` (each the option, choice or
    subcommand minus the part of the current token before `word`), or FILE / EXPRESSION when the
    current token is a file or expression argument (metavar FILE... / EXPR / ADDR). After an option
    that takes a value: its choices; options already given are not offered again (-h/--help never);
    a positional with choices (a subcommand) offers them, less its default (the bare command)."""
    word = word or ""
    tokens = text.split()
    cur = "" if not tokens or text[-1:].isspace() else tokens.pop()
    by_option = {s: a for a in parser._actions for s in a.option_strings}  # pylint: disable=protected-access
    positionals = [a for a in parser._actions if not a.option_strings]  # pylint: disable=protected-access
    used, pending, given = set(), None, 0
    for tok in tokens:
        if pending is not None:
            pending = None
            continue
        action, inline = _option(by_option, tok)
        if action is not None:
            used.add(action)
            pending = action if _takes_value(action) and not inline else None
        else:
            given += 1
    if pending is not None:  # the option's value
        if pending.choices:
            found = [str(c) for c in pending.choices]
        else:
            return _kind(pending) or []
    elif cur.startswith("--") and "=" in cur:  # --opt=VALUE: the option's choices after its '='
        action, _inline = _option(by_option, cur)
        name = cur.split("=", 1)[0]
        if action is None or not _takes_value(action):
            return []
        if not action.choices:
            return _kind(action) or []
        found = [f"{name}={c}" for c in action.choices]
    elif cur.startswith("-"):
        found = [s for a in parser._actions if a not in used and not isinstance(a, argparse._HelpAction)  # pylint: disable=protected-access
                 for s in a.option_strings if s.startswith("--")]
    else:
        found = []
        slot = _positional(positionals, given)
        if slot is not None and slot.choices:
            found = [str(c) for c in slot.choices if c != slot.default]
        elif slot is not None and _kind(slot) and cur[:1] != "-":
            return _kind(slot)
        if cur == "":
            found += [s for a in parser._actions if a not in used and not isinstance(a, argparse._HelpAction)  # pylint: disable=protected-access
                      for s in a.option_strings if s.startswith("--")]
    cut = len(cur) - len(word) if cur.endswith(word) else 0
    return [c[cut:] for c in found if c.startswith(cur)]


def file_names(text, word):
    """The file names completing the current token of `text` (the last, unless text ends in a
    space), as GDB wants them for `word` (the token's tail it replaces); a folder ends in '/'.
    ~ is expanded for the lookup and kept as typed. Unreadable folders give none."""
    cur = "" if not text or text[-1:].isspace() else text.split()[-1]
    folder, stem = os.path.split(cur)
    try:
        entries = sorted(os.listdir(os.path.expanduser(folder) or "."))
    except OSError:
        return []
    found = [os.path.join(folder, e) + ("/" if os.path.isdir(os.path.join(os.path.expanduser(folder), e)) else "")
             for e in entries if e.startswith(stem) and (stem.startswith(".") or not e.startswith("."))]
    cut = len(cur) - len(word) if cur.endswith(word) else 0
    return [f[cut:] for f in found]


def _positional(positionals, given):
    """The positional argument the next plain token fills (a '*' or '+' one takes them all)."""
    for action in positionals:
        if action.nargs in ("*", "+", argparse.REMAINDER):
            return action
        count = 1 if action.nargs in (None, "?") else action.nargs
        if given < count:
            return action
        given -= count
    return None
