"""Thumb code, decoded for the call graph (analyse/stackdepth.py): every call and branch out of a
function, and the words of its literal pools (the constants it loads: function addresses among
them). A linear sweep that skips the spans the ELF's `$d` mapping symbols mark as data.

Encodings (ARMv7-M ARM A5.1 instruction length: a first halfword 0b11101, 0b11110 or 0b11111 in
bits 15:11 starts a 32-bit instruction; ARMv6-M's subset is the same):
- BL, A7.7.18 T1: 11110 S imm10 | 11 J1 1 J2 imm11; I1 = NOT(J1 XOR S), I2 = NOT(J2 XOR S),
  imm32 = SignExtend(S:I1:I2:imm10:imm11:'0'); target = the BL's address + 4 + imm32.
- B, A7.7.12 T4: 11110 S imm10 | 10 J1 1 J2 imm11 (imm32 as BL's); T3: 11110 S cond imm6 |
  10 J1 0 J2 imm11, imm32 = SignExtend(S:J2:J1:imm6:imm11:'0'); T2: 11100 imm11; T1: 1101 cond imm8.
- BLX (register), A7.7.19 T1: 0100 0111 1 Rm 000; BX, A7.7.20 T1: 0100 0111 0 Rm 000 (BX LR is
  the return); MOV PC, Rm, A7.7.77 T1: 0100 0110 1 Rm 111 (D:Rd = 15).
"""
import struct

from arenascope_plugin.ports import CALL, INDIRECT_CALL, INDIRECT_JUMP, JUMP, CodeFacts, CodeSite, linear_sweep

LR = 14


def _bl_imm(hw1: int, hw2: int) -> int:
    s = hw1 >> 10 & 1
    i1 = 1 ^ (hw2 >> 13 & 1) ^ s
    i2 = 1 ^ (hw2 >> 11 & 1) ^ s
    imm = s << 24 | i1 << 23 | i2 << 22 | (hw1 & 0x3FF) << 12 | (hw2 & 0x7FF) << 1
    return imm - (1 << 25) if s else imm


def _bcond_imm(hw1: int, hw2: int) -> int:
    s = hw1 >> 10 & 1
    imm = s << 20 | (hw2 >> 11 & 1) << 19 | (hw2 >> 13 & 1) << 18 | (hw1 & 0x3F) << 12 | (hw2 & 0x7FF) << 1
    return imm - (1 << 21) if s else imm


def _wide(at: int, hw1: int, hw2: int) -> CodeSite | None:
    """The call or branch a 32-bit Thumb instruction is, or None."""
    if hw1 & 0xF800 != 0xF000 or not hw2 & 0x8000:
        return None
    if hw2 & 0xD000 == 0xD000:
        return CodeSite(at, CALL, (at + 4 + _bl_imm(hw1, hw2)) & 0xFFFFFFFF, "BL")
    if hw2 & 0xD000 == 0x9000:
        return CodeSite(at, JUMP, (at + 4 + _bl_imm(hw1, hw2)) & 0xFFFFFFFF, "B.W")
    if hw2 & 0xD000 == 0x8000 and (hw1 >> 7 & 7) != 7:  # cond 111x: not a branch (MSR, hints, ...)
        return CodeSite(at, JUMP, (at + 4 + _bcond_imm(hw1, hw2)) & 0xFFFFFFFF, "B<c>.W")
    return None


def _narrow(at: int, hw: int) -> CodeSite | None:
    """The call or branch a 16-bit Thumb instruction is, or None (BX LR, a return, is none)."""
    if hw & 0xFF87 == 0x4780:
        return CodeSite(at, INDIRECT_CALL, None, f"BLX r{hw >> 3 & 0xF}")
    if hw & 0xFF87 == 0x4700 and hw >> 3 & 0xF != LR:
        return CodeSite(at, INDIRECT_JUMP, None, f"BX r{hw >> 3 & 0xF}")
    if hw & 0xFF87 == 0x4687:
        return CodeSite(at, INDIRECT_JUMP, None, f"MOV pc, r{hw >> 3 & 0xF}")
    if hw & 0xF800 == 0xE000:
        imm = (hw & 0x7FF) << 1
        return CodeSite(at, JUMP, (at + 4 + (imm - (1 << 12) if imm >> 11 else imm)) & 0xFFFFFFFF, "B")
    if hw & 0xF000 == 0xD000 and (hw >> 8 & 0xF) < 0xE:
        imm = (hw & 0xFF) << 1
        return CodeSite(at, JUMP, (at + 4 + (imm - (1 << 9) if imm >> 8 else imm)) & 0xFFFFFFFF, "B<c>")
    return None


def _written(hw: int) -> set[int] | None:
    """The low registers (r0-r7) a 16-bit Thumb instruction other than LDR (immediate) writes, or
    None: all of them may be (ARMv7-M ARM A5.2, the 16-bit encodings by opcode)."""
    top = hw >> 11
    if top <= 0x03 or hw >> 10 == 0x10 or top == 0x0B or top in (0x0F, 0x11) or hw >> 8 in (0xB2, 0xBA):
        return {hw & 7}                       # shifts, ADD/SUB, data processing, LDR(reg)/LDRB/LDRH (imm)
    if top in (0x04, 0x06, 0x07, 0x09, 0x13, 0x14, 0x15):
        return {hw >> 8 & 7}                  # MOV/ADD/SUB imm8, LDR literal, LDR SP-relative, ADR/ADD SP
    if hw >> 8 in (0x44, 0x46):
        return {(hw >> 4 & 8) | (hw & 7)}     # ADD / MOV (register), high registers
    if hw >> 9 == 0x5E or top == 0x19:
        return {r for r in range(8) if hw >> r & 1} | ({hw >> 8 & 7} if top == 0x19 else set())  # POP, LDM
    if top in (0x05, 0x0C, 0x0D, 0x0E, 0x10, 0x12, 0x18, 0x1A, 0x1B, 0x1C) or hw >> 8 in (0x45, 0x47, 0xB0,
                                                                                           0xB4, 0xB5, 0xBE, 0xBF):
        return set()                          # stores, CMP imm, branches, PUSH, SP adjust, BKPT, hints
    return None


def _sp_by_register(hw1: int, hw2: int, length: int) -> str:
    """The instruction, when it sets SP from a register other than the frame pointer r7 or r11
    (which restores it): MOV SP, Rm (A7.7.77), SUB.W SP, SP, Rm (A7.7.172 T1, Rd = Rn = SP); else ""."""
    if length == 2 and hw1 & 0xFF87 == 0x4685 and hw1 >> 3 & 0xF not in (7, 11):
        return f"MOV sp, r{hw1 >> 3 & 0xF}"
    if length == 4 and hw1 & 0xFFEF == 0xEBAD and hw2 >> 8 & 0xF == 0xD:
        return f"SUB.W sp, sp, r{hw2 & 0xF}"
    return ""


class _Loads:
    """LDR chains ending at a BLX: a word loaded from [a word this function loaded + imm] may be a
    C++ virtual call through vtable slot imm (Itanium C++ ABI 2.5: the object's vtable pointer,
    then the slot); one loaded from [a register holding no loaded word + imm] is a struct's
    function pointer. Any instruction that may write a register forgets what it held; a call
    forgets the caller-saved r0-r3, r12 and LR (AAPCS 5.1.1)."""

    def __init__(self) -> None:
        self.loaded: dict[int, tuple[bool, int]] = {}

    def ldr(self, rt: int, rn: int, imm: int) -> None:
        chained = rn in self.loaded
        self.loaded[rt] = (chained, imm)

    def called(self) -> None:
        for r in (0, 1, 2, 3, 12, 14):
            self.loaded.pop(r, None)

    def site(self, site: CodeSite, rm: int) -> CodeSite:
        found = self.loaded.get(rm)
        return CodeSite(site.at, site.kind, None, site.text, found[1] if found and found[0] else None,
                        bool(found and not found[0]))

    def narrow(self, hw: int) -> None:
        if hw & 0xF800 == 0x6800:  # LDR Rt, [Rn, #imm5 * 4]
            self.ldr(hw & 7, hw >> 3 & 7, (hw >> 6 & 0x1F) << 2)
            return
        written = _written(hw)
        if written is None:
            self.loaded.clear()
        for r in written or ():
            self.loaded.pop(r, None)

    def wide(self, hw1: int, hw2: int) -> None:
        if hw1 & 0xFFF0 == 0xF8D0:  # LDR.W Rt, [Rn, #imm12]
            self.ldr(hw2 >> 12, hw1 & 0xF, hw2 & 0xFFF)
        elif hw1 & 0xFE00 != 0xF800 or hw1 & 0x0010:  # anything but a store may write any register
            self.loaded.clear()



def decode(code: bytes, base: int, data: list[tuple[int, int]]) -> CodeFacts:
    """The CodeFacts of one function's Thumb code at `base` (its Thumb bit clear); `data`: sorted
    [(lo, hi)] spans in it that are data. Constants: every aligned word of those spans."""
    out = CodeFacts()
    loads = _Loads()

    def one(at: int, hw1: int) -> int | None:
        if hw1 >> 11 in (0x1D, 0x1E, 0x1F):
            if at + 4 > base + len(code):
                return None
            hw2 = struct.unpack_from("<H", code, at - base + 2)[0]
            site, length = _wide(at, hw1, hw2), 4
            loads.wide(hw1, hw2)
        else:
            site, length = _narrow(at, hw1), 2
            if site is not None and site.kind in (INDIRECT_CALL, INDIRECT_JUMP):
                site = loads.site(site, hw1 >> 3 & 0xF)
            loads.narrow(hw1)
        if site is not None and site.kind in (CALL, INDIRECT_CALL):
            loads.called()
        if not out.dynamic_sp:
            out.dynamic_sp = _sp_by_register(hw1, struct.unpack_from("<H", code, at - base + 2)[0]
                                             if length == 4 else 0, length)
        if site is not None:
            out.sites.append(site)
        return length

    out.constants = linear_sweep(code, base, data, one)
    return out


def _thumb_expand(imm12: int) -> int:
    """ThumbExpandImm (ARMv7-M ARM A5.3.2) for the immediates a prologue's SUB SP uses."""
    if imm12 >> 10 == 0:
        b, kind = imm12 & 0xFF, imm12 >> 8 & 3
        return (b, b << 16 | b, b << 24 | b << 8, b * 0x01010101)[kind]
    value, rot = 0x80 | (imm12 & 0x7F), imm12 >> 7
    return (value >> rot | value << (32 - rot)) & 0xFFFFFFFF


def prologue_bytes(code: bytes, limit: int = 16) -> int | None:
    """What the prologue at the start of `code` takes from the stack, in bytes, for a function the
    ELF has no call frame information for: the sum of its PUSH, PUSH.W, VPUSH and SUB SP, #imm
    (ARMv7-M ARM A7.7.99 PUSH, A7.7.175 SUB SP minus immediate, A7.7.249 VPUSH; and ARMv6-M's
    LDR Rm, =-N; ADD SP, Rm for a frame over 508 B, A6.7.3 and A6.7.27) before its first
    branch, call or return, at most `limit` instructions; None when SP moves by a register (a
    dynamic frame: alloca)."""
    total, at, literal = 0, 0, {}
    for _ in range(limit):
        if at + 2 > len(code):
            break
        hw1 = struct.unpack_from("<H", code, at)[0]
        hw2 = struct.unpack_from("<H", code, at + 2)[0] if at + 4 <= len(code) else 0
        if hw1 & 0xF800 == 0x4800:                                  # LDR Rt, [PC, #imm8*4]: a constant
            where = ((at + 4) & ~3) + 4 * (hw1 & 0xFF)
            if where + 4 <= len(code):
                literal[hw1 >> 8 & 7] = struct.unpack_from("<i", code, where)[0]
        elif hw1 & 0xFF87 == 0x4485 and (hw1 >> 3 & 0xF) in literal:   # ADD SP, Rm: Rm = -frame (ARMv6-M)
            total += max(0, -literal[hw1 >> 3 & 0xF])
        elif hw1 & 0xFE00 == 0xB400:                                  # PUSH {rlist, lr?}
            total += 4 * (bin(hw1 & 0xFF).count("1") + (hw1 >> 8 & 1))
        elif hw1 & 0xFF80 == 0xB080:                                # SUB SP, SP, #imm7*4
            total += 4 * (hw1 & 0x7F)
        elif hw1 == 0xE92D:                                         # PUSH.W (STMDB SP!)
            total += 4 * bin(hw2 & 0xDFFF).count("1")
        elif hw1 == 0xF84D and hw2 & 0x0FFF == 0x0D04:              # PUSH.W {rt}
            total += 4
        elif hw1 & 0xFBEF == 0xF1AD and hw2 & 0x8F00 == 0x0D00:     # SUB.W SP, SP, #const
            total += _thumb_expand((hw1 >> 10 & 1) << 11 | (hw2 >> 12 & 7) << 8 | (hw2 & 0xFF))
        elif hw1 & 0xFBFF == 0xF2AD and hw2 & 0x8F00 == 0x0D00:     # SUBW SP, SP, #imm12
            total += (hw1 >> 10 & 1) << 11 | (hw2 >> 12 & 7) << 8 | (hw2 & 0xFF)
        elif hw1 & 0xFFBF == 0xED2D and hw2 & 0x0E00 == 0x0A00:     # VPUSH
            total += 4 * (hw2 & 0xFF)
        elif hw1 & 0xFF87 == 0x4485 or (hw1 & 0xFFEF == 0xEBAD and hw2 >> 8 & 0xF == 0xD):  # ADD/SUB SP, Rm
            return None
        elif (_wide(at, hw1, hw2) if hw1 >> 11 in (0x1D, 0x1E, 0x1F) else _narrow(at, hw1)) is not None \
                or hw1 & 0xFF87 == 0x4700 or hw1 & 0xFE00 == 0xBC00:   # a branch, call or return
            break
        at += 4 if hw1 >> 11 in (0x1D, 0x1E, 0x1F) else 2
    return total
