"""Which GDB server listens on a port, so that every message names it (OpenOCD, QEMU's gdbstub,
the J-Link GDB server, ST-LINK_gdbserver, pyOCD, st-util, gdbserver) and `arena live` picks the
way to read it while the core runs (docs/hardware.md):

- OpenOCD: its Tcl RPC port (from its command line's `tcl_port N`, else OpenOCD's default 6666);
- QEMU's gdbstub: none (one connection at a time; it reads memory only while the guest is stopped);
- every other server: a second connection to its GDB port (acquire/rsp.py).

Found on this machine only: the process that owns the listening socket (Linux /proc/net/tcp and
/proc/PID/fd), its command line. A server on another host is not named (a GDB server does not say
what it is in the protocol); then messages say "the GDB server at HOST:PORT"."""
import os
import re
from dataclasses import dataclass

from arenascope_plugin.acquire.openocd import DEFAULT_PORT as TCL_DEFAULT_PORT

# (test on the program's and its arguments' file names, the name messages use, how live reads it)
KNOWN = (
    (lambda n: n == "openocd", "OpenOCD", "tcl"),
    (lambda n: n.startswith("qemu-system-"), "QEMU's gdbstub", None),
    (lambda n: n.startswith("JLinkGDBServer"), "the J-Link GDB server", "gdb"),
    (lambda n: n.startswith("ST-LINK_gdbserver"), "ST-LINK_gdbserver", "gdb"),
    (lambda n: n in ("pyocd", "pyocd-gdbserver"), "pyOCD", "gdb"),
    (lambda n: n == "st-util", "st-util (stlink-org)", "gdb"),
    (lambda n: n.endswith("gdbserver"), "gdbserver", "gdb"),
)


@dataclass
class Server:
    """A GDB server found on this machine. live: "tcl", "gdb" or None (cannot read while running)."""
    name: str
    program: str
    pid: int
    argv: list[str]
    live: str | None

    @property
    def tcl_port(self) -> int:
        """OpenOCD's Tcl port from its command line (`-c "tcl_port N"` or `-c "tcl port N"`),
        else its default; a port set in a config file is not seen (then give --via tcl:HOST:PORT)."""
        m = re.search(r"\btcl[_ ]port\s+(\d+)", " ".join(self.argv))
        return int(m.group(1)) if m else TCL_DEFAULT_PORT


def identify(argv: list[str], pid: int = 0) -> Server:
    """The Server a command line is (the first known program among argv[0] and, for an
    interpreter such as python3, its script)."""
    names = [os.path.basename(a) for a in argv[:3] if a and not a.startswith("-")]
    for test, name, live in KNOWN:
        for n in names:
            if test(n):
                return Server(name, n, pid, argv, live)
    program = names[0] if names else "?"
    return Server(f"the GDB server `{program}`", program, pid, argv, "gdb")


def local_server(host: str, port: int) -> Server | None:
    """The server listening on host:port when it runs on this machine and /proc shows it."""
    if host not in ("127.0.0.1", "localhost", "::1", ""):
        return None
    inode = _listening_inode(port)
    if inode is None:
        return None
    needle = f"socket:[{inode}]"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if not any(os.readlink(f"/proc/{pid}/fd/{fd}") == needle for fd in fds):
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        return identify(argv, int(pid))
    return None


def _listening_inode(port: int) -> str | None:
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                        return parts[9]
        except (OSError, StopIteration, IndexError, ValueError):
            continue
    return None
