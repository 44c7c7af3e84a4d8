"""The RISC-V port (RV32, machine mode: QEMU's virt, ESP32-C3/C6/P4, RP2350's Hazard3): the trap
CSRs (trap.py, RISC-V Privileged Architecture 1.12), the registers at the trap, ESP-IDF's panic
frame (RvExcFrame, components/riscv/include/riscv/rvruntime-frames.h), the call instructions
before a return address and their targets (RISC-V Unprivileged ISA 20191213, 2.5 JAL/JALR and 16.5
C.JAL/C.JALR), and frames from the ELF's call frame information (DWARF numbers: ra x1, sp x2, the
RISC-V ELF psABI's "DWARF Register Numbers")."""
import struct

from arenascope_plugin.acquire import cfi as dwarf_cfi
from arenascope_plugin.acquire.reader import MemoryReadError
from arenascope_plugin.ports import CodeFacts, Fault, PortBase, Register, panic_frames
from arenascope_plugin.ports.cortex_m import faultrecord
from arenascope_plugin.ports.riscv import calls
from arenascope_plugin.ports.riscv import trap as trapmod

# ESP-IDF's RvExcFrame: 37 words in this order (rvruntime-frames.h, STRUCT_FIELDs RV_STK_MEPC ..
# RV_STK_MHARTID).
RV_EXC_FRAME = ("mepc", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
                "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
                "mstatus", "mtvec", "mcause", "mtval", "mhartid")
# ESP-IDF's panic entry points and the argument holding the frame (components/esp_system/port/
# panic_handler.c panic_handler(void *frame, bool pseudo_excause); arch/riscv/panic_arch.c).
PANIC_FRAME_ARGS = (("panic_handler", "frame"), ("panicHandler", "frame"))


class RiscV(PortBase):
    """The Port interface (ports/__init__.py) for 32-bit RISC-V cores in machine mode."""
    name = "riscv32"
    title = "a RISC-V core"
    elf_abis = ("riscv32-ilp32",)
    planner_target = "riscv32"
    # The agent's fault record (target_agent/ports/riscv): the same layout as Cortex-M's, its fields
    # holding the trap CSRs (fault.h, arch ARENASCOPE_FAULT_ARCH_RISCV).
    record = faultrecord
    record_arch = faultrecord.ARCH_RISCV
    RECORD_FRAME = ("pc", "ra", "sp", "a0", "a1", "a2", "a3", "a4")
    # The registers at the trap, pc first (mepc: the trapping instruction).
    frame_names = ("pc", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
                   "a6", "a7")
    pc_phrase = "mepc (the trapping instruction)"            # how the faulting instruction's address is named
    register_word = "trap-time"             # "trap-time r0": a register the fault saved
    frame_phrase = "the registers at the trap"
    return_register = "ra"
    pointer_registers = ("a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "t0", "t1", "t2", "s0", "s1")
    thread_stack_name = "sp"
    register_aliases = {}
    core_registers = ("sp", "ra", "pc", "mcause", "mepc", "mtval", "mstatus", "mtvec")
    dump_register_pattern = (r"x\d{1,2}|zero|ra|sp|gp|tp|t[0-6]|s\d{1,2}|a[0-7]|pc|mcause|mepc|mtval|mstatus|"
                             r"mtvec")

    # -- a Fault's neutral fields -------------------------------------------------------------
    def fault_pc(self, f: Fault) -> int | None:
        return f.frame_value("pc") if f.frame else f.status.mepc

    def fault_address(self, f: Fault) -> tuple[str, int] | None:
        addr = f.status.fault_address
        return ("mtval", addr) if addr is not None else None

    def fault_address_names(self) -> str:
        return "mtval"

    def pre_fault_sp(self, f: Fault) -> int | None:
        return f.frame_value("sp")

    def thread_stack_line(self, f: Fault) -> str:
        return "sp at the trap lies in it"

    limit_name = "the PMP stack guard"
    limit_handler_note = "(the trap entry ran on a stack of its own)"
    limit_frame_note = "mepc is the instruction that hit the guard"

    def stack_limit_register(self, on_thread: bool | None) -> str:
        return "a locked PMP region over the stack's lowest bytes"

    def stack_limit_stopped(self, f: Fault) -> bool:
        return "stack_guard" in f.extra

    def after_fault(self, ctx, f: Fault) -> None:
        """The PMP entry that denied an access fault (read from the core's CSRs now: PMP keeps its
        configuration until reset), and whether it guards the stack's lowest bytes (then the
        stack ran out and the guard stopped it: ctx.stack's bounds)."""
        t, addr = f.status, f.status.fault_address
        if f.stale or addr is None or t.interrupt:
            return
        regions = trapmod.pmp_regions(ctx.core.register)
        denied = trapmod.pmp_denial(regions or [], t.code, addr)
        if denied is None:
            return
        f.extra["pmp"] = denied
        stack = ctx.stack
        if stack is not None and stack.low <= denied.low < stack.low + 4096 and denied.high <= stack.high:
            f.extra["stack_guard"] = denied

    def status_key(self, f: Fault) -> tuple:
        return (f.status.mcause, f.status.mtval)

    def registers(self, f: Fault) -> list[Register]:
        t = f.status
        out = [Register("mcause", t.mcause, f"{'interrupt' if t.interrupt else 'exception'} {t.code}, {t.cause}")]
        if t.mepc is not None:
            out.append(Register("mepc", t.mepc, "the " + ("interrupted" if t.interrupt else "trapping")
                                + " instruction"))
        if t.mtval is not None:
            out.append(Register("mtval", t.mtval, "the faulting address" if t.fault_address is not None else
                                "the illegal instruction's bits" if t.code == 2 and not t.interrupt else
                                "no address for this cause"))
        if t.mstatus is not None:
            out.append(Register("mstatus", t.mstatus, trapmod.mstatus_text(t.mstatus)))
        if t.handler is not None:
            out.append(Register("mtvec", t.handler, "the trap handler's address (BASE)"))
        pmp = f.extra.get("pmp")
        if pmp is not None:
            out.append(Register(f"pmpaddr{pmp.index}", pmp.raw, f"denied the access: {pmp.describe()}"
                                + ("; it guards the stack's lowest bytes" if "stack_guard" in f.extra else "")))
        return out

    def status_lines(self, f: Fault) -> list[str]:
        """None: mcause carries the whole cause, and registers() lists it (the snapshot's `bits`
        would only repeat it; the decode is trap.SOURCE's table)."""
        return []

    def cause_lines(self, f: Fault) -> list[str]:
        t, out = f.status, []
        guard = f.extra.get("stack_guard")
        if guard is not None:
            out.append(f"the stack ran out: the access at mtval {t.fault_address:#x} hit the locked PMP guard over the "
                       f"stack's lowest {guard.high - guard.low} B ({guard.low:#x}-{guard.high:#x}), which stopped it "
                       "before anything below the stack was written")
        if t.code in (1, 12) and not t.interrupt and f.pc is not None and f.pc < 0x100:
            out.append(f"an instruction fetch from {f.pc:#x}: a call through a null or corrupted function pointer, "
                       "or a return to a corrupted address (see ra)")
        if t.code in (4, 6, 0) and not t.interrupt:
            out.append("a misaligned access: a pointer of the wrong type or alignment (this core does not do "
                       "misaligned accesses in hardware)")
        return out

    # -- reads at a stop ----------------------------------------------------------------------
    def live_fault(self, ctx, read=None) -> Fault | None:
        """The trap the core is halted in (mtvec's handler) when it is a fault, else the one
        ESP-IDF's panic handler holds in its RvExcFrame argument, else None."""
        core = ctx.core
        t = trapmod.read(core, ctx.symbols.name_at)
        if t is not None and t.in_handler and t.is_fault:
            frame = [t.mepc] + [core.register(n) for n in self.frame_names[1:]]
            known = None not in frame
            note = ("" if known else "some registers at the trap are not readable here") + \
                ("; " if not known else "") + ("the registers are the core's at the stop in the trap handler: a "
                                               "handler that saved or changed them (a pushed frame) has moved sp")
            return Fault(port=self, source="core registers (halted in the trap handler, mtvec)", exception=t.cause,
                         status=t, frame=frame if known else None, frame_note=note, halted_in_handler=True)
        return self._panic_frame_fault(ctx)

    def _panic_frame_fault(self, ctx) -> Fault | None:
        for function, addr in panic_frames(ctx, PANIC_FRAME_ARGS):
            try:
                data = ctx.reader.read(addr, 4 * len(RV_EXC_FRAME))
            except MemoryReadError as exc:
                return Fault(port=self, source=f"ESP-IDF's panic frame (RvExcFrame) at {addr:#x}", exception=None,
                             status=trapmod.Trap(mcause=0, mepc=None, mtval=None, handler=None, in_handler=False),
                             frame_note=f"the frame is unreadable ({exc.why})", status_unknown="mcause unknown")
            return exc_frame_fault(self, data, addr, f"ESP-IDF's panic frame (RvExcFrame) at {addr:#x}, the "
                                   f"argument of {function}")
        return None

    def state_unknown(self, ctx) -> str:
        if ctx.core.register("mcause") is not None:
            return ""
        return ("the RISC-V core's trap registers (mcause, mepc, mtval) cannot be read here (the core runs, the "
                "GDB server's target description has no CSRs, or a RAM dump's registers file lacks them), so "
                "whether it stopped in a trap handler, and why, is not known: halt it and run `arena fault` again, "
                "or `info registers mcause mepc mtval`")

    def from_record(self, rec) -> Fault:
        """The trap the agent's record holds: exc_return = mstatus, cfsr = mcause, mmfar = mtval,
        bfar = mepc, shcsr = mtvec, frame = mepc, ra, sp, a0-a4 (fault.h)."""
        t = trapmod.Trap(mcause=rec.cfsr, mepc=rec.bfar, mtval=rec.mmfar, handler=rec.shcsr & ~3, in_handler=True,
                         mstatus=rec.exc_return)
        copied = bool(rec.flags & faultrecord.FLAG_FRAME_COPIED)
        return Fault(port=self, source="", exception=t.cause, status=t, frame_addr=None,
                     frame=list(rec.frame) if copied else None, names=self.RECORD_FRAME,
                     frame_note="" if copied else "the agent did not copy the registers")

    def thread_sp(self, core) -> int | None:
        return core.register("sp")

    def handler_exception(self, ctx) -> str | None:
        """The trap being handled when the core is in mtvec's handler, by name, or None."""
        t = trapmod.read(ctx.core, ctx.symbols.name_at)
        return t.cause if t is not None and t.in_handler else None

    # -- code ---------------------------------------------------------------------------------
    def call_target(self, reader, return_address: int) -> int | None:
        """The address a JAL or C.JAL right before return_address calls (imm[20|10:1|11|19:12] of
        JAL, imm[11|4|9:8|10|6|7|3:1|5] of C.JAL, sign-extended, added to the call's own address),
        or None: a JALR through a register, or no call."""
        kind = self.call_before(reader, return_address)
        if kind == "JAL":
            at = return_address - 4
            w = struct.unpack("<I", reader.read(at, 4))[0]
            imm = (w >> 31 & 1) << 20 | (w >> 21 & 0x3FF) << 1 | (w >> 20 & 1) << 11 | (w >> 12 & 0xFF) << 12
            return (at + (imm - (1 << 21) if imm >> 20 else imm)) & 0xFFFFFFFF
        if kind == "C.JAL":
            at = return_address - 2
            h = struct.unpack("<H", reader.read(at, 2))[0]
            imm = ((h >> 12 & 1) << 11 | (h >> 11 & 1) << 4 | (h >> 9 & 3) << 8 | (h >> 8 & 1) << 10 |
                   (h >> 7 & 1) << 6 | (h >> 6 & 1) << 7 | (h >> 3 & 7) << 1 | (h >> 2 & 1) << 5)
            return (at + (imm - (1 << 12) if imm >> 11 else imm)) & 0xFFFFFFFF
        return None

    def saved_return_address(self, ctx, f: Fault) -> int | None:
        """The ra the faulting function saved on its stack (the ELF's call frame information at
        mepc, from the SP at the trap), so that `arena fault` can tell a stale ra from the caller."""
        return dwarf_cfi.saved_return_address(
            ctx.symbols, lambda a: int.from_bytes(ctx.reader.read(a, 4), "little"), f.pc, f.pre_fault_sp, 2, 1)

    def frame_layout(self, symbols, function: int):
        """(frame bytes, where ra is saved relative to the CFA) from the ELF's call frame
        information, or None (acquire/cfi.py)."""
        return dwarf_cfi.frame_layout(symbols, function, 2, 1)

    # -- the stack's worst case before flashing -----------------------------------------------
    dwarf_sp = 2
    dwarf_frame_registers = (2, 8)  # sp (x2) and the frame pointer s0 (x8)
    nested_exceptions = False  # a trap clears mstatus.MIE (Privileged Architecture 3.1.6.1)
    exception_entry_note = "the core saves no registers on the stack when it takes a trap (its handler's frame does)"

    def decode_code(self, code: bytes, base: int, data: list) -> CodeFacts:
        return calls.decode(code, base, data)

    def prologue_bytes(self, code: bytes) -> int | None:
        return calls.prologue_bytes(code)

    def entry_points(self, image, facts: dict) -> list[tuple[str, int]]:
        """The ELF's entry point (reset) and each trap handler the code writes to mtvec
        (Privileged Architecture 3.1.7; direct mode: one handler for every trap and interrupt)."""
        out = super().entry_points(image, facts)
        seen = {a for _, a in out}
        for lo, f in sorted(facts.items()):
            for vector in sorted(f.trap_vectors - seen):
                seen.add(vector)
                named = image.function_at(lo)
                out.append((f"trap handler (mtvec, set in {named[2] if named else hex(lo)})", vector))
        return out

    def spins(self, code: bytes) -> bool:
        """`j .`: JAL x0, 0 (0x0000006f), or C.J 0 (0xa001)."""
        return code[:4] == b"\x6f\x00\x00\x00" or code[:2] == b"\x01\xa0"

    def call_before(self, reader, return_address: int) -> str | None:
        """The call that ends right before return_address: JAL or JALR writing ra (x1), 4 bytes
        before, or C.JAL / C.JALR, 2 bytes before; None when there is none."""
        try:
            code = reader.read(return_address - 4, 4)
        except Exception:  # pylint: disable=broad-except  (any reader's error: unreadable is "no call")
            return None
        word = struct.unpack("<I", code)[0]
        if word & 0x7F in (0x6F, 0x67) and (word >> 7 & 0x1F) == 1:
            return "JAL" if word & 0x7F == 0x6F else f"JALR x{word >> 15 & 0x1F}"
        half = word >> 16
        if half & 0xE003 == 0x2001:
            return "C.JAL"
        if half & 0xF07F == 0x9002 and half >> 7 & 0x1F:
            return f"C.JALR x{half >> 7 & 0x1F}"
        return None







def exc_frame_fault(port, data: bytes, addr: int, source: str) -> Fault:
    """The Fault an RvExcFrame's bytes hold (RV_EXC_FRAME's 37 little-endian words)."""
    words = dict(zip(RV_EXC_FRAME, struct.unpack_from(f"<{len(RV_EXC_FRAME)}I", data), strict=True))
    t = trapmod.Trap(mcause=words["mcause"], mepc=words["mepc"], mtval=words["mtval"],
                     handler=words["mtvec"] & ~3, in_handler=True, mstatus=words["mstatus"])
    frame = [words["mepc"]] + [words[n] for n in port.frame_names[1:]]
    return Fault(port=port, source=source, exception=t.cause, status=t, frame_addr=addr, frame=frame)


PORT = RiscV()
