"""Memory readers: the one interface through which the plugin reads target memory.

A reader has `read(addr, length) -> bytes` (raising MemoryReadError, never returning short
data) and a `name` for messages. Readers never write. Implementations:
- target.GdbReader: the selected GDB inferior (any GDB server: OpenOCD, QEMU, gdbserver);
- ImageReader: bytes at known addresses (a RAM dump, or test images);
- CountingReader: wraps another and counts calls and bytes (benchmarks, tests).
- acquire/dump.DumpReader: a RAM dump's files (its `origin` says which); the OpenOCD Tcl and GDB
  remote readers (acquire/openocd.py, acquire/rsp.py) read a live target.
"""
import socket
import time
from collections.abc import Iterable

from arenascope_plugin.errors import ArenascopeError


class MemoryReadError(ArenascopeError):
    """Memory at [addr, addr+length) could not be read; `why` says what the reader was told."""

    def __init__(self, addr: int, length: int, why: str) -> None:
        super().__init__(f"cannot read {length} B at {addr:#x}: {why}", where=f"{addr:#x}")
        self.addr, self.length, self.why = addr, length, why


class MemoryReader:
    name = "memory"
    origin: str | None = None  # what the bytes are when not a live target's (a RAM dump's files), for reports

    def read(self, addr: int, length: int) -> bytes:
        raise NotImplementedError


class ImageReader(MemoryReader):
    """Reads from byte images placed at addresses: [(base_addr, bytes), ...]."""

    def __init__(self, segments: Iterable[tuple[int, bytes | bytearray]], name: str = "image") -> None:
        self.segments = [(base, bytes(data)) for base, data in segments]
        self.name = name

    def read(self, addr: int, length: int) -> bytes:
        for base, data in self.segments:
            if base <= addr and addr + length <= base + len(data):
                return data[addr - base:addr - base + length]
        raise MemoryReadError(addr, length, f"outside the {self.name}")


class CountingReader(MemoryReader):
    """Counts the reads and bytes that go through it."""

    def __init__(self, inner: MemoryReader) -> None:
        self.inner, self.name = inner, inner.name
        self.calls = self.bytes = 0

    def read(self, addr: int, length: int) -> bytes:
        self.calls += 1
        self.bytes += length
        return self.inner.read(addr, length)


def merge_adjacent(spans: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], list[tuple[int, int, int]]]:
    """Adjacent spans read as one: ([lo, hi) spans to read, in order; for each span given, (which
    merged span holds it, its start in that span's bytes, its length)). Only a span that starts
    where the one before it ends joins it, so memory is read in the order given and no byte that
    was not asked for is read (a gap may be a register whose read has an effect)."""
    merged: list[tuple[int, int]] = []
    where: list[tuple[int, int, int]] = []
    for lo, hi in spans:
        if merged and merged[-1][1] == lo:
            merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
        where.append((len(merged) - 1, lo - merged[-1][0], hi - lo))
    return merged, where


def split_merged(data: list[bytes], where: list[tuple[int, int, int]]) -> list[bytes]:
    """The bytes of each span given to merge_adjacent, from the merged spans' bytes."""
    return [data[i][at:at + n] for i, at, n in where]


def still_sending(sock, last: float | None, timeout: float) -> tuple[bool, float]:
    """(whether a server whose deadline passed is still sending, seconds since its last byte) for
    the remote readers' messages: bytes wait on `sock` unread (looked at, not taken), or the last
    came (at `last`, time.monotonic()) less than a quarter of the deadline ago. Nothing came at all
    (last None): not sending."""
    quiet = time.monotonic() - last if last is not None else 0.0
    if last is None:
        return False, quiet
    try:
        waiting = sock is not None and bool(sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except OSError:  # BlockingIOError: nothing there
        waiting = False
    return waiting or quiet < max(0.1, timeout / 4), quiet


def connect_timeout_cause(host: str) -> str:
    """Why a TCP connection to `host` got no answer within the deadline, for the remote readers'
    messages: on this machine the kernel completes a connection to a listening socket by itself,
    so none means a server that stopped taking them (stopped with SIGSTOP, hung, its backlog
    full); elsewhere, the host or the way to it."""
    if host in ("localhost", "::1") or host.startswith("127."):
        return "the server on this machine takes no connection: it is stopped or hung (restart it)"
    return "the host is down, or a firewall drops it"
