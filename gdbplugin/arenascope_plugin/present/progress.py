"""What a long read is doing: one line that updates in place once a command has read target
memory for more than a second (GDB's console and the standalone tool's standard error, when they
are a terminal: the front ends give a silent writer otherwise), with
the bytes so far, the rate, and, for one long read of known length, a bar. Ctrl-C stops the read
within one chunk (the readers check between chunks; GDB raises KeyboardInterrupt from the
read); the command then says how much it had read.

    p = Progress(write, "arena check")
    reader.progress = p          # readers call p.add(nbytes, done=None, total=None) per chunk
    ...
    p.done()                     # ends the line when one was shown
"""
import time
from collections.abc import Callable

SHOW_AFTER_S = 1.0      # nothing is shown for a read that ends sooner
EVERY_S = 0.1           # the line is redrawn at most this often
BAR = 20                # characters of the bar


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB" if n < 10 << 20 else f"{n / (1 << 20):.1f} MiB"


class Progress:
    """write(text): where the line goes (gdb.write, sys.stderr.write); what: the command's name."""

    def __init__(self, write: Callable[[str], object], what: str, clock: Callable[[], float] = time.monotonic,
                 show_after: float = SHOW_AFTER_S) -> None:
        self.write, self.what, self.clock, self.show_after = write, what, clock, show_after
        self.start = clock()
        self.bytes = 0
        self.shown = False
        self._last = None
        self._width = 0

    def add(self, nbytes: int, done: int | None = None, total: int | None = None) -> None:
        """nbytes more were read; done/total: of the current read, when it is one long read."""
        self.bytes += nbytes
        now = self.clock()
        elapsed = now - self.start
        if elapsed < self.show_after or (self._last is not None and now - self._last < EVERY_S):
            return
        self._last = now
        rate = self.bytes / elapsed if elapsed > 0 else 0.0
        line = f"{self.what}: reading target memory, {_kib(self.bytes)} so far, {_kib(int(rate))}/s"
        if total and done is not None and total >= 8192:
            filled = BAR * done // total
            line += f"  [{'#' * filled}{'.' * (BAR - filled)}] {100 * done // total}% of {_kib(total)}"
        line += " (Ctrl-C stops it)"
        self.write("\r" + line.ljust(self._width))
        self._width = len(line)
        self.shown = True

    def summary(self) -> str:
        return f"{_kib(self.bytes)} in {self.clock() - self.start:.1f} s"

    def interrupted(self, how: str = "interrupted (Ctrl-C)") -> str:
        """What a command says when Ctrl-C (or `how`: a signal) stopped it."""
        return (f"{how} after reading {_kib(self.bytes)} of target memory in "
                f"{self.clock() - self.start:.1f} s; nothing of it is shown")

    def done(self, note: str = "") -> None:
        """Ends the updating line (when one was shown) with what was read."""
        if self.shown:
            line = f"{self.what}: read {self.summary()}{note}"
            self.write("\r" + line.ljust(self._width) + "\n")
            self.shown = False
