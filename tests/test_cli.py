"""The command line (rivulet-server / python -m server) and redis-cli talking to the server."""

from __future__ import annotations

import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from tests.serverproc import ROOT, free_port, wait_for_port

VENV_SCRIPT = ROOT / ".venv" / "bin" / "rivulet-server"


class RunningServer:
    """`python -m server <args> --port P` (or another launcher) as a context manager."""

    def __init__(self, *args: str, launcher: list[str] | None = None) -> None:
        self.port = free_port()
        self.cmd = [*(launcher or [sys.executable, "-m", "server"]), *args,
                    "--port", str(self.port), "--bind", "127.0.0.1"]
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> RunningServer:
        self.proc = subprocess.Popen(self.cmd, cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        wait_for_port(self.port, self.proc)
        return self

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)

    def output(self) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        return self.proc.stdout.read().decode(errors="replace")

    def __exit__(self, *exc) -> None:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def run_cli(*args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "server", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_help_lists_options():
    done = run_cli("--help")
    assert done.returncode == 0
    for option in ("--port", "--bind", "--requirepass", "--dir", "--maxclients", "--appendonly"):
        assert option in done.stdout
    assert "Usage: rivulet-server" in done.stdout


def test_help_after_a_config_file_and_version(tmp_path):
    # The Docker image puts its config file first: `docker run image --help` must still help.
    conf = tmp_path / "r.conf"
    conf.write_text("port 7000\n")
    done = run_cli(str(conf), "--help")
    assert done.returncode == 0 and "Usage: rivulet-server" in done.stdout
    done = run_cli("--version")
    assert done.returncode == 0 and "Redis 7.4.0 compatible" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["--nosuchoption", "1"], "Bad directive or wrong number of arguments"),
    (["--port", "notaport"], "argument couldn't be parsed into an integer"),
    (["--port", "99999"], "argument must be between 0 and 65535 inclusive"),
    (["--appendonly", "maybe"], "argument must be 'yes' or 'no'"),
    (["/nonexistent/rivulet.conf"], "can't open config file"),
    (["--maxclients"], "wrong number of arguments"),
])
def test_bad_options_fail_cleanly(args, message):
    done = run_cli(*args)
    assert done.returncode == 1
    assert message in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_config_file_and_flags_flags_win(tmp_path):
    conf = tmp_path / "rivulet.conf"
    conf.write_text("# test\nmaxclients 42\ntimeout 7\nrequirepass \"\"\n")
    with RunningServer(str(conf), "--maxclients", "43", "--dir", str(tmp_path)) as srv:
        c = redis.Redis(port=srv.port)
        assert c.config_get("maxclients") == {"maxclients": "43"}  # the flag
        assert c.config_get("timeout") == {"timeout": "7"}  # the file
        assert c.info("server")["config_file"] == str(conf)
        c.close()
        assert srv.stop() == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signals_exit_zero_promptly(tmp_path, sig):
    with RunningServer("--dir", str(tmp_path)) as srv:
        started = time.monotonic()
        assert srv.stop(sig) == 0
        assert time.monotonic() - started < 5
        assert "Traceback" not in srv.output()


def test_shutdown_command_stops_the_server(tmp_path):
    with RunningServer("--dir", str(tmp_path)) as srv:
        c = redis.Redis(port=srv.port)
        conn = c.connection_pool.get_connection()
        conn.send_command("SHUTDOWN", "NOSAVE")
        with pytest.raises(redis.ConnectionError):  # no reply: the server closes the connection
            conn.read_response()
        assert srv.proc.wait(10) == 0
        c.close()


def test_console_script(tmp_path):
    assert VENV_SCRIPT.exists(), (f"{VENV_SCRIPT} is missing: the package is not installed in .venv "
                                  "(`make test` installs it with pip install -e '.[test]')")
    with RunningServer("--dir", str(tmp_path), launcher=[str(VENV_SCRIPT)]) as srv:
        assert redis.Redis(port=srv.port).ping() is True
        assert srv.stop() == 0


needs_redis_cli = pytest.mark.skipif(shutil.which("redis-cli") is None,
                                     reason="redis-cli is not installed (make tools)")


@needs_redis_cli
def test_redis_cli_non_interactive(server):
    def cli(*args: str) -> str:
        done = subprocess.run(["redis-cli", "-p", str(server.port), *args], capture_output=True,
                              text=True, timeout=20)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert cli("ping") == "PONG\n"
    assert "cmd=client|list" in cli("CLIENT", "LIST")
    out = cli("INFO", "server")
    assert out.startswith("# Server") and "redis_version:7.4.0" in out
    assert cli("CONFIG", "GET", "maxclients") == "maxclients\n10000\n"


class Terminal:
    """The master side of a pty: waits for output, answering linenoise's cursor queries."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""
        self.pos = 0

    def expect(self, marker: bytes, timeout: float = 10) -> bytes:
        deadline = time.monotonic() + timeout
        while (found := self.buf.find(marker, self.pos)) < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"{marker!r} not seen in {self.buf[self.pos:]!r}")
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                chunk = os.read(self.fd, 4096)
                if not chunk:
                    raise AssertionError(f"terminal closed before {marker!r}")
                for _ in range(chunk.count(b"\x1b[6n")):
                    os.write(self.fd, b"\x1b[1;1R")
                self.buf += chunk
        seen = self.buf[self.pos:found + len(marker)]
        self.pos = found + len(marker)
        return seen


@needs_redis_cli
def test_redis_cli_interactive(server, r):
    """An interactive redis-cli on a terminal: it asks COMMAND DOCS for its hints at start."""
    r.config_resetstat()
    pid, fd = pty.fork()
    if pid == 0:  # the child: become redis-cli on the pty
        os.execvp("redis-cli", ["redis-cli", "-p", str(server.port)])
    try:
        prompt = f"127.0.0.1:{server.port}> ".encode()
        term = Terminal(fd)
        term.expect(prompt)

        def run(line: bytes, expected: bytes) -> None:
            # Type only at a prompt: linenoise reads its terminal queries' answers from stdin too.
            os.write(fd, line + b"\r")
            term.expect(b"\n" + expected)
            term.expect(prompt)

        run(b"ping", b"PONG")
        run(b"client setname cli-test", b"OK")
        run(b"client getname", b'"cli-test"')
        stats = r.info("commandstats")
        assert stats["cmdstat_command|docs"]["calls"] >= 1
        assert stats["cmdstat_command|docs"]["failed_calls"] == 0
        os.write(fd, b"quit\r")
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)


def test_python_dash_m_server_is_the_same_cli():
    main = Path(ROOT / "server" / "__main__.py").read_text()
    assert "from server.cli import main" in main
    done = run_cli("--version")
    assert done.returncode == 0 and "7.4.0" in done.stdout


REDIS_SERVER = shutil.which("redis-server")


@pytest.mark.parametrize("text", [
    "port 7000\nfoo bar\n",
    "# a comment\n\nport \"6379\n",
    "port notaport\n",
    "maxclients 10\nappendonly maybe\n",
    "save 900\n",
])
def test_a_bad_config_file_is_reported_as_redis_reports_it(tmp_path, text):
    """The lines after the header name the line and the reason in Redis's words."""
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed: the config-file error texts were NOT compared with Redis")
    conf = tmp_path / "bad.conf"
    conf.write_text(text)
    ours = run_cli(str(conf))
    theirs = subprocess.run([REDIS_SERVER, str(conf)], capture_output=True, text=True, timeout=30)
    assert ours.returncode == theirs.returncode == 1
    assert ours.stderr.startswith("\n*** FATAL CONFIG FILE ERROR (Rivulet ")
    assert theirs.stderr.startswith("\n*** FATAL CONFIG FILE ERROR (Redis ")
    assert ours.stderr.split(" ***\n", 1)[1] == theirs.stderr.split(" ***\n", 1)[1]
