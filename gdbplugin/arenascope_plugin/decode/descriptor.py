"""Descriptor bytes in, model out (pure Python, no gdb): the only place that gives the agent's
bytes a meaning. Field meanings and units: docs/agent-abi.md.

A field whose value makes every figure meaningless (the magic, the ABI, the sizes and counts
that say where the rest lies, an arena's bounds and marks) raises DecodeError with a message that
says what is wrong, where (address, field) and what to do. A field that only some rules rest on
(a fill pattern, a flags byte with bits the ABI does not define, a region table) is kept as a
Corruption instead (Descriptor.corrupt): named, its rules not run, everything else still read, so
a post-mortem survives one damaged word of the agent's.
"""
import struct
from dataclasses import dataclass, field

from arenascope_plugin.decode import abi
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.remedy import Remedy

MAX_REGIONS = 16384          # a table larger than this is corruption, not a model
MAX_ARENA_BYTES = 1 << 30    # 1 GiB: no microcontroller arena is larger
MAX_STACK_BYTES = 64 << 20   # 64 MiB: a larger "stack" is a corrupt descriptor (and a scan would take hours)
MAX_GUARD_BYTES = 1 << 20


class DecodeError(ArenascopeError):
    """The bytes are not a descriptor this plugin can trust."""


class TableEntryError(DecodeError):
    """A region table's entry no agent writes; `offset`/`width`: its first wrong byte(s) in the
    table (where a watchpoint catches the writer)."""

    def __init__(self, text: str, offset: int, width: int) -> None:
        super().__init__(text)
        self.offset, self.width = offset, width


@dataclass
class Corruption:
    """One corrupt descriptor field that only some rules rest on: `field` as docs/agent-abi.md
    names it ("canary_pattern", "arena 0 flags", "arena 0 region table"), `value` as read
    ("0x00000000"), `why` it is not believed, and `rules`: the `arena check` rules
    (analyse/verdicts.RULES) that rest on it and are not run."""
    field: str
    value: str
    why: str
    rules: tuple[str, ...]
    address: int | None = None    # where the corrupt field is (said as "at")
    width: int = 4                # its bytes (1, 2, 4 or 8)
    watch_at: int | None = None   # the word a watchpoint catches the writer at (default: address)

    def text(self) -> str:
        at = f" at {self.address:#x}" if self.address is not None else ""
        return f"{self.field} {self.value}{at}: {self.why}"

    @property
    def watch(self) -> str | None:
        """The GDB watchpoint that stops the writer of this field: `watch -l *(TYPE *)ADDR`, TYPE
        as wide as the field (a wider one would also stop on its neighbours' updates)."""
        at = self.watch_at if self.watch_at is not None else self.address
        ctype = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}[self.width]
        return None if at is None else f"watch -l *({ctype} *){at:#x}"


@dataclass
class Band:
    """A filled address range and what the last on-target measurement found changed in it."""
    low_addr: int
    high_addr: int
    touched_lo: int
    touched_hi: int

    @property
    def size(self) -> int:
        return max(0, self.high_addr - self.low_addr)

    @property
    def filled(self) -> bool:
        return self.high_addr > self.low_addr

    @property
    def touched(self) -> bool:
        """Whether a measurement found changed words (an empty range, as before any scan, is not)."""
        return self.touched_lo != abi.NONE and self.touched_hi > self.touched_lo

    @property
    def touched_bytes(self) -> int:
        """Bytes from the first to the last changed word (0 when intact)."""
        return self.touched_hi - self.touched_lo if self.touched else 0


@dataclass
class Region:
    index: int
    offset: int
    size: int
    id: int
    kind: str
    flags: int
    first_use: int
    last_use: int
    name: str | None = None       # from the model, when the planner tool gives it
    shape: list | None = None
    dtype: str | None = None

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def planned(self) -> bool:
        return self.first_use != abi.USE_NONE and self.last_use != abi.USE_NONE

    @property
    def flag_names(self) -> list[str]:
        return [name for bit, name in abi.REGION_FLAGS.items() if self.flags & bit]


@dataclass
class Arena:
    index: int
    base_addr: int
    regions_addr: int
    model_addr: int
    size: int
    head: int
    temp: int
    tail: int
    model_size: int
    canary: Band
    alignment: int
    region_count: int
    region_capacity: int
    flags: int
    regions: list[Region] = field(default_factory=list)
    # TFLM's two-arena mode: "non-persistent" (head and temporaries) or "persistent" (the tail);
    # "" for an arena that holds both (docs/snapshot-schema.md: arenas[].memory)
    memory: str = ""
    # Agentless: where this arena was before it last moved in the session (a per-inference arena
    # allocated again elsewhere), while it stays at its new base; None: it has not moved
    moved_from: int | None = None
    # Why the region table was not believed (outside RAM, unreadable there, entries no agent
    # writes): `regions` is then empty and the descriptor names it (Descriptor.corrupt)
    table_corrupt: str | None = None

    @property
    def end_addr(self) -> int:
        return self.base_addr + self.size

    @property
    def tflm_figures(self) -> bool:
        return bool(self.flags & abi.ARENA_FLAG_TFLM)


@dataclass
class Descriptor:
    address: int
    abi_major: int
    abi_minor: int
    descriptor_size: int
    addr_size: int
    arena_capacity: int
    arena_count: int
    arena_entry_size: int
    region_entry_size: int
    flags: int
    seq: int
    layout_generation: int
    invoke_phase: int
    canary_pattern: int
    stack_paint_pattern: int
    fault_record_addr: int
    stack: Band
    guard: Band
    arenas: list[Arena] = field(default_factory=list)
    seq_check: int | None = None   # ABI 1.1: the seq the update in progress ends with (None: 1.0)
    measured_by: str = "agent"     # who measured the bands: the agent, or a host scan
    halted_in_update: bool = False # seq odd and still: the target stopped inside an update
    agent_measured: bool = False   # the agent's own MEASURED flag, whatever the host did since
    agentless: bool = False        # no agent: TFLM's own objects walked (tflm.py); agent-only figures absent
    unplanned: str | None = None   # agentless without the planner's plan: why (the head's owners are unknown)
    corrupt: list[Corruption] = field(default_factory=list)  # fields named corrupt, their rules not run

    def not_judged(self, rule: str) -> list[Corruption]:
        """The corrupt fields `rule` rests on (empty: the rule can run)."""
        return [c for c in self.corrupt if rule in c.rules]

    @property
    def measured(self) -> bool:
        return bool(self.flags & abi.FLAG_MEASURED)

    @property
    def invokes(self) -> int:
        return self.invoke_phase // 2

    @property
    def in_invoke(self) -> bool:
        return bool(self.invoke_phase & 1)


def _unpack(type_name, data, offset, addr_size):
    lay = abi.layout(type_name, addr_size)
    out: dict[str, object] = {}
    for name, ftype in abi.TYPES[type_name]:
        at = offset + lay[name]
        if ftype == "char[8]":
            out[name] = bytes(data[at:at + 8])
        elif ftype == "band":
            out[name] = Band(**_unpack("band", data, at, addr_size))
        elif ftype == "arena[]":
            continue
        else:
            out[name] = struct.unpack_from("<" + abi.scalar_format(ftype, addr_size), data, at)[0]
    return out


def preamble(data: bytes, address: int) -> tuple[int, int]:
    """(addr_size, descriptor_size) from the first 16 bytes, after the magic and version
    checks: what a reader needs to know how many bytes to fetch."""
    if len(data) < 16:
        raise DecodeError(f"descriptor at {address:#x}: only {len(data)} bytes read, need at least 16")
    magic = bytes(data[:8])
    if magic != abi.MAGIC:
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in magic)
        shown = " ".join(f"{b:02x}" for b in magic) + f' ("{text}")'
        raise DecodeError(f"no arenascope descriptor at {address:#x}: magic is {shown}, expected "
                          f"{abi.MAGIC.decode()!r} (not initialised yet? run past arenascope_init; or overwritten, by "
                          "a stray write or the stack, when part of it is still there; or check "
                          f"{Remedy('descriptor-address', show=True):q})")
    major, minor, size, addr_size = data[8], data[9], struct.unpack_from("<H", data, 10)[0], data[12]
    if major != abi.ABI_MAJOR:
        raise DecodeError(f"descriptor at {address:#x} has ABI {major}.{minor}; this plugin reads ABI "
                          f"{abi.ABI_MAJOR}.x: use the plugin from the same arenascope version as the firmware's agent")
    if addr_size not in (4, 8):
        raise DecodeError(f"descriptor at {address:#x}: addr_size is {addr_size}, expected 4 or 8 (corrupt descriptor)")
    need = abi.header_size(addr_size) + abi.layout("arena", addr_size)["_size"]
    if size < need:
        raise DecodeError(f"descriptor at {address:#x}: descriptor_size {size} B is smaller than ABI "
                          f"{abi.ABI_MAJOR}.{abi.ABI_MINOR} needs ({need} B with one arena; corrupt descriptor)")
    return addr_size, size


def decode_descriptor(data: bytes, address: int) -> Descriptor:
    """Decodes and validates the header and arena entries (not the region tables)."""
    addr_size, size = preamble(data, address)
    if len(data) < size:
        raise DecodeError(f"descriptor at {address:#x}: {len(data)} bytes read, descriptor_size says {size}")
    h = _unpack("descriptor", data, 0, addr_size)
    arena_size = abi.layout("arena", addr_size)["_size"]
    if h["arena_entry_size"] < arena_size or h["region_entry_size"] < abi.layout("region", addr_size)["_size"]:
        raise DecodeError(f"descriptor at {address:#x}: entry sizes {h['arena_entry_size']}/{h['region_entry_size']} B "
                          f"are smaller than ABI {abi.ABI_MAJOR}.x needs ({arena_size}/16 B; corrupt descriptor)")
    if not 1 <= h["arena_capacity"] or h["arena_count"] > h["arena_capacity"]:
        raise DecodeError(f"descriptor at {address:#x}: arena_count {h['arena_count']} with capacity "
                          f"{h['arena_capacity']} (corrupt descriptor)")
    first = abi.header_size(addr_size)
    if first + h["arena_capacity"] * h["arena_entry_size"] > size:
        raise DecodeError(f"descriptor at {address:#x}: {h['arena_capacity']} arena entries of "
                          f"{h['arena_entry_size']} B do not fit in descriptor_size {size} B (corrupt descriptor)")
    arenas, corrupt = [], []
    for i in range(h["arena_count"]):
        a = _unpack("arena", data, first + i * h["arena_entry_size"], addr_size)
        arena = Arena(index=i, base_addr=a["base_addr"], regions_addr=a["regions_addr"], model_addr=a["model_addr"],
                      size=a["size_bytes"], head=a["head_bytes"], temp=a["temp_bytes"], tail=a["tail_offset"],
                      model_size=a["model_size_bytes"], canary=a["canary"], alignment=a["alignment_bytes"],
                      region_count=a["region_count"], region_capacity=a["region_capacity"], flags=a["flags"])
        _validate_arena(arena, address, bool(h["flags"] & abi.FLAG_MEASURED))
        if arena.flags & ~abi.ARENA_FLAGS_DEFINED:
            corrupt.append(Corruption(f"arena {i} flags", f"{arena.flags:#04x}",
                                      f"bits {arena.flags & ~abi.ARENA_FLAGS_DEFINED:#04x} are not defined by the ABI "
                                      "(TFLM figures, planner ids), so none of its bits is believed", (),
                                      address + first + i * h["arena_entry_size"] +
                                      abi.layout("arena", addr_size)["flags"], width=1))
            arena.flags = 0  # no label or figure rests on a corrupt byte
        arenas.append(arena)
    if h["flags"] & ~abi.FLAGS_DEFINED:
        corrupt.append(Corruption("flags", f"{h['flags']:#04x}",
                                  f"bits {h['flags'] & ~abi.FLAGS_DEFINED:#04x} are not defined by the ABI, so "
                                  "MEASURED and STACK_LIMIT are not believed: the host measures the bands itself",
                                  ("measured",), address + abi.layout("descriptor", addr_size)["flags"], width=1))
        h["flags"] = 0
    # the headroom rests on the canary too: the peak is raised to the end of any free-band damage
    for name, rules, what in (("canary_pattern", ("canary", "guard", "headroom"), "the free and guard bands"),
                              ("stack_paint_pattern", ("stack",), "the stack's paint")):
        if h[name] in abi.FORBIDDEN_PATTERNS:
            corrupt.append(Corruption(name, f"{h[name]:#010x}",
                                      "the ABI forbids 0 and 0xFFFFFFFF (zeroed or erased RAM holds them), so "
                                      f"{what} cannot be judged against it "
                                      f"({Remedy(name.replace('_', '-')):q} names the real one)",
                                      rules, address + abi.layout("descriptor", addr_size)[name]))
    if h["canary_pattern"] in abi.FORBIDDEN_PATTERNS:  # a measurement against it says nothing
        for band in [h["guard"]] + [a.canary for a in arenas]:
            band.touched_lo = band.touched_hi = abi.NONE
    measured = bool(h["flags"] & abi.FLAG_MEASURED)
    _validate_band(h["stack"], "stack", MAX_STACK_BYTES, address, measured=measured)
    _validate_band(h["guard"], "guard band", MAX_GUARD_BYTES, address, measured=measured)
    if h["stack"].filled and h["stack"].low_addr == 0:
        raise DecodeError(f"descriptor at {address:#x}: stack starts at address 0 (corrupt descriptor)")
    seq_check = None
    if h["abi_minor"] >= 1:
        end = abi.end_offset(addr_size, h["arena_capacity"], h["arena_entry_size"])
        if end + abi.layout("descriptor_end", addr_size)["_size"] > size:
            raise DecodeError(f"descriptor at {address:#x}: ABI 1.{h['abi_minor']} puts seq_check at {end}, past "
                              f"descriptor_size {size} B (corrupt descriptor)")
        seq_check = struct.unpack_from("<H", data, end + abi.layout("descriptor_end", addr_size)["seq_check"])[0]
    return Descriptor(address=address, abi_major=h["abi_major"], abi_minor=h["abi_minor"], descriptor_size=size,
                      addr_size=addr_size, arena_capacity=h["arena_capacity"], arena_count=h["arena_count"],
                      arena_entry_size=h["arena_entry_size"], region_entry_size=h["region_entry_size"],
                      flags=h["flags"], seq=h["seq"], layout_generation=h["layout_generation"],
                      invoke_phase=h["invoke_phase"], canary_pattern=h["canary_pattern"],
                      stack_paint_pattern=h["stack_paint_pattern"], fault_record_addr=h["fault_record_addr"],
                      stack=h["stack"], guard=h["guard"], arenas=arenas, seq_check=seq_check,
                      agent_measured=bool(h["flags"] & abi.FLAG_MEASURED), corrupt=corrupt)


def _validate_band(band, what, max_size, address, measured=True, inside=None):
    """A band's bounds and (once the agent has measured) its measurement must be self-consistent
    (else: corrupt descriptor)."""
    where = f"descriptor at {address:#x}: {what}"
    if band.high_addr < band.low_addr or band.size > max_size:
        raise DecodeError(f"{where} {band.low_addr:#x}-{band.high_addr:#x} is not a range of at most "
                          f"{max_size} B (corrupt descriptor)")
    if inside and band.filled and not (inside[0] <= band.low_addr and band.high_addr <= inside[1]):
        raise DecodeError(f"{where} {band.low_addr:#x}-{band.high_addr:#x} is outside the arena "
                          f"{inside[0]:#x}-{inside[1]:#x} (corrupt descriptor)")
    if not measured or band.touched_lo == abi.NONE or (band.touched_lo == 0 and band.touched_hi == 0):
        return
    if not band.touched_lo < band.touched_hi <= band.size:
        raise DecodeError(f"{where}: measured change {band.touched_lo}..{band.touched_hi} does not fit its "
                          f"{band.size} B (corrupt descriptor)")


def _validate_arena(a, address, measured):
    where = f"descriptor at {address:#x}, arena {a.index}"
    if not 0 < a.size <= MAX_ARENA_BYTES:
        raise DecodeError(f"{where}: size {a.size} B is absurd (corrupt descriptor)")
    if a.region_count > a.region_capacity or a.region_capacity > MAX_REGIONS:
        raise DecodeError(f"{where}: region_count {a.region_count} with capacity {a.region_capacity} "
                          f"(at most {MAX_REGIONS}; corrupt descriptor)")
    if a.region_count and not a.regions_addr:
        raise DecodeError(f"{where}: {a.region_count} regions but no table address (corrupt descriptor)")
    for name, value in (("head_bytes", a.head), ("temp_bytes", a.temp), ("tail_offset", a.tail)):
        if value > a.size:
            raise DecodeError(f"{where}: {name} {value} is beyond the arena's {a.size} B (corrupt descriptor)")
    if a.temp < a.head:
        raise DecodeError(f"{where}: temp_bytes {a.temp} is below head_bytes {a.head}; the temp area starts at the "
                          "head's end (corrupt descriptor)")
    if a.tail < max(a.head, a.temp):
        # TFLM's allocator never lets the head or temp area cross the tail (an allocation that
        # would fails instead), and the agent stores its marks as given: this is no over-use.
        raise DecodeError(f"{where}: tail_offset {a.tail} is below the head/temp end {max(a.head, a.temp)} "
                          f"(head_bytes {a.head}, temp_bytes {a.temp}); the persistent tail starts at or after "
                          "the head's end, so the marks are not TFLM's (corrupt descriptor)")
    _validate_band(a.canary, f"arena {a.index} free band", MAX_ARENA_BYTES, address, measured=measured,
                   inside=(a.base_addr, a.base_addr + a.size))


def decode_regions(data: bytes, count: int, entry_size: int) -> list[Region]:
    """Region entries from a table's bytes (count entries, entry_size bytes apart). DecodeError
    when an entry is not one the agent writes: a kind outside abi.KINDS (a zeroed table's 0
    among them) or flag bits the ABI does not define; it names the first and the count."""
    need = abi.layout("region", 4)["_size"]
    if entry_size < need:
        raise DecodeError(f"region table: entries {entry_size} B apart, smaller than a region entry ({need} B)")
    if len(data) < count * entry_size:
        raise DecodeError(f"region table: {len(data)} bytes read, need {count} x {entry_size}")
    out, bad = [], []
    lay = abi.layout("region", 4)
    for i in range(count):
        r = _unpack("region", data, i * entry_size, 4)
        if r["kind"] not in abi.KINDS:
            bad.append((f"entry {i} has kind {r['kind']} (the ABI's are {', '.join(map(str, abi.KINDS))})",
                        i * entry_size + lay["kind"]))
        elif r["flags"] & ~abi.REGION_FLAGS_DEFINED:
            bad.append((f"entry {i} has flags {r['flags']:#04x}, bits the ABI does not define",
                        i * entry_size + lay["flags"]))
        out.append(Region(index=i, offset=r["offset_bytes"], size=r["size_bytes"], id=r["id"],
                          kind=abi.KINDS.get(r["kind"], f"kind{r['kind']}"), flags=r["flags"],
                          first_use=r["first_use"], last_use=r["last_use"]))
    if bad:
        raise TableEntryError(f"{len(bad)} of {count} entries are not the agent's: {bad[0][0]}", bad[0][1], 1)
    return out
