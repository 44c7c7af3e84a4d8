"""Names a firmware gives its own regions: ARENASCOPE_REGION_NAMES
(target_agent/include/arenascope/region_names.h), read from the ELF, not from the target.

The macro emits records into the ELF's non-allocated section `.arenascope.region_names` (no
target bytes; format in docs/agent-abi.md "Region names"). Each record is the 4 bytes "ASN1",
a little-endian u32 length, then that many bytes of NUL-terminated strings: the arena index and
the region kind as C integer literals ("0", "4u"), then one name per region id (id 0 first; ""
for none). Records follow one another; every translation unit that uses the macro adds its own.
The length, not a terminator, ends a record: a name may hold any byte but NUL.

The bytes are the user's and may be anything: every string is bounded (a name is shown to
NAME_CAP bytes, cut with "..."; the section is read to SECTION_CAP bytes), decoded as UTF-8
with the bytes that are not shown as \\xNN, and non-printable characters escaped. What cannot be
read gives a one-line warning and the rest is still used; nothing raises.
"""
import re
import struct

from arenascope_plugin.decode import abi

SECTION = ".arenascope.region_names"
MAGIC = b"ASN1"
NAME_CAP = 47             # bytes of a name that are shown
SECTION_CAP = 64 * 1024   # bytes of the section that are read

_C_INT = re.compile(r"(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*")


def clean(raw: bytes) -> str:
    """A name's bytes as text that is safe to print: at most NAME_CAP bytes (then "..."), UTF-8
    with other bytes as \\xNN, control characters escaped."""
    cut = len(raw) > NAME_CAP
    text = raw[:NAME_CAP].decode("utf-8", "backslashreplace")
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return text + "..." if cut else text


def _literal(text: bytes) -> int | None:
    m = _C_INT.fullmatch(text.decode("ascii", "replace"))
    return int(m.group(1), 0) if m else None


def parse(data: bytes, size: int | None = None) -> tuple[dict[tuple[int, str, int], str], list[str]]:
    """({(arena index, kind name, region id): name}, warnings) from the section's bytes. size:
    the section's whole size when `data` is only its start (a cut is warned about)."""
    names: dict[tuple[int, str, int], str] = {}
    warnings: list[str] = []
    where = f"ELF section {SECTION}"
    if size is not None and size > len(data):
        warnings.append(f"{where} is {size} bytes: only its first {len(data)} are read")
    i, record = 0, 0
    while i < len(data):
        if not data.startswith(MAGIC, i) or i + 8 > len(data):
            warnings.append(f"{where}: no record starts at byte {i} (expected \"ASN1\" and a length): the rest is "
                            "ignored (names not written by ARENASCOPE_REGION_NAMES?)")
            break
        length = struct.unpack_from("<I", data, i + 4)[0]
        body, i = data[i + 8:i + 8 + length], i + 8 + length
        record += 1
        ended = len(body) == length and body.endswith(b"\0")
        if not ended:
            warnings.append(f"{where}: record {record} ({length} bytes) is cut short or not terminated: its names are "
                            "used as far as they go")
        fields = body[:-1].split(b"\0") if body.endswith(b"\0") else body.split(b"\0")
        if len(fields) < 2:
            warnings.append(f"{where}: record {record} has no arena index and kind: skipped")
            continue
        arena, kind = _literal(fields[0]), _literal(fields[1])
        if arena is None or kind not in abi.KINDS:
            warnings.append(f"{where}: record {record}: arena {clean(fields[0])!r} and kind {clean(fields[1])!r} are "
                            f"not an arena index and one of the kinds {sorted(abi.KINDS)}: skipped (the macro's first "
                            "two arguments must expand to integer literals)")
            continue
        for region_id, raw in enumerate(fields[2:]):
            if not raw:
                continue
            key = (arena, abi.KINDS[kind], region_id)
            if key in names:
                warnings.append(f"{where}: arena {arena} {key[1]} id {region_id} is named twice "
                                f"({names[key]!r}, then {clean(raw)!r}): the last is used")
            if len(raw) > NAME_CAP:
                warnings.append(f"{where}: the name of arena {arena} {key[1]} id {region_id} is {len(raw)} bytes"
                                f"{' or more' if not ended else ''}: shown cut to {NAME_CAP}")
            names[key] = clean(raw)
    return names, warnings


def apply(arenas, names: dict[tuple[int, str, int], str]) -> int:
    """Sets the name of every region of `arenas` (decode.descriptor.Arena) that `names` holds, by
    (arena index, kind, id): a name the firmware gives wins over one the host found. Returns how
    many regions were named."""
    count = 0
    for a in arenas:
        for r in a.regions:
            name = names.get((a.index, r.kind, r.id))
            if name is not None:
                r.name = name
                count += 1
    return count
