/*
 * arenascope target agent: names for a firmware's own regions, kept in the ELF (C99, also C++).
 *
 *   ARENASCOPE_REGION_NAMES(arena_index, kind, "name of id 0", "name of id 1", ...);
 *
 * At file scope. Names the regions of arena `arena_index` (its place in arenascope_arena_add
 * order, 0 first) whose kind is `kind` (ARENASCOPE_KIND_*, or its number) by their id: the region
 * published with that kind and id i takes the i-th name, so `arena regions`, `arena whereis`, the
 * map, snapshots and `arena fault` say "mfcc_frames" instead of "metadata". An empty name ("")
 * leaves that id unnamed. A name given here wins over one the host finds itself (from the model).
 *
 * What it costs: nothing on the target. The macro emits the names into the ELF's section
 * `.arenascope.region_names`, which is not allocated (no SHF_ALLOC flag: no flash, no RAM, not in
 * a .bin or .hex image, and `--gc-sections` keeps it, as it keeps debug sections), and the plugin
 * reads it from the ELF (gdbplugin/arenascope_plugin/decode/regionnames.py). The descriptor ABI
 * does not change. A debugger without the ELF sees the kinds, as before.
 *
 * Rules for the names: one string literal each (no concatenation of "a" "b"); escapes \\ \" \n
 * \t \ooo \xhh only (the assembler reads them, not the C compiler). The host shows at most 47
 * bytes of a name (cut with "..."), decodes it as UTF-8 and shows bytes that are not as \xNN.
 * The arguments arena_index and kind must expand to integer literals (0, 4u, ...).
 *
 * Section format (version 1; docs/agent-abi.md "Region names"): records one after another, each
 * the 4 bytes "ASN1", a little-endian u32 length, then that many bytes: NUL-terminated strings,
 * the arena index and the kind as C integer literals, then one name per id (id 0 first).
 */
#ifndef ARENASCOPE_REGION_NAMES_H
#define ARENASCOPE_REGION_NAMES_H

#define ARENASCOPE_REGION_NAMES_SECTION ".arenascope.region_names"

#define ARENASCOPE_NAMES_STR_(x) #x
#define ARENASCOPE_NAMES_XSTR_(x) ARENASCOPE_NAMES_STR_(x)

/* "%progbits": the type's spelling every GNU assembler takes ('@' starts a comment on Arm).
 * 1: and 2: are local labels (reusable): the record's length is 2b - 1b, computed by the assembler. */
#define ARENASCOPE_NAMES_HEAD_(arena_index, kind)                                                                      \
    ".pushsection " ARENASCOPE_REGION_NAMES_SECTION ",\"\",%progbits\n\t.ascii \"ASN1\"\n\t.4byte 2f - 1f\n1:\t"       \
    ".asciz \"" ARENASCOPE_NAMES_XSTR_(arena_index) "\", \"" ARENASCOPE_NAMES_XSTR_(kind) "\", "
#define ARENASCOPE_NAMES_TAIL_ "\n2:\n\t.popsection"

#define ARENASCOPE_REGION_NAMES(arena_index, kind, ...)                                                                \
    __asm__(ARENASCOPE_NAMES_HEAD_(arena_index, kind) #__VA_ARGS__ ARENASCOPE_NAMES_TAIL_)

#endif /* ARENASCOPE_REGION_NAMES_H */
