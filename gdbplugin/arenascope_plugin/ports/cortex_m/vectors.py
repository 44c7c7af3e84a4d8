"""The Cortex-M vector table, read from the ELF before flashing: where the core starts (Reset) and
every exception and interrupt handler it can enter (ARMv7-M ARM B1.5.2-B1.5.3, ARMv8-M ARM
B3.30: word 0 the initial main stack pointer, word 1 Reset, 2 NMI, 3 HardFault, 4 MemManage,
5 BusFault, 6 UsageFault, 7 SecureFault (ARMv8-M), 11 SVCall, 12 DebugMonitor, 14 PendSV,
15 SysTick, 16 + n external interrupt n; at most 496 external interrupts). Each handler's
address has its Thumb bit set.

Where it is, first found of: the object CMSIS and the vendors name it by (TABLE_SYMBOLS); the
section they put it in (TABLE_SECTIONS); the place where the ELF's entry point is word 1. Each
must hold an initial SP within the ELF's RAM (or at its end) in word 0 and the start of a Thumb
function in word 1. It ends at its object's size, else at the first word that is neither 0 (an
unused vector) nor the start of a function."""
import struct

EXCEPTIONS = {1: "Reset", 2: "NMI", 3: "HardFault", 4: "MemManage", 5: "BusFault", 6: "UsageFault",
              7: "SecureFault", 11: "SVCall", 12: "DebugMonitor", 14: "PendSV", 15: "SysTick"}
MAX_VECTORS = 16 + 496
FAULTS = ("HardFault", "MemManage", "BusFault", "UsageFault", "SecureFault")  # the fault exceptions
# CMSIS startup files (__Vectors, __isr_vector), ST's (g_pfnVectors), NXP's and others'.
TABLE_SYMBOLS = ("__Vectors", "__isr_vector", "g_pfnVectors", "__vector_table", "_vector_table", "vector_table",
                 "vectors", "_vectors", "__VECTOR_TABLE", "exception_table", "_exc_vector_table")
TABLE_SECTIONS = (".isr_vector", ".vectors", ".vector_table", ".intvecs", ".exc_vector_table")


def vector_name(i: int) -> str:
    return EXCEPTIONS.get(i, f"IRQ{i - 16}" if i >= 16 else f"vector {i}")


def table(image) -> tuple[int, list[tuple[int, int]]] | None:
    """(the table's address, [(vector number, handler address with its Thumb bit clear)] of the
    vectors in use) from an acquire/elfcode.Image, or None when no table is found."""
    for at in _candidates(image):
        head = image.read(at, 8)
        if head is None:
            continue
        sp, reset = struct.unpack("<II", head)
        if _initial_sp(image, sp) and reset & 1 and image.starts_function(reset & ~1):
            return at, _vectors(image, at)
    return None


def _candidates(image):
    for name in TABLE_SYMBOLS:
        if name in image.symbols:
            yield image.symbols[name]
    for name in TABLE_SECTIONS:
        if name in image.sections_named:
            yield image.sections_named[name]
    if image.entry:
        needle = struct.pack("<I", image.entry | 1)
        for lo, data in sorted(image.sections, key=lambda s: s[0]):
            at = data.find(needle)
            while at >= 0:
                if (lo + at) % 4 == 0 and at >= 4:
                    yield lo + at - 4
                at = data.find(needle, at + 1)


def _initial_sp(image, sp: int) -> bool:
    return not sp & 3 and any(lo <= sp <= hi for lo, hi in image.ram)


def _vectors(image, start: int) -> list[tuple[int, int]]:
    count = min(MAX_VECTORS, image.objects.get(start, 4 * MAX_VECTORS) // 4)
    out = []
    for i in range(1, count):
        word = image.read(start + 4 * i, 4)
        if word is None:
            break
        word = struct.unpack("<I", word)[0]
        if word == 0 or (7 < i < 11 or i == 13):  # unused, or reserved
            continue
        if not word & 1 or not image.starts_function(word & ~1):
            break
        out.append((i, word & ~1))
    return out
