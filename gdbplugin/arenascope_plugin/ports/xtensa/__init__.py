"""The Xtensa port (ESP32, ESP32-S3: Xtensa LX6/LX7, windowed ABI). Debian's GDB has no Xtensa
target and QEMU 7.2 no ESP32 machine, so this port is checked by unit tests on values laid out as
ESP-IDF documents them (tests/plugin/test_ports.py), not on a running core.

Sources: Xtensa Instruction Set Architecture Reference Manual, 4.4.1.5 (EXCCAUSE's values, Table
4-64) and 4.4.1.7 (EXCVADDR: the virtual address of a memory-access exception), 4.4.1.4 (PS: INTLEVEL
3:0, EXCM 4, UM 5, RING 7:6, OWB 11:8, CALLINC 17:16, WOE 18); ESP-IDF's cause names
(components/esp_system/port/arch/xtensa/panic_arch.c, the table its panic handler prints: "Guru
Meditation Error: Core 0 panic'ed (StoreProhibited)"); ESP-IDF's exception frame XtExcFrame
(components/xtensa/include/xtensa_context.h: exit, pc, ps, a0-a15, sar, exccause, excvaddr, then
lbeg, lend, lcount on cores with the loop option, as ESP32 and ESP32-S3)."""
import struct

from arenascope_plugin.acquire.reader import MemoryReadError
from arenascope_plugin.ports import Fault, PortBase, Register, panic_frames

CAUSES = ["IllegalInstruction", "Syscall", "InstructionFetchError", "LoadStoreError", "Level1Interrupt", "Alloca",
          "IntegerDivideByZero", "PCValue", "Privileged", "LoadStoreAlignment", "res", "res", "InstrPDAddrError",
          "LoadStorePIFDataError", "InstrPIFAddrError", "LoadStorePIFAddrError", "InstTLBMiss", "InstTLBMultiHit",
          "InstFetchPrivilege", "res", "InstrFetchProhibited", "res", "res", "res", "LoadStoreTLBMiss",
          "LoadStoreTLBMultihit", "LoadStorePrivilege", "res", "LoadProhibited", "StoreProhibited", "res", "res",
          "Cp0Dis", "Cp1Dis", "Cp2Dis", "Cp3Dis", "Cp4Dis", "Cp5Dis", "Cp6Dis", "Cp7Dis"]
MEANINGS = {
    0: "an illegal instruction: a bad function pointer, a corrupted return address, or a jump into data",
    2: "an instruction fetch failed (EXCVADDR has the address)",
    3: "a load or store failed (EXCVADDR has the address)",
    6: "an integer division by zero",
    9: "an unaligned load or store (EXCVADDR has the address)",
    20: "an instruction fetch from an address that cannot hold code: a call through a null or corrupted function "
        "pointer, or a return to a corrupted address",
    28: "a load from an address no memory answers (EXCVADDR): a null or dangling pointer, or one the stack left",
    29: "a store to an address no memory answers (EXCVADDR): a null or dangling pointer, or one the stack left",
}
ADDRESS_CAUSES = {2, 3, 9, 12, 13, 14, 15, 16, 17, 18, 20, 24, 25, 26, 28, 29}  # EXCVADDR is loaded
FAULT_CAUSES = ADDRESS_CAUSES | {0, 6, 8}
XT_EXC_FRAME = ("exit", "pc", "ps") + tuple(f"a{i}" for i in range(16)) + ("sar", "exccause", "excvaddr")
# ESP-IDF's panic entry points and the argument holding the XtExcFrame pointer.
PANIC_FRAME_ARGS = (("panic_handler", "frame"), ("panicHandler", "frame"), ("xt_unhandled_exception", "frame"))


def cause_name(code: int) -> str:
    name = CAUSES[code] if 0 <= code < len(CAUSES) else "res"
    return f"cause {code} (reserved)" if name == "res" else name


def ps_text(ps: int) -> str:
    """What PS says (the ISA's field layout)."""
    return (f"INTLEVEL {ps & 0xF}, EXCM {ps >> 4 & 1} ({'in an exception handler' if ps >> 4 & 1 else 'no exception'}"
            f"), UM {ps >> 5 & 1}, RING {ps >> 6 & 3}, OWB {ps >> 8 & 0xF}, CALLINC {ps >> 16 & 3}, WOE {ps >> 18 & 1}")


class Status:
    """An Xtensa exception's registers (the port's Fault.status)."""

    def __init__(self, exccause: int, excvaddr: int | None, epc1: int | None, ps: int | None):
        self.exccause, self.excvaddr, self.epc1, self.ps = exccause, excvaddr, epc1, ps

    @property
    def cause(self) -> str:
        return cause_name(self.exccause)

    @property
    def fault_address(self) -> int | None:
        return self.excvaddr if self.exccause in ADDRESS_CAUSES else None


class Xtensa(PortBase):
    """The Port interface (ports/__init__.py) for Xtensa LX6/LX7 cores (windowed ABI)."""
    name = "xtensa"
    title = "an Xtensa core"
    elf_abis = ("xtensa",)
    planner_target = "xtensa"
    frame_names = ("pc", "ps") + tuple(f"a{i}" for i in range(16))
    pc_phrase = "EPC1 (the faulting instruction)"            # how the faulting instruction's address is named
    register_word = "saved"             # "saved r0": a register the fault saved
    frame_phrase = "the exception frame"
    return_register = "a0"
    pointer_registers = tuple(f"a{i}" for i in range(2, 16))
    thread_stack_name = "a1"
    register_aliases = {}
    core_registers = ("pc", "ps", "a0", "a1", "exccause", "excvaddr", "epc1")
    dump_register_pattern = r"a\d{1,2}|pc|ps|sar|exccause|excvaddr|epc\d"

    def fault_pc(self, f: Fault) -> int | None:
        return f.frame_value("pc") if f.frame else f.status.epc1

    def fault_address(self, f: Fault) -> tuple[str, int] | None:
        addr = f.status.fault_address
        return ("EXCVADDR", addr) if addr is not None else None

    def fault_address_names(self) -> str:
        return "EXCVADDR"

    def pre_fault_sp(self, f: Fault) -> int | None:
        return f.frame_value("a1")

    def thread_stack_line(self, f: Fault) -> str:
        return "a1 (sp) at the exception lies in it"

    def stack_limit_register(self, on_thread: bool | None) -> str:
        return "the stack guard (a watchpoint or the PMS)"

    def status_key(self, f: Fault) -> tuple:
        return (f.status.exccause, f.status.excvaddr)

    def registers(self, f: Fault) -> list[Register]:
        st = f.status
        out = [Register("EXCCAUSE", st.exccause, f"{st.cause}: {MEANINGS.get(st.exccause, 'see the Xtensa ISA')}")]
        if st.excvaddr is not None:
            out.append(Register("EXCVADDR", st.excvaddr, "the faulting address" if st.fault_address is not None else
                                "not an address for this cause"))
        if st.epc1 is not None:
            out.append(Register("EPC1", st.epc1, "the faulting instruction"))
        if st.ps is not None:
            out.append(Register("PS", st.ps, ps_text(st.ps)))
        return out

    def status_lines(self, f: Fault) -> list[str]:
        """None: EXCCAUSE carries the whole cause, and registers() lists it (the names are ESP-IDF's
        Guru Meditation line's, the values the Xtensa ISA's Table 4-64)."""
        return []

    def cause_lines(self, f: Fault) -> list[str]:
        meaning = MEANINGS.get(f.status.exccause)
        return [meaning] if meaning else []

    def live_fault(self, ctx, read=None) -> Fault | None:
        """ESP-IDF's panic frame (XtExcFrame, the panic handler's argument) when the core is halted
        in it, else the core's exception registers when PS.EXCM says an exception is being
        handled and EXCCAUSE names a fault."""
        for function, addr in panic_frames(ctx, PANIC_FRAME_ARGS):
            try:
                data = ctx.reader.read(addr, 4 * len(XT_EXC_FRAME))
            except MemoryReadError:
                continue
            return exc_frame_fault(self, data, addr, f"ESP-IDF's panic frame (XtExcFrame) at {addr:#x}, the "
                                   f"argument of {function}")
        core = ctx.core
        cause, ps = core.register("exccause"), core.register("ps")
        if cause is None or ps is None or not ps >> 4 & 1 or cause not in FAULT_CAUSES:
            return None
        st = Status(cause, core.register("excvaddr"), core.register("epc1"), ps)
        frame = [st.epc1, ps] + [core.register(f"a{i}") for i in range(16)]
        return Fault(port=self, source="core registers (PS.EXCM: halted in the exception handler)",
                     exception=st.cause, status=st, frame=frame if None not in frame else None,
                     frame_note="the a-registers are the handler's window, not the faulting code's: ESP-IDF's "
                     "panic frame (XtExcFrame) has the faulting code's", halted_in_handler=True)

    def state_unknown(self, ctx) -> str:
        if ctx.core.register("exccause") is not None:
            return ""
        return ("the Xtensa core's exception registers (EXCCAUSE, EXCVADDR, EPC1, PS) cannot be read here (Debian's "
                "GDB has no Xtensa target: use Espressif's xtensa-esp32-elf-gdb through `idf.py gdb`), so whether "
                "it stopped in an exception handler is not known")

    def thread_sp(self, core) -> int | None:
        return core.register("a1")

    def handler_exception(self, ctx) -> str | None:
        cause, ps = ctx.core.register("exccause"), ctx.core.register("ps")
        return cause_name(cause) if cause is not None and ps is not None and ps >> 4 & 1 else None

    def spins(self, code: bytes) -> bool:
        """`j .`: J with offset -4 relative to PC+4 (0x06 | 0xffff << 6: bytes 06 ff ff)."""
        return code[:3] == b"\x06\xff\xff"

    def call_before(self, reader, return_address: int) -> str | None:
        """CALL4/8/12 (3 bytes, op0 5) or CALLX4/8/12 right before the return address. a0 on the
        windowed ABI keeps the window increment in its top 2 bits: the address is the low 30 bits
        with the top 2 of the caller's PC, which on ESP32 and ESP32-S3 code (instruction buses at
        0x40000000-0x7fffffff) are 01."""
        addr = return_address & 0x3FFFFFFF | 0x40000000
        try:
            code = reader.read(addr - 3, 3)
        except Exception:  # pylint: disable=broad-except  (any reader's error: unreadable is "no call")
            return None
        if code[0] & 0xF == 5 and code[0] >> 4 & 3:
            return f"CALL{4 * (code[0] >> 4 & 3)}"
        if code[0] & 0xF == 0 and code[0] >> 4 & 0xF in (0xD, 0xE, 0xF) and code[2] == 0 and code[1] & 0xF0 == 0:
            return f"CALLX{4 * ((code[0] >> 4) - 0xC)}"
        return None


def exc_frame_fault(port, data: bytes, addr: int, source: str) -> Fault:
    """The Fault an XtExcFrame's bytes hold (XT_EXC_FRAME's little-endian words)."""
    words = dict(zip(XT_EXC_FRAME, struct.unpack_from(f"<{len(XT_EXC_FRAME)}I", data), strict=True))
    st = Status(words["exccause"], words["excvaddr"], words["pc"], words["ps"])
    frame = [words["pc"], words["ps"]] + [words[f"a{i}"] for i in range(16)]
    return Fault(port=port, source=source, exception=st.cause, status=st, frame_addr=addr, frame=frame)


PORT = Xtensa()
