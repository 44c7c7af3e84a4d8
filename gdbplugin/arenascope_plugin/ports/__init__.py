"""Architecture ports: all that arenascope knows of one processor architecture, one package each
(cortex_m/, riscv/, xtensa/), behind the one interface below. Nothing outside ports/ names an
architecture's register or decodes its instructions (tests/plugin/test_ports.py enforces it):
the analyses read a Fault's neutral fields, and a port fills them.

A port says (see Port): which ELF ABIs it serves (acquire/elfinfo.abi, from the ELF header), the
planner's --target for them, the registers a core is asked for at a stop and from a dump's
registers file, whether and how the core is in a fault or trap handler and the Fault it took
(cause decoded, faulting address, the registers saved at the fault, the SP before it), the call
instruction before a return address, whether the PC spins on itself, and the stack-limit
mechanism. No GDB import here or in a port.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Register:
    """One register of a fault or trap, as the report, the JSON and the snapshot show it."""
    name: str            # as the architecture's manual spells it: "CFSR", "mcause", "EXCCAUSE"
    value: int | None    # None: not known (e.g. a RAM dump without it)
    meaning: str = ""    # what its value says, one line; "" when it says nothing more


@dataclass
class Fault:
    """One fault or trap, from the agent's record or from the core. Neutral fields only: what the
    architecture's registers say is the port's (`port`, `status`), asked through the properties.
    frame: the registers the core saved (Cortex-M: the stacked frame) or held at the trap (RISC-V),
    in port.frame_names order; None when not known."""
    port: Any                          # the Port that decoded it
    source: str                        # where it was read: "the agent's fault record ...", "core registers ..."
    exception: str | None              # "HardFault", "store/AMO access fault", ...
    status: Any                        # the port's own record of the fault (its status registers)
    frame_addr: int | None = None      # where the saved registers are (Cortex-M: the stacked frame)
    frame: list[int] | None = None
    frame_note: str = ""               # why there is no frame, or how it was found
    pc_where: str = ""
    lr_where: str = ""
    stale: bool = False                # from before a reset: the memory now is the next boot's
    halted_in_handler: bool = False    # from the core's registers, halted inside the fault handler
    status_unknown: str = ""           # why the status registers are not known ("" when they were read)
    extra: dict = field(default_factory=dict)   # the port's further facts (e.g. Secure fault status)
    names: tuple | None = None         # frame's register names when not port.frame_names (a record's subset)

    @property
    def arch(self) -> str:
        return self.port.name

    @property
    def frame_names(self) -> tuple:
        """The names of frame's registers, in its order."""
        return self.names or tuple(self.port.frame_names)

    def frame_value(self, name: str) -> int | None:
        """A saved register by the port's name for it ("pc", "lr"), or None."""
        names = self.frame_names
        return self.frame[names.index(name)] if self.frame and name in names else None

    @property
    def pc(self) -> int | None:
        """The faulting (or interrupted) instruction's address."""
        return self.port.fault_pc(self)

    @property
    def return_address(self) -> int | None:
        """The return address register at the fault (Cortex-M LR, RISC-V ra), or None."""
        return self.frame_value(self.port.return_register)

    @property
    def argument_registers(self) -> list[tuple[str, int]]:
        """(name, value) of the saved registers an access may have gone through (argument and
        scratch registers), for tying the faulting address to an overwritten object."""
        return [(n, self.frame_value(n)) for n in self.port.pointer_registers
                if self.frame_value(n) is not None]

    @property
    def fault_address(self) -> tuple[str, int] | None:
        """(register name, faulting address) when the architecture reported a valid one."""
        return self.port.fault_address(self)

    @property
    def pre_fault_sp(self) -> int | None:
        """The SP before the fault (the faulting code's), or None."""
        return self.port.pre_fault_sp(self)

    @property
    def stack_limit_stopped(self) -> bool:
        """A stack-limit mechanism (MSPLIM/PSPLIM, PMP) stopped a stack overflow: nothing below
        the limit was written and no frame was saved."""
        return self.port.stack_limit_stopped(self)

    @property
    def on_thread_stack(self) -> bool | None:
        """Whether the frame was saved on the thread (RTOS task) stack rather than the main
        stack: None when the architecture or the record does not say."""
        return self.port.on_thread_stack(self)

    @property
    def thread_stack_name(self) -> str:
        """How the architecture names the running task's stack pointer ("PSP", "sp")."""
        return self.port.thread_stack_name

    def registers(self) -> list[Register]:
        """The fault's status registers, decoded, for reports, JSON and snapshots."""
        return self.port.registers(self)

    def cause_lines(self) -> list[str]:
        """The cause in plain words, one fact a line (bits and what the frame shows)."""
        return self.port.cause_lines(self)

    def status_lines(self) -> list[str]:
        """The status registers' set bits, one a line (the port's decode, with its source)."""
        return self.port.status_lines(self)

    def key(self) -> tuple:
        """What tells one fault from the next (the live poller says each once)."""
        return (self.exception, self.pc, self.port.status_key(self), self.source)


# What a port's code decoder (Port.decode_code) calls each control transfer out of a function.
CALL = "call"                    # a direct call (Thumb BL, RISC-V JAL ra / C.JAL / AUIPC+JALR ra)
JUMP = "jump"                    # a direct branch: a tail call when it leaves the function
INDIRECT_CALL = "indirect call"  # a call through a register (BLX Rm, JALR ra, rs / C.JALR)
INDIRECT_JUMP = "indirect jump"  # a branch through a register that is no return (BX Rm, JR rs)


@dataclass(frozen=True)
class CodeSite:
    """One control transfer a port's decoder found in a function's code."""
    at: int                   # the instruction's address
    kind: str                 # CALL, JUMP, INDIRECT_CALL or INDIRECT_JUMP
    target: int | None        # where it goes (a direct one; Thumb bit clear), else None
    text: str                 # the instruction as the architecture's manual names it: "BL", "BLX r3"
    slot: int | None = None   # an indirect call through a word loaded from [a word the function loaded] + slot:
                              # a C++ virtual call's vtable slot (bytes from the address point), if it is one
    field: bool = False       # an indirect call through a word loaded from [a register holding no word the
                              # function loaded] + offset: a struct's function pointer, no virtual call


@dataclass
class CodeFacts:
    """What a port's decoder read from one function's code (Port.decode_code)."""
    sites: list[CodeSite] = field(default_factory=list)
    constants: set = field(default_factory=set)     # addresses the code builds or loads as constants
    trap_vectors: set = field(default_factory=set)  # trap handlers the code installs (RISC-V mtvec)
    dynamic_sp: str = ""  # the first instruction that moves SP by a register (alloca, VLAs), as "SUB.W sp, sp, r3"


def linear_sweep(code: bytes, base: int, data: list, one) -> set:
    """Walks one function's code at `base` in 16-bit units, the way both decoders read it: calls
    one(at, halfword) at each instruction start outside the sorted `data` spans [(lo, hi)], which
    returns the instruction's length in bytes (None: it runs past the end, and the walk stops).
    Returns every aligned little-endian word of the data spans (literal pools: constants)."""
    end = base + len(code)
    words = {int.from_bytes(code[a - base:a - base + 4], "little")
             for lo, hi in data for a in range((lo + 3) & ~3, hi - 3, 4)}
    spans = iter(data + [(end, end)])
    skip = next(spans)
    at = base
    while at + 2 <= end:
        if at >= skip[0]:
            at = max(at, skip[1])
            skip = next(spans, (end, end))
            continue
        length = one(at, int.from_bytes(code[at - base:at - base + 2], "little"))
        if length is None:
            break
        at += length
    return words


class PortBase:
    """What a port does when its architecture has nothing to say: the defaults every port may
    override (a port is a class with the attributes and methods below and those of CortexM)."""
    record = None               # the agent's fault record decoder (ports/cortex_m/faultrecord.py's layout)
    record_arch = None          # the record's arch field for this port (fault.h ARENASCOPE_FAULT_ARCH_*)
    fault_sp_symbols: tuple = ()
    dump_status_words: tuple = ()
    thread_limit_words = "the stack limit stopped it at pxStack"  # a task's stopped overflow
    thread_stack_phrase = "the running task's stack"             # `arena stack`: whose stack SP is on
    # The stack-limit verdict's words (analyse/faults.py): what stopped the overflow, where the
    # handler ran, and what the frame says.
    limit_name = "the stack limit"
    limit_handler_note = ""
    limit_frame_note = "the faulting instruction is the deepest call"
    exception_mark = "<signal handler called>"  # GDB's frame between a handler and what it interrupted

    def prefetch(self, reader, pieces):
        return reader.read

    def status_clear(self, reader) -> bool:
        return False

    def after_fault(self, ctx, f: Fault) -> None:
        return None

    def from_record(self, rec) -> Fault:
        raise ValueError(f"the agent's fault record is not kept on {self.title}")

    def reread_frame(self, reader, f: Fault) -> None:
        return None

    def access_line(self, ctx, f: Fault) -> str | None:
        return None

    def stack_limit_hit_now(self, ctx) -> bool:
        return False

    def stack_limit_stopped(self, f: Fault) -> bool:
        return False

    def on_thread_stack(self, f: Fault) -> bool | None:
        return None

    def frames_stopped(self, f: Fault) -> bool:
        return False

    def state_unknown(self, ctx) -> str:
        """Why whether the core is in a fault or trap handler is not known, or "" when it is."""
        return ""

    def code_address(self, addr: int) -> int:
        return addr

    def call_target(self, reader, return_address: int) -> int | None:
        return None

    def saved_return_address(self, ctx, f: Fault) -> int | None:
        return None

    def frame_layout(self, symbols, function: int):
        return None

    def unwind(self, symbols, read, registers: dict, limit: int | None = None):
        return None

    # -- the stack's worst case before flashing (analyse/stackdepth.py) ------------------------
    dwarf_sp = None           # the stack pointer's DWARF register number (None: no frames read)
    dwarf_frame_registers: tuple = ()  # the registers a CFA rule may use for a fixed frame (SP, FP)
    switch_helpers: tuple = ()  # runtime helpers whose indirect jumps go back into their caller
    nested_exceptions = False   # whether a handler can be interrupted by another (each stacks its frame)
    exception_entry_note = "the core saves no registers on the stack when it takes an interrupt"

    def decode_code(self, code: bytes, base: int, data: list) -> CodeFacts | None:
        """The calls, branches and constants in one function's code (`code` at address `base`;
        `data`: [(lo, hi)] spans in it that are data, not instructions), or None when this
        architecture has no decoder."""
        return None

    def exception_entry_bytes(self, fpu: bool) -> int:
        """What the hardware pushes on the stack when it takes an exception or interrupt, in bytes
        at most (fpu: the firmware uses the floating-point unit)."""
        return 0

    def code_pointer(self, value: int) -> int | None:
        """The code address a word holding a function pointer stands for, or None when it cannot be
        one (Cortex-M: a Thumb address has bit 0 set)."""
        return self.code_address(value)

    def fault_handlers(self, image) -> list[tuple[str, int]]:
        """(exception name, handler address) of the handlers the core enters on a fault (not on an
        interrupt), from the ELF; [] when the architecture shares one handler with interrupts."""
        return []

    def prologue_bytes(self, code: bytes) -> int | None:
        """The stack a function's prologue takes, in bytes, read from its first instructions (for
        code the ELF has no call frame information for); None when it is dynamic or not known."""
        return None

    def entry_points(self, image, facts: dict) -> list[tuple[str, int]]:
        """(what, address) of the code the core starts in: reset first, then each exception or
        interrupt handler, from the ELF (`image`: acquire/elfcode.Image; `facts`: {function address:
        CodeFacts} of its functions)."""
        return [("Reset (the ELF's entry point)", self.code_address(image.entry))] if image.entry else []

    def report_lines(self, f: Fault) -> list[str]:
        return [f"{r.name} {r.value:#010x}: {r.meaning}" for r in f.registers() if r.value is not None]

    def frame_lines(self, f: Fault) -> list[str]:
        where = f"saved at {f.frame_addr:#x}" if f.frame_addr is not None else "at the fault"
        regs = "  ".join(f"{n} {v:#010x}" for n, v in zip(f.frame_names, f.frame, strict=False))
        return [f"registers {where}: {regs}"]


def panic_frames(ctx, args: tuple[tuple[str, str], ...]):
    """(function, frame address) for each of `args` ((function, its argument holding a saved
    frame), as ESP-IDF's panic handlers take one) whose function is on the call chain now and whose
    argument is not null, in the order given. The call chain is unwound once."""
    frames = ctx.core.frames()
    for function, arg in args:
        if any(function in fr for fr in frames):
            addr = ctx.core.frame_args(function, (arg,)).get(arg)
            if addr:
                yield function, addr


def for_abi(abi: str | None):
    """The port for an ELF's C ABI (acquire/elfinfo.abi's names), or None for an ABI no port serves
    (a host build, an unknown machine)."""
    return next((port for port in all_ports() if abi in port.elf_abis), None)


def of(symbols):
    """The port for the firmware Symbols describe (its ELF header's ABI), remembered per ELF;
    Cortex-M's when no port serves that ABI (see for_abi)."""
    memo = getattr(symbols, "memo", None)
    if memo is not None and "port" in memo:
        return memo["port"]
    abi = symbols.abi() if hasattr(symbols, "abi") else None
    port = for_abi(abi) or all_ports()[0]
    if memo is not None:
        memo["port"] = port
    return port


_PORTS: list = []


def all_ports() -> list:
    """Every port: each package in ports/ with a PORT (a new architecture is one package), Cortex-M
    first (the default, and the agent's record layout), then by name."""
    if not _PORTS:
        import importlib  # pylint: disable=import-outside-toplevel
        import pathlib  # pylint: disable=import-outside-toplevel
        import pkgutil  # pylint: disable=import-outside-toplevel
        here = [str(pathlib.Path(__file__).parent)]
        found = [importlib.import_module(f"{__name__}.{m.name}").PORT for m in pkgutil.iter_modules(here)
                 if m.ispkg]
        _PORTS.extend(sorted(found, key=lambda p: (p.name != "cortex-m", p.name)))
    return list(_PORTS)
