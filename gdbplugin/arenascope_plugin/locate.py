"""Finding the descriptor: by a user override, by symbol, else by a bounded RAM scan for the
magic (docs/agent-abi.md, "Finding the descriptor"). Pure: the caller passes the symbol
lookup result and the ranges; memory goes through a MemoryReader."""
from . import abi
from .decode import DecodeError, preamble
from .reader import MemoryReadError

CHUNK = 4096   # GDB remote packets carry at most 4 KiB; OpenOCD reads the same way


class NotFoundError(Exception):
    """No descriptor: the message lists what was searched and how to point at one."""


def scan(reader, ranges, progress=None):
    """First 4-aligned address in ranges [(lo, hi, name)] holding a valid descriptor preamble.
    Returns (address or None, notes): notes list unreadable or invalid candidates."""
    notes = []
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
                        preamble(reader.read(cand, 16), cand)
                        return cand, notes
                    except (DecodeError, MemoryReadError) as exc:
                        notes.append(f"magic at {cand:#x} rejected: {exc}")
                at = data.find(abi.MAGIC, at + 1)
            if progress:
                progress(addr + length - lo, hi - lo, name)
            addr += length
    return None, notes


def locate(reader, override=None, symbol=None, ranges=(), range_source="", why_no_ranges=""):
    """The descriptor's address, trying in order: the override, the symbol, a scan of ranges.
    Raises NotFoundError saying what was tried and what to do."""
    if override is not None:
        return override, "set arena descriptor-address"
    if symbol is not None:
        return symbol, "symbol arenascope_descriptor"
    tried = ["no symbol arenascope_descriptor (stripped ELF, or the agent is not linked in)"]
    if ranges:
        addr, notes = scan(reader, ranges)
        if addr is not None:
            return addr, f"magic found by scanning {range_source}"
        spans = ", ".join(f"{name} {lo:#x}-{hi:#x}" for lo, hi, name in ranges)
        tried.append(f"scanned {range_source}: {spans}: no magic {abi.MAGIC.decode()!r}")
        tried += notes[:5]
    else:
        tried.append(f"no RAM ranges to scan ({why_no_ranges or 'no ELF loaded'}, and `set arena scan-range` "
                     "not set)")
    raise NotFoundError(
        "no arenascope descriptor found: " + "; ".join(tried) + ". Link the agent and call arenascope_init "
        "(docs/agent.md), load the firmware's ELF (`file fw.elf`), or point at the block with "
        "`set arena descriptor-address ADDR` or `set arena scan-range START END`.")
