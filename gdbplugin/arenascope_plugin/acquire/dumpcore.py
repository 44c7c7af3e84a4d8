"""The core of a RAM dump: halted for good, its registers from a file the user saved at the crash,
or unknown (as through a second GDB connection: the pipeline then reads the fault from the
agent's record, which a dump of RAM holds).

A registers file is either what GDB's `info registers` prints (lines `NAME 0xVALUE ...`, the
names the architecture ports know: ports/*, dump_register_pattern and dump_status_words; other
lines, such as a pasted `(gdb)` prompt, are skipped), or a JSON object {"pc": 2248 or "0x8c8",
...}. Values are 32-bit."""
import json
import os
import re

from arenascope_plugin import ports
from arenascope_plugin.acquire.dump import DumpError
from arenascope_plugin.acquire.reader import MemoryReader
from arenascope_plugin.acquire.symbols import Core, Symbols, pc_frames

_LINE = re.compile(r"^\s*([A-Za-z_]\w*)\s+(\S+)")
# Every port's register names, and the status words a registers file may add for what a RAM dump
# does not hold (Cortex-M's System Control Block: `x/1wx 0xE000ED28` at the crash, written as a
# line `cfsr 0x...` or a JSON member).
_NAMES = re.compile(r"^(" + "|".join(p.dump_register_pattern for p in ports.all_ports()) + "|" +
                    "|".join(w for p in ports.all_ports() for w in p.dump_status_words) + r")$")
ALIASES = {"r13": "sp", "r14": "lr", "r15": "pc", "x1": "ra", "x2": "sp"}  # numbered names GDB may print
WANTED = tuple(dict.fromkeys(r for p in ports.all_ports() for r in p.core_registers))  # what a Core is asked


def _value(path: str, where: str, name: str, value: object) -> int:
    if isinstance(value, str):
        try:
            value = int(value.strip(), 0)
        except ValueError:
            raise DumpError(f"{path}: {where}: {name} is {value!r}, not a number (give 0x... or decimal)") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise DumpError(f"{path}: {where}: {name} is {value!r}, not a number (give 0x... or decimal)")
    if not 0 <= value < 1 << 32:
        raise DumpError(f"{path}: {where}: {name} = {value:#x} is not a 32-bit register value")
    return value


def parse_registers(path: str) -> dict[str, int]:
    """{register: value} (lower-case names; r13/r14/r15 as sp/lr/pc) from the file at path;
    DumpError when it cannot be read, holds a malformed register line or no register at all."""
    try:
        with open(os.path.expanduser(path), encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as exc:
        raise DumpError(f"--registers {path}: cannot read it: {exc.strerror or exc}") from None
    regs = {}
    if text.lstrip()[:1] in ("{", "["):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DumpError(f"{path}: not valid JSON ({exc}): give {{\"pc\": \"0x...\", ...}} or GDB's `info "
                            "registers` output") from None
        if not isinstance(doc, dict):
            raise DumpError(f"{path}: the JSON is not an object: give {{\"pc\": \"0x...\", \"sp\": ...}}")
        for name, value in doc.items():
            key = ALIASES.get(name.lower(), name.lower())
            regs[key] = _value(path, "JSON", name, value)
    else:
        for number, line in enumerate(text.splitlines(), 1):
            m = _LINE.match(line)
            if not m or not _NAMES.match(m.group(1).lower()):
                continue  # not a register line: a prompt, a heading, a blank line
            name = m.group(1).lower()
            if not m.group(2).lower().startswith("0x"):
                raise DumpError(f"{path}: line {number}: {m.group(1)}'s value {m.group(2)!r} is not GDB's 0x... "
                                "form: give what `info registers` prints, unedited")
            regs[ALIASES.get(name, name)] = _value(path, f"line {number}", m.group(1), m.group(2))
    if not any(name in regs for name in WANTED):
        raise DumpError(f"{path}: no registers found (none of {', '.join(WANTED)}): give what GDB's `info "
                        "registers` prints at the crash, or a JSON object {\"pc\": \"0x...\", ...}")
    return regs


class DumpCore(Core):
    """A dump's core: halted; registers from parse_registers() ({} when no file was given: all
    unknown); frames(): the call chain the ELF's call frame information gives over the dump's
    stack (the port's unwinder), else the PC's function only. source: the registers file, or None."""
    state = "halted"

    def __init__(self, regs: dict[str, int] | None = None, symbols: Symbols | None = None,
                 source: str | None = None, reader: MemoryReader | None = None) -> None:
        self.regs, self.symbols, self.source, self.reader = dict(regs or {}), symbols, source, reader
        self._unwound = None

    def refresh(self) -> None:
        return None  # a dump does not change

    def register(self, name: str) -> int | None:
        return self.regs.get(name)

    def unwound(self):
        """The port's unwinder's walk from the registers file over the dump (once), or None
        without registers, ELF, dump or an unwinder for the architecture."""
        if self._unwound is None and self.reader is not None and self.symbols is not None and "pc" in self.regs:
            self._unwound = ports.of(self.symbols).unwind(self.symbols, self.reader.read, self.regs, None)
        return self._unwound

    def frames(self) -> list[str]:
        got = self.unwound()
        return got.frames if got is not None and got.frames else pc_frames(self.symbols, self.regs.get("pc"))

    def frames_complete(self) -> bool:
        got = self.unwound()
        return got is not None and got.complete
