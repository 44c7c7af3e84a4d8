"""Advice that names a setting (`set arena stack-range LOW HIGH` in GDB, `--stack-range LOW HIGH`
to the standalone tool), kept structured until it is worded: the pipeline writes a Remedy into
its messages and the front end running it words the Remedy in its own syntax. GDB's wording is
the default; the tool installs its own (cli.py) with use() for the time it runs. The settings
themselves are in settings_table.py.

In an f-string: f"{Remedy('stack-range', 'LOW HIGH')}" gives the words, f"{r:q}" the words quoted
as a command (GDB: "`set arena stack-range LOW HIGH`"; the tool: "`--stack-range LOW HIGH`"; a
`show` remedy in the tool: "the --stack-range option", which is no command to quote)."""
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Remedy:
    """What to set: `setting` (a settings_table name), to `value` (words such as 'LOW HIGH', a
    path, 'auto'; "" to name the setting alone). show: look at the setting instead of setting it."""
    setting: str
    value: str = ""
    show: bool = False

    def __format__(self, spec: str) -> str:
        words, is_command = WORDING["now"](self)
        return f"`{words}`" if spec == "q" and is_command else words

    def __str__(self) -> str:
        return format(self, "")


def gdb_words(r: Remedy) -> tuple[str, bool]:
    """GDB's wording of a remedy: (`set arena NAME VALUE` or `show arena NAME`, it is a command)."""
    if r.show:
        return f"show arena {r.setting}", True
    return f"set arena {r.setting}{' ' + r.value if r.value else ''}", True


WORDING: dict[str, Callable[[Remedy], tuple[str, bool]]] = {"now": gdb_words}


class use:  # pylint: disable=invalid-name
    """`with remedy.use(words):` words remedies with words(remedy) -> (text, is a command) inside
    the block (the front end that runs the pipeline: cli.py's for the tool); GDB's after it."""

    def __init__(self, words: Callable[[Remedy], tuple[str, bool]]):
        self.words, self.before = words, None

    def __enter__(self):
        self.before, WORDING["now"] = WORDING["now"], self.words
        return self

    def __exit__(self, *_exc):
        WORDING["now"] = self.before
