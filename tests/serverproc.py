"""Start and stop real Rivulet server processes for the tests (and real Redis, when installed)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server did not listen on port {port} within {timeout}s")


def wait_for_tls_port(port: int, proc: subprocess.Popen, context: ssl.SSLContext,
                      timeout: float = 15.0) -> None:
    """Like wait_for_port, through a TLS handshake made with `context`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as raw:
                with context.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64):
                        return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server did not listen (TLS) on port {port} within {timeout}s")


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int:
    """Send sig (if it still runs), wait up to timeout, then kill; returns the exit code."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


class ServerProcess:
    """A Rivulet server started with `python -m server` on a free port of 127.0.0.1.

    With `tls_wait` (a client SSLContext) start() waits for the TLS port given by tls_port,
    not for the plain one (a server started with `--port 0` has none)."""

    def __init__(self, *args: str, data_dir: str | None = None, port: int | None = None,
                 tls_port: int | None = None, tls_wait: ssl.SSLContext | None = None) -> None:
        self.port = port or free_port()
        self.tls_port = tls_port
        self.tls_wait = tls_wait
        self.own_dir = data_dir is None
        self.dir = data_dir or tempfile.mkdtemp(prefix="rivulet-test-")
        self.log_path = os.path.join(self.dir, "server.log")
        # No save points unless a test asks (`--save` adds to these): a test server's data is
        # not worth a dump.rdb, and a background save would fork in the middle of measurements.
        # A replica's full sync starts at once (Redis's default waits 5 s for more replicas to
        # share the snapshot): the tests of that delay set it themselves, a later flag wins.
        self.args = ["--bind", "127.0.0.1", "--port", str(self.port), "--dir", self.dir,
                     "--save", "", "--repl-diskless-sync-delay", "0", *args]
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 15.0) -> ServerProcess:
        """Start it and wait up to timeout seconds for it to answer."""
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "server", *self.args],
            cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT,
        )
        try:
            if self.tls_wait is not None and self.tls_port:
                wait_for_tls_port(self.tls_port, self.proc, self.tls_wait, timeout)
            else:
                wait_for_port(self.port, self.proc, timeout)
        except RuntimeError as exc:
            # A server that is merely slow to start must not outlive the failed start.
            stop_process(self.proc, signal.SIGKILL, timeout=5)
            self._log.close()
            raise RuntimeError(f"{exc}\n--- server log ---\n{self.log()}") from None
        return self

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int | None:
        if self.proc is None:
            return None
        code = stop_process(self.proc, sig, timeout)
        self._log.close()
        return code

    def cleanup(self) -> None:
        self.stop()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


class RedisProcess:
    """A real redis-server (Debian's package) on a free port, for differential tests."""

    def __init__(self, *args: str, binary: str = "redis-server") -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="redis-test-")
        self.args = args
        self.binary = binary
        self.proc: subprocess.Popen | None = None

    @staticmethod
    def available(binary: str = "redis-server") -> bool:
        return shutil.which(binary) is not None

    def start(self, timeout: float = 15.0) -> RedisProcess:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir, *self.args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(self.port, self.proc, timeout)
        except RuntimeError:
            stop_process(self.proc, signal.SIGKILL, timeout=5)
            raise
        return self

    def cleanup(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


class RawConnection:
    """A plain socket for protocol-level tests: send bytes, read exact replies."""

    def __init__(self, port: int, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_until_closed(self, reset_ok: bool = False) -> bytes:
        """Everything until the server closes; with reset_ok a reset counts as the close (a
        server closing with our unread bytes in its buffer makes the kernel send RST, not FIN)."""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                break
            except ConnectionResetError:
                if not reset_ok:
                    raise
                break
            if not chunk:
                break
            self.buf += chunk
        out, self.buf = self.buf, b""
        return out

    def request(self, data: bytes, expected_len: int) -> bytes:
        self.send(data)
        return self.read_exactly(expected_len)

    def is_closed(self, timeout: float = 2.0) -> bool:
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except TimeoutError:
            return False
        except OSError:
            return True

    def close(self) -> None:
        self.sock.close()
