"""Hostile OpenOCD Tcl replies (issue 37, "Tracebacks"): a number wider than 32 bits or a decimal
with a leading zero in a read_memory or get_reg reply raised ValueError/OverflowError out of the
reader (in GDB, the live poller's thread died). Every number is now range-checked: a reply that is
not 32-bit numbers is a MemoryReadError that says so; a register that is not one is left unknown."""
import hypothesis
import pytest
from hypothesis import strategies as st

from arenascope_plugin.acquire import openocd
from arenascope_plugin.acquire.reader import MemoryReadError


class FakeLink:
    """A Tcl link whose every call answers `reply` (ok, text), recording the scripts."""
    endpoint = "fake:6666"

    def __init__(self, reply):
        self.reply, self.scripts = reply, []

    def call(self, script):
        self.scripts.append(script)
        return self.reply

    def call_many_later(self, lines):
        got = [self.call(line) for line in lines]
        return lambda: got


@pytest.mark.parametrize("text,value", [("0x10", 16), ("0xfF", 255), ("0XFF", None), ("0123", 123),
                                        ("4294967295", 0xFFFFFFFF), ("0xffffffff", 0xFFFFFFFF), ("4294967296", None),
                                        ("0x1ffffffff", None), ("9" * 4000, None), ("abc", None), ("-1", None),
                                        ("", None)])
def test_a_word_is_a_32_bit_number_or_none(text, value):
    assert openocd.word(text) == value


@pytest.mark.parametrize("reply", ["{0x1ffffffff 0x0}", "{18446744073709551616 0}", "{0x0}", "{0x0 zz}"])
def test_a_read_with_a_hostile_reply_is_a_read_error_not_a_traceback(reply):
    reader = openocd.TclReader(FakeLink((True, reply)))
    with pytest.raises(MemoryReadError, match="OpenOCD's reply is not 2 32-bit numbers"):
        reader.read(0x20000000, 8)


def test_leading_zeros_are_decimal_as_tcl_prints_them():
    reader = openocd.TclReader(FakeLink((True, "{010 0x20}")))
    assert reader.read(0x20000000, 8) == (10).to_bytes(4, "little") + (0x20).to_bytes(4, "little")


def test_a_register_reply_with_hostile_numbers_leaves_them_unknown():
    core = openocd.CoreOverTcl(FakeLink((True, "halted 0 {sp 0x20001000 pc 0x1ffffffff lr 0123 xPSR 99999999999999}")))
    core.refresh()
    assert core.state == "halted"
    assert core.register("sp") == 0x20001000 and core.register("lr") == 123
    assert core.register("pc") is None and core.register("xpsr") is None


def _word_by_word(text, count):
    """The reply's bytes as word() reads them one at a time (the reference words_bytes must match)."""
    values = [openocd.word(w) for w in text.split()]
    if len(values) != count or None in values:
        return None
    return b"".join(v.to_bytes(4, "little") for v in values if v is not None)


@pytest.mark.parametrize("text,count,expected", [
    ("0x1 0xffffffff", 2, bytes([1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF])),
    ("0x10203040", 1, bytes([0x40, 0x30, 0x20, 0x10])),
    ("  0xa\n0xB ", 2, bytes([10, 0, 0, 0, 11, 0, 0, 0])),
    ("1 010", 2, bytes([1, 0, 0, 0, 10, 0, 0, 0])),        # decimal, a leading zero still decimal
    ("0x0000000ff", 1, bytes([0xFF, 0, 0, 0])),            # nine digits, still 32 bits
    ("", 0, b""),
    ("0x1 0x2", 3, None), ("0x1", 0, None), ("0x100000000", 1, None), ("0XFF", 1, None), ("0x", 1, None),
    ("0x1 x", 2, None), ("-1", 1, None), ("0x1,0x2", 1, None)])
def test_a_reply_s_words_become_little_endian_bytes(text, count, expected):
    assert openocd.words_bytes(text, count) == expected


TOKENS = st.one_of(st.integers(0, 0xFFFFFFFF).map(hex), st.integers(0, 1 << 40).map(str),
                   st.integers(0, 1 << 40).map(hex), st.sampled_from(["0x", "0X1", "zz", "-1", "01"]))


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.lists(TOKENS, max_size=12),
                  st.sampled_from([" ", "  ", "\n", " \t"]), st.integers(0, 14))
def test_the_fast_path_reads_a_reply_as_word_does(tokens, sep, count):
    # words_bytes checks a list of hex words by one regular expression: it must agree with
    # word() a word on every reply, hostile ones too.
    text = sep.join(tokens)
    assert openocd.words_bytes(text, count) == _word_by_word(text, count)
