"""A RAM dump as a memory reader: the post-mortem of a board that left only its RAM and its ELF.

    FILE@ADDR   a raw binary (OpenOCD `dump_image`, GDB `dump binary memory`, J-Link `savebin`)
                whose first byte was at ADDR (a number: 0x20000000, 536870912)
    FILE.hex    Intel HEX (`.hex`, `.ihex`, `.ihx`): the addresses are in the records (Debian's
                python3-intelhex reads them; a truncated file or a bad checksum is refused)

load() reads the files, refuses what would mislead (an empty file, overlapping ranges, addresses
beyond 32 bits) with a DumpError naming the file and what to do, and returns a DumpReader: an
ImageReader whose reads outside the dumped bytes (and the ELF's flash sections, which the board's
flash holds as the ELF says) raise MemoryReadError saying what it holds.
Addresses are ints, sizes bytes; ranges are [low, high). Nothing here talks to a target."""
import os
from collections.abc import Iterable
from dataclasses import dataclass

from arenascope_plugin.acquire.reader import ImageReader, MemoryReadError
from arenascope_plugin.errors import ArenascopeError

HEX_SUFFIXES = (".hex", ".ihex", ".ihx")
ADDRESS_LIMIT = 1 << 32  # Cortex-M: a dump's bytes must lie below 4 GiB


class DumpError(ArenascopeError):
    """A dump file cannot be used; the message names the file, what is wrong and what to do."""


@dataclass(frozen=True)
class Piece:
    """Bytes of one file at [low, high)."""
    path: str
    low: int
    high: int

    def __str__(self) -> str:
        return f"{os.path.basename(self.path)} {self.low:#010x}..{self.high:#010x} ({self.high - self.low} B)"


def _number(text: str, spec: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise DumpError(f"{spec}: {text!r} is not an address: give FILE@ADDR, e.g. ram.bin@0x20000000") from None
    if not 0 <= value < ADDRESS_LIMIT:
        raise DumpError(f"{spec}: {text} is outside 32-bit addresses (0..0xffffffff): give the address the dump's "
                        "first byte had on the target, e.g. ram.bin@0x20000000")
    return value


def _read_raw(spec: str, path: str, base: int) -> list[tuple[int, bytes]]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise DumpError(f"{spec}: cannot read {path}: {exc.strerror or exc}") from None
    if not data:
        raise DumpError(f"{spec}: {path} is empty (0 bytes): the dump was not written; take it again")
    if base + len(data) > ADDRESS_LIMIT:
        raise DumpError(f"{spec}: {len(data)} B at {base:#x} run past 0xffffffff: a wrong address or the wrong "
                        "file (give the address of its first byte)")
    return [(base, data)]


def _read_hex(spec: str, path: str) -> list[tuple[int, bytes]]:
    try:
        import intelhex  # Debian: python3-intelhex; only Intel HEX needs it
    except ImportError:
        raise DumpError(f"{spec}: reading Intel HEX needs python3-intelhex (Debian: apt install python3-intelhex); "
                        "or convert it to a raw binary (arm-none-eabi-objcopy -I ihex -O binary) and give "
                        "FILE@ADDR") from None
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError as exc:
        raise DumpError(f"{spec}: cannot read {path}: {exc.strerror or exc}") from None
    if not lines:
        raise DumpError(f"{spec}: {path} is empty: the dump was not written; take it again")
    # intelhex stops at the end-of-file record and accepts a file that lacks it: a truncated dump.
    if lines[-1].upper() != ":00000001FF":
        raise DumpError(f"{spec}: {path} does not end with Intel HEX's end-of-file record (:00000001FF): the "
                        f"file is truncated (line {len(lines)} is the last) or not Intel HEX; take the dump again")
    ih = intelhex.IntelHex()
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            ih.loadhex(f)
    except intelhex.IntelHexError as exc:
        raise DumpError(f"{spec}: not valid Intel HEX: {exc}; take the dump again, or give a raw binary "
                        "as FILE@ADDR") from None
    segments = [(lo, bytes(ih.tobinstr(lo, hi - 1))) for lo, hi in ih.segments()]
    if not segments:
        raise DumpError(f"{spec}: {path} holds no data records: the dump was not written; take it again")
    if segments[-1][0] + len(segments[-1][1]) > ADDRESS_LIMIT:
        raise DumpError(f"{spec}: its records run past 0xffffffff (a 32-bit target's addresses)")
    return segments


def _not_a_file(path: str) -> str | None:
    """Why `path` cannot be a dump (None when it is a regular file): missing, or a directory, a
    FIFO, a device (/dev/zero would be read forever, a FIFO would block) that was not a file."""
    if not os.path.lexists(path):
        return "no such file"
    if os.path.isdir(path):
        return "a directory, not a dump file"
    if not os.path.isfile(path):
        return "not a regular file (a FIFO, a device or a socket): give the file the dump was saved to"
    return None


def read_spec(spec: str) -> tuple[str, list[tuple[int, bytes]]]:
    """(file, [(address, bytes)]) of one --ram argument (FILE@ADDR or FILE.hex); DumpError says why not."""
    path, at, addr = spec.rpartition("@")
    if not at:
        path = spec
    path = os.path.expanduser(path)
    if path.lower().endswith(HEX_SUFFIXES):
        if at:
            raise DumpError(f"{spec}: an Intel HEX file holds its own addresses: give it without @ADDR ({path})")
        if (why := _not_a_file(path)) is not None:
            raise DumpError(f"{spec}: {why}")
        return path, _read_hex(spec, path)
    if not at:
        raise DumpError(f"{spec}: a raw dump holds no addresses: give the address of its first byte, "
                        f"{spec}@0x20000000 (or an Intel HEX file, .hex)")
    if not path:
        raise DumpError(f"{spec}: no file before '@': give FILE@ADDR")
    base = _number(addr, spec)
    if (why := _not_a_file(path)) is not None:
        raise DumpError(f"{spec}: {path}: {why}")
    return path, _read_raw(spec, path, base)


class DumpReader(ImageReader):
    """Reads the dumped bytes. pieces: what each file holds (Piece); contiguous pieces are read as
    one, so a read may cross from one file into the next. flash: [(address, bytes, name)] of what
    the board's flash holds (the ELF's read-only sections: code, constants), read where no dumped
    byte lies. A read outside both raises MemoryReadError saying which ranges the dump holds."""

    def __init__(self, pieces: list[Piece], segments: Iterable[tuple[int, bytes]],
                 flash: Iterable[tuple[int, bytes, str]] = ()) -> None:
        merged: list[tuple[int, bytearray]] = []
        for base, data in sorted(segments, key=lambda s: s[0]):
            if merged and merged[-1][0] + len(merged[-1][1]) == base:
                merged[-1][1].extend(data)
            else:
                merged.append((base, bytearray(data)))
        super().__init__(merged, name="RAM dump")
        self.pieces = sorted(pieces, key=lambda p: p.low)
        self.origin = self.describe()
        held = self.ranges()
        self.flash = ImageReader([(base, data) for base, data, _ in flash
                                  if not any(base < hi and lo < base + len(data) for lo, hi in held)], "ELF's flash")

    def ranges(self) -> list[tuple[int, int]]:
        """[(low, high)] of the dumped bytes, contiguous pieces joined, ascending."""
        return [(base, base + len(data)) for base, data in self.segments]

    def read(self, addr: int, length: int) -> bytes:
        try:
            return super().read(addr, length)
        except MemoryReadError:
            pass
        try:
            return self.flash.read(addr, length)
        except MemoryReadError:
            held = ", ".join(f"{lo:#x}..{hi:#x}" for lo, hi in self.ranges())
            lo, hi = self._missing(addr, length)
            part = "" if (lo, hi) == (addr, addr + length) else \
                f"{lo:#x}..{hi:#x} ({hi - lo} B) of it is "
            raise MemoryReadError(addr, length, f"{part}outside the RAM dump (it holds {held}) and the ELF's flash "
                                  "sections; dump that memory too and give it with another FILE@ADDR") from None

    def _missing(self, addr: int, length: int) -> tuple[int, int]:
        """The first run of [addr, addr + length) that neither the dump nor the flash holds."""
        held = sorted(self.ranges() + [(b, b + len(d)) for b, d in self.flash.segments])
        at, end = addr, addr + length
        for lo, hi in held:  # skip what is held from `at` on
            if lo <= at < hi:
                at = hi
        stop = min([lo for lo, _ in held if at < lo < end] + [end])
        return (at, stop) if at < end else (addr, end)

    def describe(self) -> str:
        """'FILE LOW..HIGH (N B), ...': what each file holds."""
        return ", ".join(str(p) for p in self.pieces)


def load(specs: Iterable[str], flash: Iterable[tuple[int, bytes, str]] = ()) -> DumpReader:
    """The DumpReader of these --ram arguments (and the flash's bytes, DumpReader's flash);
    DumpError for a bad file or overlapping ranges."""
    pieces: list[Piece] = []
    segments: list[tuple[int, bytes]] = []
    for spec in specs:
        path, found = read_spec(spec)
        for base, data in found:
            piece = Piece(path, base, base + len(data))
            for other in pieces:
                if piece.low < other.high and other.low < piece.high:
                    raise DumpError(f"{spec}: {piece.low:#x}..{piece.high:#x} overlaps {other}: which bytes are the "
                                    "board's would be a guess; give each address range once")
            pieces.append(piece)
            segments.append((base, data))
    if not pieces:
        raise DumpError("no dump given: give FILE@ADDR (a raw binary) or FILE.hex")
    return DumpReader(pieces, segments, flash)


def coverage(reader: DumpReader, ram: list[tuple[int, int, str]], elf: str) -> list[str]:
    """Warnings for the ELF's RAM sections [(low, high, name)] the dump does not hold; DumpError
    when it holds none of them (the wrong address, or the wrong ELF)."""
    held = reader.ranges()

    def inside(lo, hi):
        return any(a <= lo and hi <= b for a, b in held)

    def touches(lo, hi):
        return any(lo < b and a < hi for a, b in held)

    if ram and not any(touches(lo, hi) for lo, hi, _ in ram):
        sections = ", ".join(f"{n} {lo:#x}..{hi:#x}" for lo, hi, n in ram)
        raise DumpError(f"the dump ({reader.describe()}) covers none of {os.path.basename(elf)}'s RAM sections "
                        f"({sections}): check the address after '@' and that this is the ELF the board ran")
    missing = [f"{n} {lo:#x}..{hi:#x}" for lo, hi, n in ram if not inside(lo, hi)]
    return [f"the dump does not hold all of {', '.join(missing)}: what lives there reads as unreadable"] \
        if missing else []
