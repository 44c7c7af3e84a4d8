"""The live link to the viewer: a loopback-only TCP server that sends each snapshot as one JSON
line, {"type": "snapshot", "version": 1, "snapshot": {...}}\\n, to every connected viewer.
Pure Python (no gdb): the accept thread only moves bytes; snapshots are built on GDB's thread.
A viewer that connects gets the last snapshot at once; a viewer that stops reading is dropped."""
import json
import socket
import threading

from arenascope_plugin.errors import ArenascopeError

MESSAGE_VERSION = 1
MAX_MESSAGE_BYTES = 16 << 20     # the viewer refuses longer lines (viewer/src/link.h)
SEND_TIMEOUT_S = 1.0


class LiveError(ArenascopeError):
    pass


def message(snapshot):
    line = json.dumps({"type": "snapshot", "version": MESSAGE_VERSION, "snapshot": snapshot},
                      separators=(",", ":")).encode() + b"\n"
    if len(line) > MAX_MESSAGE_BYTES:
        raise LiveError(f"snapshot is {len(line)} bytes, more than the {MAX_MESSAGE_BYTES >> 20} MiB a message may "
                        "have")
    return line


def state_message(running):
    """{"type": "state", "version": 1, "running": bool}: the target runs again (the viewer says
    its snapshot is from the last stop) or stopped (a snapshot follows)."""
    return json.dumps({"type": "state", "version": MESSAGE_VERSION, "running": bool(running)}).encode() + b"\n"


class SnapshotServer:
    def __init__(self, port):
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise LiveError(f"port {port} is not a TCP port: give 1..65535 (0: any free port)")
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind(("127.0.0.1", port))  # loopback only, never another interface
        except OSError as exc:
            self._sock.close()
            raise LiveError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror} (another GDB running `arena view`? "
                            "use `arena view --port N`)") from None
        self._sock.listen(4)
        self.port = self._sock.getsockname()[1]
        self._clients = []
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._last = None
        self.connected = threading.Event()
        self._closed = False
        threading.Thread(target=self._accept, name="arenascope-live", daemon=True).start()

    def _accept(self):
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            if self._closed:
                conn.close()
                return
            conn.settimeout(SEND_TIMEOUT_S)
            with self._lock:
                last = self._last
                self._clients.append(conn)
            if last:
                with self._send_lock:
                    self._send(conn, last)
            self.connected.set()

    def _send(self, conn, line):
        try:
            conn.sendall(line)
            return True
        except OSError:
            with self._lock:
                if conn in self._clients:
                    self._clients.remove(conn)
            conn.close()
            return False

    @property
    def clients(self):
        with self._lock:
            return len(self._clients)

    def broadcast(self, line, keep=True):
        """Sends one message to every viewer; returns how many got it. keep: it is the snapshot a
        viewer that connects later gets first."""
        with self._send_lock:  # the poll thread and GDB's stop hooks both send: whole lines only
            with self._lock:
                if keep:
                    self._last = line
                clients = list(self._clients)
            return sum(self._send(c, line) for c in clients)

    def close(self):
        self._closed = True
        try:
            # Wakes the accept thread: close() alone leaves a blocked accept() listening, and it
            # would take the viewer's reconnection and send it the last snapshot again.
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        with self._lock:
            for c in self._clients:
                c.close()
            self._clients.clear()
