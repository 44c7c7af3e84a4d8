"""Finding the descriptor: by a user override, by symbol, else by a bounded RAM scan for the
magic (docs/agent-abi.md, "Finding the descriptor"). Pure: the caller passes the symbol
lookup result and the ranges; memory goes through a MemoryReader."""
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.decode import abi
from arenascope_plugin.decode.descriptor import DecodeError, Descriptor, decode_descriptor, preamble
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.remedy import Remedy

CHUNK = 4096   # GDB remote packets carry at most 4 KiB; OpenOCD reads the same way

Range = tuple[int, int, str]   # (low, high, name) of memory to scan
Progress = Callable[[int, int, str], object]   # (bytes done, bytes in the range, its name)


class NotFoundError(ArenascopeError):
    """No descriptor: the message lists what was searched and how to point at one."""


@dataclass
class Candidate:
    """A 4-aligned magic whose whole block decodes: a descriptor, live or a copy."""
    address: int
    section: str          # the scanned range's name (the ELF section, or "scan-range")
    desc: Descriptor
    inside: str = ""      # what memory the block itself describes holds it ("the stack ..."), if any

    @property
    def in_bss(self) -> bool:
        return self.section.startswith((".bss", ".sbss"))

    def summary(self) -> str:
        d = self.desc
        where = f"{self.section}, {self.inside}" if self.inside else self.section
        return (f"{self.address:#x} ({where}; {d.invokes} inference{'' if d.invokes == 1 else 's'}, seq {d.seq}, "
                f"layout_generation {d.layout_generation})")


def _newer16(a, b):
    """Whether the 16-bit counter value a is later than b (serial arithmetic: they wrap)."""
    return 0 < (a - b) % 65536 < 32768


def _newer(a, b):
    """Whether candidate a's counters are later than b's: invoke_phase (32 bits, +2 an
    inference), then seq (+2 an update), then layout_generation. A copy stops changing when it is
    made; the agent's own block keeps counting."""
    if a.desc.invoke_phase != b.desc.invoke_phase:
        return a.desc.invoke_phase > b.desc.invoke_phase
    if a.desc.seq != b.desc.seq:
        return _newer16(a.desc.seq, b.desc.seq)
    return _newer16(a.desc.layout_generation, b.desc.layout_generation)


def _inside(desc, address):
    """The memory the block describes that holds the block at address itself ('' if none): the
    agent's descriptor is a static in .bss, never in its own stack, guard band or arena; a
    copy can be (a local copy on the stack, a memcpy into a tensor)."""
    end = address + desc.descriptor_size
    spans = [(desc.stack, "the stack"), (desc.guard, "the guard band")]
    for band, what in spans:
        if band.filled and band.low_addr < end and address < band.high_addr:
            return f"inside {what} {band.low_addr:#x}-{band.high_addr:#x} it describes"
    for a in desc.arenas:
        if a.base_addr < end and address < a.end_addr:
            return f"inside arena {a.index} {a.base_addr:#x}-{a.end_addr:#x} it describes"
    return ""


def _candidate(reader, address, section):
    """The decoded block at address, or raises DecodeError / MemoryReadError."""
    _, size = preamble(reader.read(address, 16), address)
    desc = decode_descriptor(reader.read(address, size), address)
    return Candidate(address=address, section=section, desc=desc, inside=_inside(desc, address))


def candidates(reader: MemoryReader, ranges: Iterable[Range],
               progress: Progress | None = None) -> tuple[list[Candidate], list[str]]:
    """Every 4-aligned address in ranges [(lo, hi, name)] holding a block that decodes as a whole
    (header and arena entries, decode.decode_descriptor). Returns (candidates, notes): notes list
    unreadable ranges and rejected magics, with the reason."""
    notes, found = [], []
    tail = len(abi.MAGIC) - 1
    for lo, hi, name in ranges:
        addr = lo & ~3
        while addr < hi:
            length = min(CHUNK, hi - addr)
            try:
                data = reader.read(addr, min(length + tail, hi - addr))
            except MemoryReadError as exc:
                notes.append(f"{name}: {exc}")
                addr += length
                continue
            at = data.find(abi.MAGIC)
            while 0 <= at < length:
                cand = addr + at
                if cand % 4 == 0:
                    try:
                        found.append(_candidate(reader, cand, name))
                    except (DecodeError, MemoryReadError) as exc:
                        notes.append(f"magic at {cand:#x} rejected: {exc}")
                at = data.find(abi.MAGIC, at + 1)
            if progress:
                progress(addr + length - lo, hi - lo, name)
            addr += length
    return found, notes


def _decides(a, b):
    """The first criterion on which a is preferred to b, or None if b is preferred or they tie:
    not lying inside memory it describes, lying in .bss, the latest counters."""
    if bool(a.inside) != bool(b.inside):
        return "outside" if not a.inside else None
    if a.in_bss != b.in_bss:
        return "bss" if a.in_bss else None
    return "counters" if _newer(a, b) else None


WHY = {
    "outside": "{n} inside memory {they} describe{s}, where only a copy can be",
    "bss": ("it is in .bss, where the agent's descriptor is linked and which is zeroed at every reset; {n} "
            "outside .bss, where a copy can outlive a reset with higher counters"),
    "counters": "its counters are later than {those} of {n} (a copy stops changing when it is made)",
}


def choose(found: list[Candidate]) -> tuple[Candidate | None, str | None]:
    """(the candidate taken for the agent's descriptor, a warning or None) from candidates().

    The agent's own block is preferred by, in order: not lying inside memory it describes (its
    stack, guard band or arena: only a copy can); lying in .bss (where the agent's descriptor is
    linked, zeroed at every reset, so every block there is from this boot, while a copy in
    .noinit or unzeroed RAM can outlive a reset with higher counters); the latest counters
    (invoke_phase, seq, layout_generation: a copy stops changing when it is made). Several
    candidates always give a warning naming each address and what decided."""
    if not found:
        return None, None
    best = found[0]
    for c in found[1:]:
        if _decides(c, best):
            best = c
    copy_note = (f"; it lies {best.inside}, where the agent's own block (a static in .bss) never is: it is "
                 "probably a copy, and the agent's descriptor lies outside the scanned ranges or was overwritten"
                 if best.inside else "")
    if len(found) == 1:
        return best, (f"the only descriptor found, at {best.address:#x}, may not be the agent's{copy_note}; point at "
                      f"the right one with {Remedy('descriptor-address', 'ADDR'):q}" if best.inside else None)
    by: dict[str | None, list[Candidate]] = {}   # the criterion deciding for best (None: a tie)
    for c in found:
        if c is not best:
            by.setdefault(_decides(best, c), []).append(c)
    why = []
    for key in ("outside", "bss", "counters"):
        if key in by:
            group = by[key]
            n = ("the one at " if len(group) == 1 else "those at ") + ", ".join(f"{c.address:#x}" for c in group)
            n_is = n + (" lies" if len(group) == 1 else " lie") if key == "outside" else \
                n + (" is" if len(group) == 1 else " are") if key == "bss" else n
            why.append(WHY[key].format(n=n_is, they="it" if len(group) == 1 else "they",
                                       s="s" if len(group) == 1 else "", those="those"))
    if None in by:
        tied = ", ".join(f"{c.address:#x}" for c in by[None])
        why.append(f"it is the first found: it and {tied} do not differ in where they lie or in their counters, "
                   "so this cannot tell which one the agent updates")
    listing = ", ".join(c.summary() for c in found)
    return best, (f"{len(found)} descriptors found: {listing}; using {best.address:#x}: " + "; ".join(why) +
                  copy_note + ". The others are taken for stale copies (a memcpy of the descriptor); if the "
                  f"choice is wrong, {Remedy('descriptor-address', 'ADDR'):q}")


def scan(reader: MemoryReader, ranges: Iterable[Range],
         progress: Progress | None = None) -> tuple[int | None, list[str], str | None]:
    """The address of the descriptor the agent keeps live in ranges [(lo, hi, name)], chosen
    among every valid candidate (choose()). Returns (address or None, notes, warning or None):
    notes list unreadable ranges and rejected candidates; the warning names every candidate
    when there were several."""
    found, notes = candidates(reader, ranges, progress)
    best, warning = choose(found)
    return (best.address if best else None), notes, warning


def locate(reader: MemoryReader, override: int | None = None, symbol: int | None = None,
           ranges: Sequence[Range] = (), range_source: str = "", why_no_ranges: str = "",
           warn: Callable[[str], object] | None = None) -> tuple[int, str]:
    """The descriptor's address, trying in order: the override, the symbol, a scan of ranges.
    warn(text) is called when a scan found several descriptors. Raises NotFoundError saying
    what was tried and what to do."""
    if override is not None:
        return override, str(Remedy("descriptor-address"))
    if symbol is not None:
        return symbol, "symbol arenascope_descriptor"
    tried = ["no symbol arenascope_descriptor (stripped ELF, or the agent is not linked in)"]
    if ranges:
        addr, notes, warning = scan(reader, ranges)
        if addr is not None:
            if warning and warn:
                warn(f"scanning {range_source}: {warning}")
            return addr, f"magic found by scanning {range_source}"
        spans = ", ".join(f"{name} {lo:#x}-{hi:#x}" for lo, hi, name in ranges)
        rejected = any(n.startswith("magic at ") for n in notes)
        tried.append(f"scanned {range_source}: {spans}: " +
                     ("no valid descriptor" if rejected else f"no magic {abi.MAGIC.decode()!r}"))
        tried += notes[:5]
    else:
        tried.append(f"no RAM ranges to scan ({why_no_ranges or 'no ELF loaded'}, and {Remedy('scan-range'):q} "
                     "not set)")
    raise NotFoundError(
        "no arenascope descriptor found: " + "; ".join(tried) + ". Link the agent and call arenascope_init "
        "(docs/agent.md), load the firmware's ELF (`file fw.elf`), or point at the block with "
        f"{Remedy('descriptor-address', 'ADDR'):q} or {Remedy('scan-range', 'START END'):q}.")
