"""The ELF's DWARF call frame information (.debug_frame), read once per ELF: the rows of the
function an address is in, and the frame a function builds. Architecture-neutral: a port gives its
DWARF register numbers (ARM: sp 13, lr 14; RISC-V: sp x2, ra x1). Sources: DWARF 5 section 6.4 (the
CFA rule and the register rules of each row; GCC writes them with -g); pyelftools decodes them.
Nothing here reads target memory."""
import bisect

from arenascope_plugin.acquire.symbols import Symbols


class Cfi:
    """The ELF's .debug_frame FDEs, sorted by address (read once per ELF: Symbols.memo)."""

    def __init__(self, path: str | None) -> None:
        self.starts, self.fdes, self.problem = [], [], ""
        if not path:
            self.problem = "no ELF file on disk to read call frame information from"
            return
        try:
            from elftools.common.exceptions import DWARFError, ELFError  # pylint: disable=import-outside-toplevel
            from elftools.dwarf.callframe import FDE  # pylint: disable=import-outside-toplevel
            from elftools.elf.elffile import ELFFile  # pylint: disable=import-outside-toplevel
        except ImportError:
            self.problem = "pyelftools is missing (Debian: apt install python3-pyelftools)"
            return
        try:
            with open(path, "rb") as f:
                elf = ELFFile(f)
                dwarf = elf.get_dwarf_info() if elf.has_dwarf_info() else None
                if dwarf is None or not dwarf.has_CFI():
                    self.problem = "the ELF has no .debug_frame (build with -g)"
                    return
                entries = sorted(((e.header["initial_location"], e.header["address_range"], e)
                                  for e in dwarf.CFI_entries() if isinstance(e, FDE)), key=lambda t: t[0])
                for lo, size, fde in entries:
                    fde.get_decoded()  # decoded while the file is open
                    self.starts.append(lo)
                    self.fdes.append((lo, lo + size, fde))
        except (OSError, ELFError, DWARFError, ValueError, KeyError, AssertionError) as exc:
            self.starts, self.fdes = [], []
            self.problem = f"the ELF's call frame information cannot be read ({exc})"

    def rows(self, function: int) -> list[dict]:
        """Every row of the FDE that starts at `function` ([] when none does)."""
        i = bisect.bisect_right(self.starts, function) - 1
        if i < 0 or self.fdes[i][0] != function:
            return []
        return list(self.fdes[i][2].get_decoded().table)

    def row(self, pc: int) -> dict | None:
        """The CFI table row covering pc, or None when no FDE covers it."""
        i = bisect.bisect_right(self.starts, pc) - 1
        if i < 0 or not self.fdes[i][0] <= pc < self.fdes[i][1]:
            return None
        table = self.fdes[i][2].get_decoded().table
        rows = [r for r in table if r["pc"] <= pc]
        return rows[-1] if rows else None


def frame_layout(symbols: Symbols, function: int, sp: int, ra: int) -> tuple[int, int] | None:
    """(the largest CFA offset from SP, where the return address register `ra` is saved relative
    to the CFA) of the function at `function`, from its call frame information: the frame it builds
    on the stack once its prologue has run, and the slot of the return address it pushed (-4: right
    below the CFA). None when the ELF does not describe it, or the function does not save the
    return address (a leaf). sp, ra: the architecture's DWARF register numbers."""
    table = cfi_of(symbols)
    best: tuple[int, int] | None = None
    for row in table.rows(function):
        rule, saved = row["cfa"], row.get(ra)
        if rule.expr is None and rule.reg == sp and saved is not None and saved.type == "OFFSET":
            if best is None or rule.offset > best[0]:
                best = (rule.offset, saved.arg)
    return best


def saved_return_address(symbols: Symbols, read_word, pc: int | None, sp: int | None, sp_reg: int,
                         ra_reg: int) -> int | None:
    """The return address the function at `pc` saved on the stack, where the ELF's call frame
    information says it is at that pc (CFA = sp + the row's CFA offset, the slot the row's rule for
    ra_reg gives), read with read_word(addr) -> int; None: no frame information, a leaf that saved
    none (its return address is still in the register), sp unknown, or unreadable."""
    row = cfi_of(symbols).row(pc) if pc is not None and sp is not None else None
    rule = row.get(ra_reg) if row is not None else None
    if row is None or rule is None or rule.type != "OFFSET" or row["cfa"].reg != sp_reg or row["cfa"].expr:
        return None
    try:
        return read_word(sp + row["cfa"].offset + rule.arg)
    except Exception:  # pylint: disable=broad-except  (any reader's error: unreadable is "not known")
        return None


def cfi_of(symbols: Symbols) -> Cfi:
    """The ELF's Cfi, read once (Symbols.memo)."""
    if "cfi" not in symbols.memo:
        symbols.memo["cfi"] = Cfi(symbols.elf_path)
    return symbols.memo["cfi"]
