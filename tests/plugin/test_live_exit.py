"""`arenascope live` exited 0 after zero refreshes (issue 37, "smaller"): a script took a live view
that read nothing for one that worked. A fake OpenOCD Tcl port answers `version` as OpenOCD 0.12
does and fails every other command; the tool ends at --duration with exit status 1 and says why."""
import pathlib
import socket
import subprocess
import threading

import pytest

from prediction import BUILD

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOL = ROOT / "gdbplugin" / "arenascope"
ELF = BUILD / "firmware" / "demo_fw.elf"


def fake_openocd(answer=None):
    """A listening Tcl port: `version` succeeds, every other command fails (rc 1). answer(command)
    -> bytes, None (say nothing) or an iterator of byte strings (sent in turn, as slowly as it
    yields them: tests/plugin/test_hostile_servers.py) replaces that."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)

    def default(cmd):
        return b"0 {Open On-Chip Debugger 0.12.0}\x1a" if b"version" in cmd else b"1 {invalid command name}\x1a"

    def serve(conn):
        buf = b""
        with conn:
            try:
                while data := conn.recv(4096):
                    buf += data
                    while b"\x1a" in buf:
                        cmd, _, buf = buf.partition(b"\x1a")
                        out = (answer or default)(cmd)
                        for chunk in [out] if isinstance(out, bytes) else out or []:
                            conn.sendall(chunk)
            except OSError:
                return

    def accept():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
    threading.Thread(target=accept, daemon=True).start()
    return srv


@pytest.mark.skipif(not ELF.exists(), reason="the demo firmware is not built (bash tools/build.sh)")
def test_zero_refreshes_is_exit_status_1():
    srv = fake_openocd()
    try:
        r = subprocess.run([str(TOOL), "live", "--openocd", f"127.0.0.1:{srv.getsockname()[1]}", "--elf", str(ELF),
                            "--duration", "1", "--no-viewer"], capture_output=True, text=True, timeout=60)
    finally:
        srv.close()
    assert r.returncode == 1, r.stderr
    assert "live read failed: cannot read" in r.stderr and "OpenOCD: invalid command name" in r.stderr
    assert "arenascope live: no refresh succeeded (the messages above say why): exit status 1" in r.stderr
