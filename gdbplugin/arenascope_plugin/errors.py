"""The one base of every error the plugin and the tool expect (ArenascopeError), and the error
every stage raises when the target cannot be read or asked now (TargetError).

An ArenascopeError carries what happened, where (an address, a symbol, a tensor: when known) and
the remedy (what to do). Most are raised with the whole sentence as their one argument, as they
always were; where and remedy given apart are added to it when it does not say them already. The
front ends (gdb/framework.py and the other gdb/ entry points, cli.py, serve/livepoll.py) catch
ArenascopeError, and nothing else, as expected: anything else is a bug and shows as one."""


class ArenascopeError(Exception):
    """An expected error: str() is the one line a front end prints, `what happened, where: what to
    do`. what: the message (the whole sentence when where and remedy are not given apart); where:
    the address, symbol or tensor it happened at, or None; remedy: what to do, or ""."""

    what: str = ""
    where: str | None = None
    remedy: str = ""

    def __init__(self, what: object = "", *args: object, where: str | None = None, remedy: str | None = None) -> None:
        super().__init__(what, *args)
        self.what = str(what)
        if where is not None:
            self.where = where
        if remedy is not None:
            self.remedy = remedy

    def __str__(self) -> str:
        text = super().__str__()
        if self.where and self.where not in text:
            text += f" at {self.where}"
        if self.remedy and self.remedy not in text:
            text += f": {self.remedy}"
        return text


class TargetError(ArenascopeError):
    """The target cannot be read now; the message says why and what to do."""
