"""The fault as the target holds it, read through the architecture port (ctx.port): the agent's
fault record (its head only while polling, the whole record when the head moves), the core's
registers when it is halted in a fault or trap handler, the region checksums the agent took after
allocation compared with the regions' bytes now, and where the core is stopped. What this reads,
analyse/faults.py judges (no GDB here: ctx carries the reader, Symbols and Core of acquire/)."""
from typing import Any

from arenascope_plugin.acquire.reader import MemoryReadError
from arenascope_plugin.decode import abi
from arenascope_plugin.decode.descriptor import Descriptor, Region
from arenascope_plugin.ports import Fault

# pipeline.Context, what one gather found: a stage above this one, so not imported here.
PipelineContext = Any
# analyse/postmortem.Halt: a stage above this one; read_halt fills the one it is given.
Halt = Any


def find_fault(ctx: PipelineContext) -> tuple[Fault | None, list[Region], str]:
    """(Fault or None, damaged immutable regions, why there is no fault): from the agent's record
    when it holds a fault of this boot (or of an earlier one when the core is not in a handler),
    else from the core's registers when it is halted in a fault handler (the port reads both)."""
    reader, port = ctx.reader, ctx.port
    record = port.record  # the agent's fault record's decoder, on a port whose agent keeps one
    rec, rec_note = None, ""
    rec_addr = ctx.symbols.address("arenascope_fault_record") if record is not None else None
    if rec_addr is None and record is not None and ctx.desc is not None and ctx.desc.fault_record_addr:
        rec_addr = ctx.desc.fault_record_addr
    # While polling, only the record's head is read at each refresh: the agent rewrites the rest only
    # with a new boot or fault, which change the head; the whole record is read (and checked) then.
    pin = bool(ctx.cache.get("pin"))
    first = (record.HEAD_SIZE if pin else record.RECORD_MIN_SIZE) if record is not None else 0
    read = port.prefetch(reader, [(rec_addr, first)] if rec_addr is not None else [])
    if rec_addr is not None:
        try:
            head = read(rec_addr, first)[:record.HEAD_SIZE] if pin else None
            cached = ctx.cache.get("fault_record")
            if pin and cached is not None and cached[0] == (rec_addr, head):
                rec = cached[1]
            else:
                rec = record.read_record(read if not pin else reader.read, rec_addr)
                if pin:
                    ctx.cache["fault_record"] = ((rec_addr, head), rec)
        except (record.RecordError, MemoryReadError) as exc:
            rec_note = str(exc)
            ctx.cache.pop("fault_record", None)
    # A record that never held a fault has no registers yet (its arch is the zeroed field's 0): it still
    # holds this boot's count and the region checksums.
    if rec is not None and rec.fault_count and rec.arch != port.record_arch:
        rec_note = (f"the agent's fault record at {rec_addr:#x} holds the registers of architecture {rec.arch} "
                    f"(fault.h ARENASCOPE_FAULT_ARCH_*), not {port.title}'s, which the ELF is for: not used")
        rec = None
    live_f = port.live_fault(ctx, read)
    # The region checksums are re-computed over every immutable region: at a stop always (an
    # overwritten tail is the stack's trace even before a fault), while polling only for a fault.
    want_damage = not ctx.cache.get("pin") or live_f is not None or (rec is not None and rec.fault_count)
    damaged = damaged_regions(ctx, ctx.desc, rec) if ctx.desc is not None and want_damage else []
    f = None
    if rec is not None and rec.fault_count and (live_f is None or rec.fault_boot == rec.boot_count):
        f = port.from_record(rec)
        this_boot = rec.fault_boot == rec.boot_count
        if this_boot and live_f is None and port.status_clear(reader):
            # The fault status registers are clear: the core has reset since, and the agent has not
            # counted the new boot yet (halted before arenascope_fault_boot).
            f.stale = True
            f.source = (f"the agent's fault record at {rec_addr:#x}, from before a reset (the fault status "
                        "registers are clear now: the target has reset since; the agent has not counted this "
                        "boot yet)")
        else:
            f.stale = not this_boot
            if this_boot:
                port.reread_frame(reader, f)
            f.source = (f"the agent's fault record at {rec_addr:#x} (this boot, fault {rec.fault_count})" if this_boot
                        else f"the agent's fault record at {rec_addr:#x}, from boot {rec.fault_boot} "
                             f"(this is boot {rec.boot_count}: the target has reset since)")
    elif live_f is not None:
        f = live_f
        if rec is not None and rec.fault_count and rec.fault_boot != rec.boot_count:
            f.source += f"; the agent's record holds an older fault from boot {rec.fault_boot}"
        if rec_note:
            f.source += f"; the agent's record was not used: {rec_note}"
    if f is not None:
        port.after_fault(ctx, f)
    note = rec_note or ("the agent's record has no fault this boot" if rec else
                        "there is no agent fault record (arenascope_fault_record)")
    return f, damaged, note


def damaged_regions(ctx: PipelineContext, desc: Descriptor | None, rec) -> list[Region]:
    """Labels of the immutable regions whose bytes no longer match the checksum the agent took
    after allocation (region checksums: target_agent/include/arenascope/fault.h)."""
    if rec is None or not rec.checksums_addr or not desc or not desc.arenas:
        return []
    reader = ctx.reader
    arena = desc.arenas[0]
    n = min(rec.checksum_count, len(arena.regions))
    # While polling (live), the verdict is cached per boot, fault and region-table generation: the
    # agent takes the checksums once after allocation, and a fault handler that spins changes
    # nothing more; re-hashing every immutable region at each refresh cost ~1.8 KB of reads.
    key = (rec.boot_count, rec.fault_count, rec.fault_boot, rec.checksums_addr, n, desc.layout_generation)
    cached = ctx.cache.get("damaged_regions") if ctx.cache.get("pin") else None
    if cached is not None and cached[0] == key:
        ctx.intact_regions = list(cached[2])
        return list(cached[1])
    try:
        table = reader.read(rec.checksums_addr, 4 * n)
    except MemoryReadError as exc:
        ctx.warn("checksum-table", f"cannot read the region checksum table at {rec.checksums_addr:#x} "
                 f"({exc.why}): no overwritten regions can be named")
        return []
    out, ctx.intact_regions = [], []
    for i in range(n):
        want = int.from_bytes(table[4 * i:4 * i + 4], "little")
        r = arena.regions[i]
        if want and r.size:
            (out if abi.fnv1a(reader.read(arena.base_addr + r.offset, r.size)) != want
             else ctx.intact_regions).append(r)
    if ctx.cache.get("pin"):
        ctx.cache["damaged_regions"] = (key, tuple(out), tuple(ctx.intact_regions))
    return out


def read_halt(ctx: PipelineContext, halt: Halt) -> Halt:
    """Fills halt (an analyse/postmortem.Halt) with where the core is stopped: the PC, the unwound
    call chain (ctx.core's: GDB's through exception frames; without GDB only the PC's function),
    the exception or trap being handled and whether the instruction at the PC branches to itself
    (the port decodes both)."""
    core, port = ctx.core, ctx.port
    halt.pc = core.register("pc")
    halt.frames = core.frames()
    halt.function = halt.frames[0] if halt.frames else ""
    halt.complete = core.frames_complete()
    if halt.pc is not None:
        halt.in_handler = port.handler_exception(ctx)
        if halt.in_handler is not None:
            try:
                halt.spinning = port.spins(ctx.reader.read(port.code_address(halt.pc), 4))
            except MemoryReadError:
                pass
    return halt
