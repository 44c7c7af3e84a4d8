"""RV32IC code, decoded for the call graph (analyse/stackdepth.py): every call and branch out of a
function, the addresses it builds as constants (LUI/AUIPC + ADDI: function pointers among them) and
the trap handlers it installs (CSRRW to mtvec). A linear sweep that skips `$d` data spans.

Encodings (RISC-V Unprivileged ISA 20191213): instruction length 1.5 (bits 1:0 != 11: 16 bits);
JAL and JALR 2.5 (rd = x1 links: a call; rd = x0: a jump; JALR x0, 0(x1) is the return; JAL x5
is GCC's -msave-restore millicode, libgcc's riscv/save-restore.S, whose registers go into the
caller's frame, which the caller's call frame information already counts: no call);
LUI, AUIPC and ADDI 2.4; LW 2.6 and C.LW 16.3 (a call through a word loaded from a word
the function loaded may be a virtual call, through that vtable slot, Itanium C++ ABI 2.5; one
through a word loaded from a register holding no loaded word is a struct's function pointer);
B-type branches 2.5; CSRRW 9.1 (mtvec is CSR 0x305, Privileged Architecture 3.1.7); C.J,
C.JAL, C.JR, C.JALR, C.LUI, C.ADDI 16.3-16.5. The assembler's `call` and `tail` are AUIPC +
JALR on the same register, adjacent: resolved to their target. A JR through a register that an
ADD (2.4, C.ADD 16.5) made from a known address is a relative jump table's switch: no site.
"""
import struct

from arenascope_plugin.ports import CALL, INDIRECT_CALL, INDIRECT_JUMP, JUMP, CodeFacts, CodeSite, linear_sweep

RA, T0 = 1, 5
MTVEC = 0x305
_NO_RD = (0x23, 0x27, 0x63, 0x0F, 0x73)  # stores, FP stores, branches, fences, system: no rd written


def _sext(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def _jal_imm(w: int) -> int:
    return _sext((w >> 31 & 1) << 20 | (w >> 21 & 0x3FF) << 1 | (w >> 20 & 1) << 11 | (w >> 12 & 0xFF) << 12, 21)


def _cj_imm(h: int) -> int:
    return _sext((h >> 12 & 1) << 11 | (h >> 11 & 1) << 4 | (h >> 9 & 3) << 8 | (h >> 8 & 1) << 10 |
                 (h >> 7 & 1) << 6 | (h >> 6 & 1) << 7 | (h >> 3 & 7) << 1 | (h >> 2 & 1) << 5, 12)


def _branch_imm(w: int) -> int:
    return _sext((w >> 31 & 1) << 12 | (w >> 7 & 1) << 11 | (w >> 25 & 0x3F) << 5 | (w >> 8 & 0xF) << 1, 13)


class _Sweep:
    """The state of one linear sweep: the registers holding a known upper value (LUI/AUIPC) or a
    known address (+ ADDI), and the instruction before (for AUIPC + JALR)."""

    def __init__(self, out: CodeFacts) -> None:
        self.out, self.upper, self.value, self.last_upper = out, {}, {}, None
        self.loaded: dict[int, tuple[bool, int]] = {}  # rd -> (loaded from a loaded word, offset): LW chains
        self.relative: set[int] = set()  # registers holding a known address plus something (ADD)

    def forget(self, rd: int) -> None:
        self.upper.pop(rd, None)
        self.value.pop(rd, None)
        self.loaded.pop(rd, None)
        self.relative.discard(rd)

    def add(self, rd: int, a: int, b: int) -> None:
        """ADD rd, a, b: a known address plus a register is a place relative to that address (a
        jump table's base plus the offset loaded from it: a switch's target)."""
        relative = a in self.value or b in self.value
        self.forget(rd)
        if relative:
            self.relative.add(rd)

    def load_word(self, rd: int, rs1: int, imm: int) -> None:
        """LW rd, imm(rs1): whether rs1 held a word this function loaded (an object's vtable
        pointer, for a virtual call), and the offset (the vtable slot)."""
        chained = rs1 in self.loaded
        self.forget(rd)
        self.loaded[rd] = (chained, imm)

    def called(self) -> None:
        """A call: the caller-saved registers (ra, t0-t6, a0-a7; the psABI's calling convention)
        hold nothing known after it."""
        for r in (1, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 28, 29, 30, 31):
            self.forget(r)

    def site(self, at: int, kind: str, text: str, rs1: int, imm: int = 0) -> CodeSite:
        """An indirect call or jump through rs1 (+ imm), with what the loads say of it."""
        found = self.loaded.get(rs1) if not imm else None
        return CodeSite(at, kind, None, text, found[1] if found and found[0] else None, bool(found and not found[0]))

    def wide(self, at: int, w: int) -> None:
        op, rd, f3, rs1 = w & 0x7F, w >> 7 & 31, w >> 12 & 7, w >> 15 & 31
        just = self.last_upper
        self.last_upper = None
        if op in (0x37, 0x17):  # LUI, AUIPC
            self.forget(rd)
            self.upper[rd] = ((w & 0xFFFFF000) + (at if op == 0x17 else 0)) & 0xFFFFFFFF
            self.last_upper = rd
        elif op == 0x13 and f3 == 0 and (rs1 in self.upper or rs1 == 0):  # ADDI on an upper value (LI: x0)
            value = (self.upper.get(rs1, 0) + _sext(w >> 20, 12)) & 0xFFFFFFFF
            self.forget(rd)
            self.out.constants.add(value)
            self.value[rd] = value
        elif op == 0x6F and rd == T0:
            pass  # JAL t0: GCC's -msave-restore millicode (__riscv_save_N), whose stack the caller's frame counts
        elif op == 0x6F:
            kind = JUMP if rd == 0 else CALL
            self.out.sites.append(CodeSite(at, kind, (at + _jal_imm(w)) & 0xFFFFFFFF, "JAL" if rd else "J"))
            if rd:
                self.called()
            self.forget(rd)
        elif op == 0x67:
            self._jalr(at, rd, rs1, _sext(w >> 20, 12), just)
        elif op == 0x63:
            self.out.sites.append(CodeSite(at, JUMP, (at + _branch_imm(w)) & 0xFFFFFFFF, "B<c>"))
        elif op == 0x03 and f3 == 2:  # LW
            self.load_word(rd, rs1, _sext(w >> 20, 12))
        elif op == 0x73 and f3 == 1 and w >> 20 == MTVEC and rs1 in self.value:
            self.out.trap_vectors.add(self.value[rs1] & ~3)
        elif op == 0x33 and f3 == 0 and w >> 25 in (0, 0x20) and rd == 2 and rs1 == 2:  # ADD/SUB sp, sp, rs2
            self.out.dynamic_sp = self.out.dynamic_sp or f"{'SUB' if w >> 25 else 'ADD'} sp, sp, x{w >> 20 & 31}"
        elif op == 0x33 and f3 == 0 and w >> 25 == 0:  # ADD
            self.add(rd, rs1, w >> 20 & 31)
        elif op not in _NO_RD:
            self.forget(rd)

    def _jalr(self, at: int, rd: int, rs1: int, imm: int, just: int | None) -> None:
        if just == rs1 and rs1 in self.upper:  # AUIPC + JALR: `call` / `tail`
            target = (self.upper[rs1] + imm) & 0xFFFFFFFF
            self.out.sites.append(CodeSite(at, CALL if rd else JUMP, target, "AUIPC+JALR"))
        elif rd == 0 and rs1 in self.relative:
            pass  # a jump table's base plus an offset from the table: a switch, inside the function
        elif rd == 0 and not (rs1 in (RA, T0) and imm == 0):  # JR ra / JR t0 (millicode): returns
            self.out.sites.append(self.site(at, INDIRECT_JUMP, f"JR x{rs1}", rs1, imm))
        elif rd:
            self.out.sites.append(self.site(at, INDIRECT_CALL, f"JALR x{rs1}", rs1, imm))
        if rd:
            self.called()
        self.forget(rd)

    def narrow(self, at: int, h: int) -> None:
        op, f3, rd = h & 3, h >> 13, h >> 7 & 31
        self.last_upper = None
        if op == 1 and f3 in (1, 5):
            self.out.sites.append(CodeSite(at, CALL if f3 == 1 else JUMP, (at + _cj_imm(h)) & 0xFFFFFFFF,
                                           "C.JAL" if f3 == 1 else "C.J"))
            if f3 == 1:
                self.called()
        elif op == 2 and h & 0xF07F in (0x8002, 0x9002) and rd:
            if h & 0x1000:
                self.out.sites.append(self.site(at, INDIRECT_CALL, f"C.JALR x{rd}", rd))
                self.called()
            elif rd not in (RA, T0) and rd not in self.relative:  # a return, or a switch
                self.out.sites.append(self.site(at, INDIRECT_JUMP, f"C.JR x{rd}", rd))
        elif op == 1 and f3 == 3 and rd not in (0, 2):  # C.LUI
            self.forget(rd)
            self.upper[rd] = (_sext((h >> 12 & 1) << 5 | (h >> 2 & 0x1F), 6) << 12) & 0xFFFFFFFF
        elif op == 1 and f3 == 0 and rd in self.upper:  # C.ADDI on an upper value
            value = (self.upper[rd] + _sext((h >> 12 & 1) << 5 | (h >> 2 & 0x1F), 6)) & 0xFFFFFFFF
            self.forget(rd)
            self.out.constants.add(value)
            self.value[rd] = value
        elif op == 0 and f3 == 2:  # C.LW rd', offset(rs1')
            offset = (h >> 10 & 7) << 3 | (h >> 6 & 1) << 2 | (h >> 5 & 1) << 6
            self.load_word(8 + (h >> 2 & 7), 8 + (h >> 7 & 7), offset)
        elif op == 1 and f3 == 2 and rd:  # C.LI
            self.forget(rd)
            self.value[rd] = _sext((h >> 12 & 1) << 5 | (h >> 2 & 0x1F), 6) & 0xFFFFFFFF
        elif op == 2 and f3 == 4 and h >> 12 & 1 and rd and h >> 2 & 31:  # C.ADD rd, rs2
            self.add(rd, rd, h >> 2 & 31)
        elif (op == 1 and f3 in (0, 2)) or (op == 2 and f3 in (0, 2, 4)):  # CI/CR formats writing rd
            self.forget(rd)
        elif op in (0, 1):  # CIW/CL/CA/CB formats write rd' (x8-x15) in bits 4:2 or 9:7
            self.forget(8 + (h >> 2 & 7))
            self.forget(8 + (h >> 7 & 7))


def decode(code: bytes, base: int, data: list[tuple[int, int]]) -> CodeFacts:
    """The CodeFacts of one function's RV32IC code at `base`; `data`: sorted [(lo, hi)] spans in it
    that are data (their aligned words count as constants)."""
    out = CodeFacts()
    sweep = _Sweep(out)

    def one(at: int, h: int) -> int | None:
        if h & 3 != 3:
            sweep.narrow(at, h)
            return 2
        if at + 4 > base + len(code):
            return None
        sweep.wide(at, struct.unpack_from("<I", code, at - base)[0])
        return 4

    out.constants |= linear_sweep(code, base, data, one)
    return out


def prologue_bytes(code: bytes, limit: int = 16) -> int | None:
    """What the prologue at the start of `code` takes from the stack, in bytes, for a function the
    ELF has no call frame information for: the sum of its ADDI sp, sp, -N, C.ADDI16SP and C.ADDI
    sp (2.4, 16.5) before its first jump, at most `limit` instructions; None when SP moves by a
    register (SUB sp, sp, rs: a dynamic frame)."""
    total, at = 0, 0
    for _ in range(limit):
        if at + 2 > len(code):
            break
        h = struct.unpack_from("<H", code, at)[0]
        if h & 3 == 3:
            if at + 4 > len(code):
                break
            w = struct.unpack_from("<I", code, at)[0]
            op, rd, rs1 = w & 0x7F, w >> 7 & 31, w >> 15 & 31
            if op == 0x13 and w >> 12 & 7 == 0 and rd == 2 and rs1 == 2:
                total += max(0, -_sext(w >> 20, 12))
            elif op == 0x33 and rd == 2:
                return None
            elif op in (0x6F, 0x67, 0x63):
                break
            at += 4
        else:
            if h & 0xEF83 == 0x6101:  # C.ADDI16SP
                imm = ((h >> 12 & 1) << 9 | (h >> 6 & 1) << 4 | (h >> 5 & 1) << 6 | (h >> 3 & 3) << 7 |
                       (h >> 2 & 1) << 5)
                total += max(0, -_sext(imm, 10))
            elif h & 0xEF83 == 0x0101:  # C.ADDI sp
                total += max(0, -_sext((h >> 12 & 1) << 5 | (h >> 2 & 0x1F), 6))
            elif (h & 3 == 1 and h >> 13 in (1, 5, 6, 7)) or (h & 0xE07F == 0x8002 and h >> 7 & 31):
                break
            at += 2
    return total
