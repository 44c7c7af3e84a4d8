"""Memory the target has beyond what the ELF's sections cover: external RAM (PSRAM, SDRAM) an
application allocates at run time, RAM banks no section is linked into. Two sources:
- the user names it: `set arena memory NAME START END[; NAME START END ...]` in GDB,
  `--memory "NAME START END"` for the standalone tool (`parse`);
- GDB's memory map (`info mem`): the regions the GDB server describes (qXfer:memory-map, e.g.
  OpenOCD's) or the user defined with GDB's own `mem LOW HIGH rw` (`from_info_mem`).
Each is [(low, high, name)], high exclusive. No target memory is read here.
"""
import re

# A read-write region this large is a server's filler for "everything that is not flash"
# (OpenOCD lists the address space around its flash banks as rw), not a memory: left out.
FILLER_BYTES = 512 << 20


def merged(ranges) -> list[tuple[int, int]]:
    """[(lo, hi)] of ranges [(lo, hi[, name ...])] with touching or overlapping ones joined, sorted
    (empty ranges left out): adjacent sections said, and checked, as the one memory they are."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted((r[0], r[1]) for r in ranges if r[1] > r[0]):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def parse(text: str) -> list[tuple[int, int, str]]:
    """'NAME START END[; NAME START END ...]' (numbers in C syntax: 0x21000000), or "" / "none"
    for no memory. ValueError saying what is wrong."""
    out: list[tuple[int, int, str]] = []
    text = (text or "").strip()
    if text in ("", "none", "auto"):
        return out
    for part in text.split(";"):
        words = part.split()
        if not words:
            continue
        if len(words) != 3:
            raise ValueError(f"{part.strip()!r}: expected NAME START END, e.g. 'psram 0x21000000 0x22000000'")
        name, lo_text, hi_text = words
        try:
            lo, hi = int(lo_text, 0), int(hi_text, 0)
        except ValueError:
            raise ValueError(f"{part.strip()!r}: START and END are numbers, e.g. 0x21000000") from None
        if not 0 <= lo < hi <= 1 << 64:
            raise ValueError(f"{part.strip()!r}: END {hi:#x} must be above START {lo:#x}")
        out.append((lo, hi, name))
    return out


_INFO_MEM_ROW = re.compile(r"^\s*\d+\s+([yn])\s+(0x[0-9a-fA-F]+)\s+(0x[0-9a-fA-F]+)\s+(.*)$")


def from_info_mem(text: str) -> list[tuple[int, int, str]]:
    """The enabled read-write regions of GDB's `info mem` output, named by where they came from
    ("the target's memory map" or "GDB's `mem` regions"), fillers left out."""
    source = "the target's memory map" if "provided by the target" in text else "GDB's `mem` regions"
    out = []
    for line in text.splitlines():
        m = _INFO_MEM_ROW.match(line)
        if not m or m.group(1) != "y":
            continue
        lo, hi, attrs = int(m.group(2), 16), int(m.group(3), 16), m.group(4).split()
        if hi == 0:  # GDB prints the end of the address space as 0x0
            hi = 1 << 32 if lo < 1 << 32 else 1 << 64
        if "rw" in attrs and hi > lo and hi - lo < FILLER_BYTES:
            out.append((lo, hi, f"{source}, {lo:#x}-{hi:#x}"))
    return out
