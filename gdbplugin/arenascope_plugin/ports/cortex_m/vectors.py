"""The Cortex-M vector table, read from the ELF before flashing: where the core starts (Reset) and
every exception and interrupt handler it can enter (ARMv7-M ARM B1.5.2-B1.5.3, ARMv8-M ARM
B3.30: word 0 the initial main stack pointer, word 1 Reset, 2 NMI, 3 HardFault, 4 MemManage,
5 BusFault, 6 UsageFault, 7 SecureFault (ARMv8-M), 11 SVCall, 12 DebugMonitor, 14 PendSV,
15 SysTick, 16 + n external interrupt n; at most 496 external interrupts). Each handler's
address has its Thumb bit set.

Found without a symbol name: the table is where the ELF's entry point (Reset) is word 1 and
word 0 is an even address, the first such place in address order; it goes on while each word
is 0 (an unused vector) or the start of a function."""
import struct

EXCEPTIONS = {1: "Reset", 2: "NMI", 3: "HardFault", 4: "MemManage", 5: "BusFault", 6: "UsageFault",
              7: "SecureFault", 11: "SVCall", 12: "DebugMonitor", 14: "PendSV", 15: "SysTick"}
MAX_VECTORS = 16 + 496
FAULTS = ("HardFault", "MemManage", "BusFault", "UsageFault", "SecureFault", "NMI")


def vector_name(i: int) -> str:
    return EXCEPTIONS.get(i, f"IRQ{i - 16}" if i >= 16 else f"vector {i}")


def table(image) -> tuple[int, list[tuple[int, int]]] | None:
    """(the table's address, [(vector number, handler address with its Thumb bit clear)] of the
    vectors in use) from an acquire/elfcode.Image, or None when no table is found."""
    if not image.entry:
        return None
    needle = struct.pack("<I", image.entry | 1)
    for lo, data in sorted(image.sections, key=lambda s: s[0]):
        at = data.find(needle)
        while at >= 0:
            if (lo + at) % 4 == 0 and at >= 4 and not struct.unpack_from("<I", data, at - 4)[0] & 3:
                return lo + at - 4, _vectors(image, data, at - 4)
            at = data.find(needle, at + 1)
    return None


def _vectors(image, data: bytes, start: int) -> list[tuple[int, int]]:
    out = []
    for i in range(1, MAX_VECTORS):
        off = start + 4 * i
        if off + 4 > len(data):
            break
        word = struct.unpack_from("<I", data, off)[0]
        if word == 0 or (7 < i < 11 or i == 13):  # unused, or reserved
            continue
        if not word & 1 or not image.starts_function(word & ~1):
            break
        out.append((i, word & ~1))
    return out
