"""newlib nano malloc's free list (decode/newlib_heap.py) on byte images laid out here as
nano-mallocr.c does: `__malloc_free_list` points to the first free chunk, each chunk starts with
{long size (header included), chunk *next}. The figures are the ones real TFLM 90b983c2's
per-inference firmware showed between inferences (one merged free chunk 0x200001c8-0x20000758)."""
import struct

from arenascope_plugin.acquire.reader import ImageReader
from arenascope_plugin.decode import newlib_heap

HEAD = 0x200001BC                  # &__malloc_free_list
HEAP = (0x200001C8, 0x203FE000)    # end .. __HeapLimit


def image(words):
    mem = bytearray(0x1000)
    for addr, value in words:
        struct.pack_into("<i" if value < 0 else "<I", mem, addr - 0x20000000, value)
    return ImageReader([(0x20000000, mem)])


def test_the_free_list_is_read_and_a_freed_interpreter_is_found_in_it():
    r = image([(HEAD, 0x200001C8), (0x200001C8, 0x590), (0x200001CC, 0)])
    chunks = newlib_heap.free_chunks(r, HEAD, HEAP)
    assert chunks == [(0x200001C8, 0x20000758)]
    assert newlib_heap.freed(chunks, 0x20000688, 208) == (0x200001C8, 0x20000758)   # the interpreter, 208 B
    assert newlib_heap.freed(chunks, 0x20000758) is None


def test_two_chunks_in_address_order():
    r = image([(HEAD, 0x20000200), (0x20000200, 0x40), (0x20000204, 0x20000400), (0x20000400, 0x100),
               (0x20000404, 0)])
    assert newlib_heap.free_chunks(r, HEAD, HEAP) == [(0x20000200, 0x20000240), (0x20000400, 0x20000500)]


def test_a_damaged_list_ends_the_walk_and_never_loops():
    # a chunk pointing to itself, a size that runs past the heap, a next outside it, no list at all
    assert newlib_heap.free_chunks(image([(HEAD, 0x20000200), (0x20000200, 0x40), (0x20000204, 0x20000200)]),
                                   HEAD, HEAP) == [(0x20000200, 0x20000240)]
    assert newlib_heap.free_chunks(image([(HEAD, 0x20000200), (0x20000200, 0x7FFFFFF0)]), HEAD, HEAP) == []
    assert newlib_heap.free_chunks(image([(HEAD, 0x30000000)]), HEAD, HEAP) == []
    assert newlib_heap.free_chunks(image([(HEAD, 0x20000200), (0x20000200, -8)]), HEAD, HEAP) == []
    assert newlib_heap.free_chunks(image([]), None, HEAP) is None
    assert newlib_heap.free_chunks(ImageReader([]), HEAD, HEAP) is None     # unreadable


def test_an_object_partly_reused_since_it_was_freed_is_still_freed():
    """nano's malloc hands out the end of a free chunk it splits: after the interpreter and its
    arena are freed (one merged chunk) a 64 B malloc takes the chunk's last 72 B, over the
    interpreter's end. The stand-in's per-inference run: free chunk 0x2000ca10-0x20012c98, the
    interpreter (208 B) at 0x20012c10, the new block from 0x20012c98."""
    chunks = [(0x2000CA10, 0x20012C98)]
    assert newlib_heap.freed(chunks, 0x20012C10, 208) == (0x2000CA10, 0x20012C98)
    assert newlib_heap.freed(chunks, 0x20012C98, 72) is None            # the block handed out
    assert newlib_heap.freed(chunks, 0x2000CA00, 16) is None            # ends where the chunk starts
