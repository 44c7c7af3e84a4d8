"""newlib's nano malloc (nano-mallocr.c, what arm-none-eabi's --specs=nano.specs links) and
picolibc's: which heap memory is free, read from its free list, so that an object in freed memory (a per-inference
interpreter between inferences, Edge Impulse's habit) is said to be freed, not read as live or
as damaged. No GDB import; reads through a MemoryReader.

newlib/libc/stdlib/nano-mallocr.c: `chunk * __malloc_free_list`, each free chunk
`struct malloc_chunk { long size; struct malloc_chunk *next; }` at the chunk's start, `size` the
whole chunk's bytes (header included), the list in address order, null-terminated. picolibc's
malloc (libc/stdlib/nano-malloc.c, what Debian's picolibc-arm-none-eabi 1.8 and Zephyr's picolibc
link) keeps the same list under the same name: checked on QEMU with picolibc 1.8, a freed 200 B
block's chunk 0x200000a4-0x20000174 {size 0xd0, next 0} at the list's head
(docs/integrating-tflm.md).
(newlib's full malloc, dlmalloc, and ESP-IDF's TLSF keep bins instead: not read; None then.)
"""
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError

FREE_LIST = "__malloc_free_list"
MAX_CHUNKS = 4096   # a longer (or circular) list is not followed further


def free_chunks(reader: MemoryReader, free_list_addr: int | None, heap: tuple[int, int] | None,
                pointer: int = 4) -> list[tuple[int, int]] | None:
    """[(lo, hi)] of the free chunks newlib's nano malloc holds, from the list head at
    `free_list_addr` (the address of __malloc_free_list), each checked to lie in `heap`; None when
    there is no such list or it cannot be read. A chunk that is not plausible ends the walk (what
    was read so far is returned)."""
    if free_list_addr is None or heap is None:
        return None
    try:
        c = int.from_bytes(reader.read(free_list_addr, pointer), "little")
        out: list[tuple[int, int]] = []
        seen = set()
        while c and len(out) < MAX_CHUNKS and c not in seen:
            seen.add(c)
            if not heap[0] <= c < heap[1]:
                break
            size = int.from_bytes(reader.read(c, pointer), "little", signed=True)
            nxt = int.from_bytes(reader.read(c + pointer, pointer), "little")
            if size < 2 * pointer or c + size > heap[1]:
                break
            out.append((c, c + size))
            c = nxt
        return out
    except MemoryReadError:
        return None


def freed(chunks: list[tuple[int, int]] | None, addr: int, size: int = 1) -> tuple[int, int] | None:
    """The free chunk overlapping [addr, addr + size), or None. A live object never overlaps free
    memory: one that does was freed (and the rest of it may be reused: nano's malloc hands out the
    end of a free chunk it splits)."""
    for lo, hi in chunks or []:
        if lo < addr + size and addr < hi:
            return lo, hi
    return None
