"""A RAM dump opened for the pipeline: its reader (acquire/dump.py), its core
(acquire/dumpcore.py), the warnings about what it lacks, and the one line each front end prints
so that nobody takes the report for a live board's."""
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from arenascope_plugin.acquire import elfinfo
from arenascope_plugin.acquire.dump import DumpReader, coverage, load
from arenascope_plugin.acquire.dumpcore import DumpCore, parse_registers
from arenascope_plugin.acquire.symbols import Symbols


@dataclass
class Dump:
    reader: DumpReader
    core: DumpCore
    warnings: list[str] = field(default_factory=list)

    @property
    def banner(self) -> str:
        """'reading a RAM dump, not a live target: FILE LOW..HIGH (N B), ...; code and constants from the
        ELF; registers from FILE'."""
        regs = f"registers from {os.path.basename(self.core.source)}" if self.core.source else \
            "registers unknown (none given)"
        flash = "; code and constants from the ELF" if self.reader.flash.segments else ""
        return f"reading a RAM dump, not a live target: {self.reader.describe()}{flash}; {regs}"


def open_dump(specs: Iterable[str], registers: str | None, symbols: Symbols) -> Dump:
    """The Dump of these FILE@ADDR / FILE.hex arguments and registers file (or None), checked
    against the ELF's RAM sections (symbols.ram_ranges()); dump.DumpError says what is wrong."""
    elf = symbols.elf_path if symbols.elf_path and symbols.file_addresses else None
    reader = load(specs, elfinfo.flash_bytes(elf) if elf else [])
    ram, _ = symbols.ram_ranges()
    warnings = coverage(reader, ram, symbols.elf_path or "the ELF")
    regs = parse_registers(registers) if registers else {}
    return Dump(reader, DumpCore(regs, symbols, registers, reader), warnings)
