"""The Cortex-M port (ARMv6-M, ARMv7-M, ARMv8-M Baseline and Mainline): its fault exceptions, the
System Control Block's fault status (CFSR, HFSR, MMFAR, BFAR; SFSR and SFAR on ARMv8-M), the
stacked frame EXC_RETURN chooses, MSPLIM/PSPLIM, Thumb calls. Sources: faultrecord.py (the
decode, ARMv7-M ARM B1.5 and B3.2, ARMv8-M ARM D1.2), live.py (the reads at a stop), unwind.py
(the ELF's call frame information through exception frames)."""
from arenascope_plugin.ports import CodeFacts, Fault, PortBase, Register
from arenascope_plugin.ports.cortex_m import calls, faultrecord, live, vectors
from arenascope_plugin.ports.cortex_m import unwind as cfi


class CortexM(PortBase):
    """The Port interface (ports/__init__.py) for Cortex-M cores."""
    name = "cortex-m"
    title = "a Cortex-M core"
    elf_abis = ("arm-eabi",)
    planner_target = "cortex-m"
    frame_names = faultrecord.FRAME_NAMES          # the stacked frame: r0-r3, r12, lr, pc, xpsr
    pc_phrase = "the stacked PC"            # how the faulting instruction's address is named
    register_word = "stacked"             # "stacked r0": a register the fault saved
    frame_phrase = "the stacked frame"
    return_register = "lr"
    pointer_registers = ("r0", "r1", "r2", "r3", "r12")
    thread_stack_name = "PSP"
    thread_stack_phrase = "the process stack, PSP"   # `arena stack`: whose stack SP is on
    thread_limit_words = "PSPLIM stopped it at pxStack (UsageFault STKOF)"  # a task's stopped overflow
    # What a Core is asked for (a dump's registers file gives these names; acquire/dumpcore.py),
    # and the System Control Block words such a file may add (the dump holds no SCB).
    register_aliases = {"xpsr": ("xpsr", "xPSR")}  # QEMU's gdbstub says xpsr, OpenOCD xPSR
    core_registers = ("sp", "lr", "pc", "xpsr", "msp", "psp")
    dump_register_pattern = r"r\d{1,2}|sp|lr|pc|xpsr|msp|psp|primask|basepri|faultmask|control|fpscr"
    dump_status_words = ("icsr", "shcsr", "cfsr", "hfsr", "mmfar", "bfar")
    fault_sp_symbols = live.FAULT_SP_SYMBOLS
    # The agent's fault record is this port's layout (target_agent/include/arenascope/fault.h).
    record = faultrecord
    record_arch = faultrecord.ARCH_CORTEX_M

    # -- a Fault's neutral fields -------------------------------------------------------------
    def fault_pc(self, f: Fault) -> int | None:
        return f.frame_value("pc")

    def fault_address(self, f: Fault) -> tuple[str, int] | None:
        st = f.status
        if st.bfar is not None:
            return "BFAR", st.bfar
        if st.mmfar is not None:
            return "MMFAR", st.mmfar
        return None

    def fault_address_names(self) -> str:
        return "BFAR/MMFAR"

    def pre_fault_sp(self, f: Fault) -> int | None:
        return faultrecord.pre_fault_sp(f.status, f.frame_addr, f.frame)

    def stack_limit_stopped(self, f: Fault) -> bool:
        return bool(f.status.cfsr >> 20 & 1)  # UFSR.STKOF (ARMv8-M; reserved 0 before)

    def on_thread_stack(self, f: Fault) -> bool | None:
        er = f.status.exc_return
        return None if er is None else bool(er >> 2 & 1)  # EXC_RETURN.SPSEL

    def thread_stack_line(self, f: Fault) -> str:
        """Why the frame is on the thread stack, with the value that says so."""
        return f"EXC_RETURN {f.status.exc_return:#010x}: the frame is on the process stack (PSP)"

    limit_name = "the stack limit register"
    limit_handler_note = "(the fault handler itself ran on the guard band below the limit)"
    limit_frame_note = "there is no stacked frame (the stacking stopped at the limit)"

    def stack_limit_register(self, on_thread: bool | None) -> str:
        return {True: "PSPLIM", False: "MSPLIM"}.get(on_thread, "MSPLIM or PSPLIM")

    def status_key(self, f: Fault) -> tuple:
        return (f.status.cfsr,)

    def frames_stopped(self, f: Fault) -> bool:
        """The frame could not be stacked (MSTKERR/STKERR): the SP itself was bad."""
        return bool(f.status.cfsr & (1 << 4 | 1 << 12))

    def registers(self, f: Fault) -> list[Register]:
        st = f.status
        known = not f.status_unknown
        out = []
        if known and st.arch not in faultrecord.BASELINE_ARCHS:
            out += [Register("CFSR", st.cfsr, "; ".join(faultrecord.cfsr_lines(st.cfsr)) or "no bit set"),
                    Register("HFSR", st.hfsr, "; ".join(faultrecord.hfsr_lines(st.hfsr)) or "no bit set")]
        if st.mmfar is not None:
            out.append(Register("MMFAR", st.mmfar, "the faulting address (MMARVALID)"))
        if st.bfar is not None:
            out.append(Register("BFAR", st.bfar, "the faulting address (BFARVALID)"))
        if st.sfsr:
            out.append(Register("SFSR", st.sfsr, "; ".join(faultrecord.sfsr_lines(st.sfsr))))
            if st.sfar is not None:
                out.append(Register("SFAR", st.sfar, "the faulting address (SFARVALID)"))
        if st.exc_return is not None:
            out.append(Register("EXC_RETURN", st.exc_return, faultrecord.ExcReturn(st.exc_return).describe()))
        return out

    def status_lines(self, f: Fault) -> list[str]:
        if f.status_unknown:
            return [f.status_unknown]
        return faultrecord.status_lines(f.status.cfsr, f.status.hfsr, f.status.arch) + \
            faultrecord.sfsr_lines(f.status.sfsr or 0)

    def cause_lines(self, f: Fault) -> list[str]:
        return faultrecord.cause_lines(f)

    def report_lines(self, f: Fault) -> list[str]:
        """`arena fault`'s register block, before the frame (unindented lines)."""
        st = f.status
        out = [f.status_unknown] if f.status_unknown else \
            (faultrecord.status_lines(st.cfsr, st.hfsr, st.arch) or ["no fault status bits set"])
        if st.arch not in faultrecord.BASELINE_ARCHS and not f.status_unknown:
            out.append(f"CFSR {st.cfsr:#010x}  HFSR {st.hfsr:#010x}")
        if st.mmfar is not None:
            out.append(f"MMFAR {st.mmfar:#010x} (valid)")
        if st.bfar is not None:
            out.append(f"BFAR  {st.bfar:#010x} (valid)")
        elif st.cfsr >> 10 & 1:
            out.append("BFAR not valid: imprecise bus error")
        if st.sfsr:
            out += faultrecord.sfsr_lines(st.sfsr) + [f"SFSR {st.sfsr:#010x}"]
            if st.sfar is not None:
                out.append(f"SFAR  {st.sfar:#010x} (valid)")
        out.append("EXC_RETURN " + (faultrecord.ExcReturn(st.exc_return).describe() if st.exc_return is not None
                                    else "unknown"))
        return out

    def frame_lines(self, f: Fault) -> list[str]:
        """The saved registers, one line, and what they say of the frame itself."""
        regs = "  ".join(f"{n} {v:#010x}" for n, v in zip(f.frame_names, f.frame, strict=False))
        out = [f"stacked frame at {f.frame_addr:#x}: {regs}"]
        if f.frame[7] >> 9 & 1:
            out.append("xPSR bit 9: the core added 4 bytes to align the frame to 8 bytes")
        return out

    # -- reads at a stop (live.py) ------------------------------------------------------------
    def live_fault(self, ctx, read=None) -> Fault | None:
        return live.live_fault(ctx, self, read)

    def prefetch(self, reader, pieces):
        return live.prefetch(reader, pieces)

    def status_clear(self, reader) -> bool:
        return live.status_clear(reader)

    def after_fault(self, ctx, f: Fault) -> None:
        """Completes a fault: the M-profile architecture; ARMv8-M's Secure status (this boot's)."""
        f.status.arch = live.arch_of(ctx.symbols)
        if not f.stale:
            live.secure_status(ctx, f)

    def from_record(self, rec) -> Fault:
        return faultrecord.from_record(rec, self)

    def reread_frame(self, reader, f: Fault) -> None:
        """The basic frame above the callee-saved context, still on the stack this boot."""
        if f.frame is None and f.frame_note == faultrecord.CALLEE_NOTE:
            try:
                f.frame = [live.u32(reader, f.frame_addr + 4 * i) for i in range(8)]
            except live.MemoryReadError as exc:
                f.frame_note += f", but it is unreadable ({exc.why})"

    def access_line(self, ctx, f: Fault) -> str | None:
        return live.baseline_access(ctx, f)

    def stack_limit_hit_now(self, ctx) -> bool:
        """Whether the core's CFSR says UsageFault STKOF now (bit 20; ARMv8-M only)."""
        if not ctx.core.is_cortex_m():
            return False
        try:
            return bool(live.u32(ctx.reader, live.SCB["cfsr"]) >> 20 & 1)
        except live.MemoryReadError:
            return False

    def thread_sp(self, core) -> int | None:
        """The running task's SP: PSP, or SP in thread mode once the scheduler runs (QEMU gives no
        $psp)."""
        psp = core.register("psp")
        xpsr = core.register("xpsr")
        if psp is None and xpsr is not None and not xpsr & 0x1FF:
            psp = core.register("sp")
        return psp

    def handler_exception(self, ctx) -> str | None:
        """The exception being handled now (IPSR), by name, or None."""
        xpsr = ctx.core.register("xpsr")
        return faultrecord.EXCEPTIONS.get(xpsr & 0x1FF) if xpsr is not None else None

    def state_unknown(self, ctx) -> str:
        """Why whether a fault handler runs is unknown (a RAM dump with no xPSR or PC and no System
        Control Block; a live target whose ICSR could not be read, e.g. the link failed), or "" when
        it is known. A live target: find_fault read ICSR already (and kept why it could not)."""
        core = ctx.core
        if not core.is_cortex_m() or core.register("xpsr") is not None:
            return ""
        if not ctx.reader.origin:
            why = ctx.cache.get(live.ICSR_UNREAD)
            return "" if why is None else (
                f"could not read the fault state: the core's registers are unknown and ICSR "
                f"({live.SCB['icsr']:#x}, which says whether a fault handler runs) could not be read ({why}), so "
                "whether the core is in a fault handler is not known")
        if core.register("pc") is not None:
            return ""
        try:
            live.u32(ctx.reader, live.SCB["icsr"])
            return ""
        except live.MemoryReadError:
            return ("the core's registers are unknown and a RAM dump holds no System Control Block, so whether the "
                    "core was in a fault handler (or stuck in a loop) is unknown: give the registers GDB's `info "
                    "registers` printed at the crash with --registers FILE (`arena dump load ... --registers FILE`)")

    # -- code ---------------------------------------------------------------------------------
    def spins(self, code: bytes) -> bool:
        """Whether the instruction at the PC branches to itself (Thumb `b .`: 0xE7FE, or B.W .
        0xF7FF 0xBFFE; ARMv7-M ARM A7.7.12)."""
        return code[:2] == b"\xfe\xe7" or code == b"\xff\xf7\xfe\xbf"

    def code_address(self, addr: int) -> int:
        return addr & ~1  # the Thumb bit

    def call_before(self, reader, return_address: int) -> str | None:
        return faultrecord.call_before(reader, return_address)

    def call_target(self, reader, return_address: int) -> int | None:
        return faultrecord.call_target(reader, return_address)

    def saved_return_address(self, ctx, f: Fault) -> int | None:
        return live.saved_return_address(ctx, f)

    def frame_layout(self, symbols, function: int):
        return cfi.frame_layout(symbols, function)

    def unwind(self, symbols, read, registers: dict, limit: int | None = None):
        """The call chain from registers through exception frames (unwind.unwind), at most limit
        frames (None: its own default)."""
        return cfi.unwind(symbols, read, registers, **({"limit": limit} if limit is not None else {}))

    exception_mark = cfi.EXCEPTION_MARK

    # -- the stack's worst case before flashing -----------------------------------------------
    dwarf_sp = cfi.SP
    dwarf_frame_registers = (cfi.SP, 7, 11)  # SP, and the frame pointer r7 (Thumb) or r11
    switch_helpers = ("__gnu_thumb1_case_*",)  # libgcc's ARMv6-M switch dispatch (lib1funcs.S)
    nested_exceptions = True  # the NVIC preempts a handler with a higher-priority one (B1.5.4)
    # ARMv7-M ARM B1.5.6-B1.5.7: the basic frame (8 words), 4 B of alignment padding when the SP
    # is not 8-aligned (CCR.STKALIGN), and 18 more words of FP context when the interrupted code
    # has used the FPU (CONTROL.FPCA; lazy stacking reserves the space all the same).
    exception_entry_note = ("the core stacks 32 B on each exception (r0-r3, r12, LR, PC, xPSR) plus 4 B of "
                            "alignment padding, and 72 B more of FP context when the code uses the FPU")

    def decode_code(self, code: bytes, base: int, data: list) -> CodeFacts:
        return calls.decode(code, base, data)

    def exception_entry_bytes(self, fpu: bool) -> int:
        return 4 * cfi.FRAME_WORDS + 4 + (cfi.FP_EXTRA_BYTES if fpu else 0)

    def code_pointer(self, value: int) -> int | None:
        """A Thumb function's address has bit 0 set (ARMv7-M ARM A2.3.2, interworking): a word
        without it is no pointer to Thumb code."""
        return value & ~1 if value & 1 else None

    def prologue_bytes(self, code: bytes) -> int | None:
        return calls.prologue_bytes(code)

    def fault_handlers(self, image) -> list[tuple[str, int]]:
        """HardFault, MemManage, BusFault, UsageFault and SecureFault's handlers (vectors 3-7)."""
        found = vectors.table(image)
        return [(vectors.vector_name(i), a) for i, a in found[1] if vectors.vector_name(i) in vectors.FAULTS] \
            if found else []

    def entry_points(self, image, facts: dict) -> list[tuple[str, int]]:
        """Reset and every handler in the vector table (ports/cortex_m/vectors.py), by vector name;
        the ELF's entry point alone when no table is found."""
        found = vectors.table(image)
        if not found:
            return super().entry_points(image, facts)
        return [(vectors.vector_name(i), addr) for i, addr in found[1]]


PORT = CortexM()
