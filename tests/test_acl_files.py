"""The ACL file (aclfile, ACL LOAD, ACL SAVE) and `user` lines of the config file, against real
server processes (and Redis's own reading of a file Rivulet saved, when redis-server is here)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from tests.helpers import call_raw
from tests.serverproc import (
    ROOT,
    RawConnection,
    RedisProcess,
    ServerProcess,
    free_port,
    wait_for_port,
)

REDIS74 = os.environ.get("RIVULET_REDIS74", "/tmp/redis74/src/redis-server")


def _need_redis74(what: str) -> None:
    if not os.access(REDIS74, os.X_OK):
        pytest.skip(f"no Redis 7.4 at {REDIS74}: {what} is not compared with Redis")


class ConfiguredServer(ServerProcess):
    """A server started with a config file (the file comes first, as for redis-server)."""

    def __init__(self, config: Path, *args: str) -> None:
        super().__init__(*args)
        self.args = [str(config), *self.args]


def start_fails(tmp_path: Path, *args: str) -> str:
    """Run a server that must refuse to start; what it logged."""
    port = free_port()
    proc = subprocess.run([sys.executable, "-m", "server", *args, "--port", str(port),
                           "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", ""],
                          cwd=ROOT, capture_output=True, timeout=30)
    assert proc.returncode != 0
    return (proc.stdout + proc.stderr).decode()


def test_config_file_user_lines(tmp_path: Path) -> None:
    conf = tmp_path / "rivulet.conf"
    conf.write_text("user alice on >pw ~orders:* +xadd\n"
                    "user default on nopass ~* &* +@all -flushall\n"
                    "user bob off (+get ~x*)\n")
    proc = ConfiguredServer(conf).start()
    try:
        admin = redis.Redis(port=proc.port, decode_responses=True)
        digest = hashlib.sha256(b"pw").hexdigest()
        assert admin.acl_list() == [
            f"user alice on sanitize-payload #{digest} ~orders:* resetchannels -@all +xadd",
            "user bob off sanitize-payload resetchannels -@all (~x* resetchannels -@all +get)",
            "user default on nopass sanitize-payload ~* &* +@all -flushall"]
        with pytest.raises(redis.exceptions.NoPermissionError):
            admin.flushall()
        conn = RawConnection(proc.port)
        assert call_raw(conn, "AUTH", "alice", "pw") == b"+OK\r\n"
        assert call_raw(conn, "AUTH", "bob", "") == (
            b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
        conn.close()
        with pytest.raises(redis.ResponseError, match="not configured to use an ACL file"):
            admin.acl_save()
        admin.close()
    finally:
        proc.cleanup()


def test_user_lines_and_aclfile_together_refused(tmp_path: Path) -> None:
    acl = tmp_path / "users.acl"
    acl.write_text("user alice on nopass +@all ~*\n")
    conf = tmp_path / "both.conf"
    conf.write_text(f"aclfile {acl}\nuser bob on nopass\n")
    log = start_fails(tmp_path, str(conf))
    assert "please define either an ACL file or declare users directly in your redis.conf, " \
           "but not both" in log


def test_bad_user_line_refused(tmp_path: Path) -> None:
    conf = tmp_path / "bad.conf"
    conf.write_text("user alice on +nosuchcommand\n")
    log = start_fails(tmp_path, str(conf))
    assert "Unknown command or category name in ACL" in log


# Config files whose users Redis refuses: while reading the file (the line and Redis's text on
# stderr) or when the users load (its log), and an ACL file with errors at start-up.
BAD_STARTUPS = [
    "user alice on badrule\n",
    "user alice on >p (+get ~x) %Q~x\n",
    "user alice on allkeys ~x\n",
    "user alice on <nosuchpw\n",
    "user alice on +get|x|y\n",
    "port 0\nuser alice on\nuser alice off\n",
    "user alice on (+get ~x\n",
    "user\n",
    "user alice on +nosuchcmd\n",
    "user default on nopass ~* +@all -nosuch\n",
    "user alice on (+nosuch)\n",
    'user "a b" on\n',
    "aclfile {acl}\nuser bob on\n",
    "aclfile {acl}\n",
]


def _startup_messages(output: str) -> list[str]:
    """What a refused start said, without the parts that name the server or the time: the
    configuration line and the error text after it, and the log's warnings."""
    out = []
    lines = output.splitlines()
    for i, line in enumerate(lines):
        logged = re.match(r"\d+:\w \d+ \w+ \d+ [\d:.]+ # (.*)", line)
        if logged:
            if not logged.group(1).startswith("WARNING Memory overcommit"):  # the machine's
                out.append(logged.group(1))
        elif ">>> " in line:
            out += [line[line.index(">>> "):], lines[i + 1]]
    return out


@pytest.mark.parametrize("text", BAD_STARTUPS)
def test_bad_users_at_startup_as_redis(tmp_path: Path, text: str) -> None:
    """Rivulet refuses each of these configurations with Redis 7.4's words, at the same step:
    a rule that cannot apply, a duplicate user or an unmatched parenthesis while the file is
    read (a FATAL CONFIG error quoting the line), an unknown command or a name with spaces when
    the users load ("Critical error while loading ACLs. Exiting."), an ACL file's errors
    ("Aborting Redis startup because of ACL errors: ..."); and exits with status 1."""
    _need_redis74("start-up refusals of users")
    acl = tmp_path / "users.acl"
    acl.write_text("user carol on +nosuch\nuser dave foo\n")
    conf = tmp_path / "bad.conf"
    conf.write_text(text.format(acl=acl))
    ours = start_fails(tmp_path, str(conf))
    real = subprocess.run([REDIS74, str(conf), "--port", str(free_port()), "--bind", "127.0.0.1",
                           "--dir", str(tmp_path), "--save", ""], capture_output=True, timeout=30)
    assert real.returncode == 1
    theirs = (real.stdout + real.stderr).decode()
    assert _startup_messages(theirs)
    assert _startup_messages(ours) == _startup_messages(theirs)


# ACL files ACL LOAD refuses (or reads), compared with Redis 7.4: the error text and the users
# after it. (Redis 7.4 crashes on an unmatched parenthesis after other rules, "user a on (+get":
# Rivulet answers "<file>:<line>: Unmatched parenthesis in selector definition." and keeps the
# users it had.)
ACL_FILES = [
    b"user alice on >pw ~* +@all\nuser  bob on\n",
    b"USER alice on\n",
    b"user\n",
    b"user alice on foo bar\n",
    b"user alice on +nosuch -nosuch2 foo\n",
    b"user alice on\nuser alice off\n",
    b'user alice on "quoted\n',
    b"user alice on\t+get\n",
    b"   \n\nuser default on nopass ~* &* +@all\nuser bob on allkeys ~x\n",
    b"user bob on \xff\xfe\n",
    b"user b\xffb on nopass\n",
    b"user alice on >pw  ~a*   +get\n",
]


def test_acl_load_errors_as_redis(tmp_path: Path) -> None:
    _need_redis74("ACL LOAD's errors")
    ours_file, theirs_file = tmp_path / "ours.acl", tmp_path / "theirs.acl"
    ours_file.write_text("")
    theirs_file.write_text("")
    ours = ServerProcess("--aclfile", str(ours_file)).start()
    theirs = RedisProcess("--aclfile", str(theirs_file), binary=REDIS74).start()
    try:
        with redis.Redis(port=ours.port) as a, redis.Redis(port=theirs.port) as b:
            for content in ACL_FILES:
                results = []
                for client, path in ((a, ours_file), (b, theirs_file)):
                    path.write_bytes(content)
                    try:
                        reply = client.execute_command("ACL", "LOAD")
                    except redis.ResponseError as exc:
                        reply = str(exc).replace(str(path), "<file>")
                    results.append((reply, client.execute_command("ACL", "LIST")))
                assert results[0] == results[1], content
    finally:
        ours.cleanup()
        theirs.cleanup()


def test_aclfile_load_save_round_trip(tmp_path: Path) -> None:
    acl = tmp_path / "users.acl"
    acl.write_text("user default on nopass ~* &* +@all\n"
                   "user reader on >pw %R~* resetchannels -@all +@read\n")
    proc = ServerProcess("--aclfile", str(acl)).start()
    try:
        admin = redis.Redis(port=proc.port, decode_responses=True)
        assert admin.acl_users() == ["default", "reader"]
        admin.acl_setuser("writer", enabled=True, passwords=["+w"], keys=["%W~out:*"],
                          commands=["+set"], selectors=[("+get", "~x")])
        assert admin.acl_save()
        saved = acl.read_text()
        assert saved.splitlines() == [
            "user " + line for line in
            (e.removeprefix("user ") for e in admin.acl_list())]
        # A change, then LOAD: back to what the file says.
        admin.acl_deluser("reader")
        admin.acl_setuser("writer", commands=["+del"])
        assert admin.acl_load()
        assert "\n".join(admin.acl_list()) + "\n" == saved
        # A broken file changes nothing and says why, line by line.
        acl.write_text("user default on nopass ~* &* +@all\nuser x on +nosuch\nnot a user line\n")
        with pytest.raises(redis.ResponseError) as info:
            admin.acl_load()
        assert str(info.value) == (
            f"{acl}:2: Error in applying operation '+nosuch': Unknown command or category name "
            f"in ACL. {acl}:3 should start with user keyword followed by the username. WARNING: "
            "ACL errors detected, no change to the previously active ACL rules was performed")
        assert "\n".join(admin.acl_list()) + "\n" == saved
        admin.close()
    finally:
        proc.cleanup()


def test_acl_load_closes_connections_of_removed_users(tmp_path: Path) -> None:
    acl = tmp_path / "users.acl"
    acl.write_text("user default on nopass ~* &* +@all\nuser temp on >pw ~* +@all\n")
    proc = ServerProcess("--aclfile", str(acl)).start()
    try:
        conn = RawConnection(proc.port)
        assert call_raw(conn, "AUTH", "temp", "pw") == b"+OK\r\n"
        acl.write_text("user default on nopass ~* &* +@all\n")
        with redis.Redis(port=proc.port) as admin:
            assert admin.acl_load()
        assert conn.is_closed()
    finally:
        proc.cleanup()


def test_saved_file_is_read_by_redis(tmp_path: Path) -> None:
    if not RedisProcess.available():
        pytest.skip("redis-server is not installed: Redis's reading of a file Rivulet saved "
                    "is not tested")
    acl = tmp_path / "users.acl"
    acl.write_text("")
    proc = ServerProcess("--aclfile", str(acl)).start()
    try:
        with redis.Redis(port=proc.port, decode_responses=True) as admin:
            admin.execute_command("ACL", "SETUSER", "app", "on", ">pw", "~app:*", "&events",
                                  "-@all", "+@read", "+xadd", "(+get %R~shared:*)")
            assert admin.acl_save()
            ours = admin.acl_list()
    finally:
        proc.cleanup()
    real = RedisProcess("--aclfile", str(acl)).start()
    try:
        with redis.Redis(port=real.port, decode_responses=True) as theirs:
            listed = theirs.acl_list()
        # Redis 7.0 leaves out sanitize-payload for users that never set it (7.2 shows it).
        assert [line.replace(" sanitize-payload", "") for line in listed] == [
            line.replace(" sanitize-payload", "") for line in ours]
    finally:
        real.cleanup()


def test_config_rewrite_writes_users(tmp_path: Path) -> None:
    conf = tmp_path / "rivulet.conf"
    conf.write_text("# users\nuser old on nopass +@all ~*\nmaxclients 100\nuser gone on nopass\n")
    proc = ConfiguredServer(conf).start()
    try:
        with redis.Redis(port=proc.port, decode_responses=True) as admin:
            admin.acl_deluser("gone")
            admin.execute_command("ACL", "SETUSER", "new", "on", ">pw", "%R~*", "+@read")
            listed = admin.acl_list()
            assert admin.config_rewrite()
        lines = conf.read_text().splitlines()
        # Every user, in the place of the first `user` line, as Redis's CONFIG REWRITE.
        assert lines[:4] == ["# users", *listed]
        assert "maxclients 100" in lines
    finally:
        proc.cleanup()
    again = ConfiguredServer(conf).start()
    try:
        with redis.Redis(port=again.port, decode_responses=True) as admin:
            assert admin.acl_list() == listed
    finally:
        again.cleanup()


class _ConfiguredRedis(RedisProcess):
    """Redis 7.4 started with a config file (first, as redis-server wants it)."""

    def __init__(self, config: Path) -> None:
        super().__init__(binary=REDIS74)
        self.config = config

    def start(self, timeout: float = 15.0) -> RedisProcess:
        self.proc = subprocess.Popen(
            [self.binary, str(self.config), "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--dir", self.dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc, timeout)
        return self


_BYTES_USER = [b"ACL", b"SETUSER", b"\xffu\xc3(", b"on", b">p\xe9", b"~k\xfe*", b"&c\xff",
               b"+get", b"(+set %R~\xf0x)"]


def test_user_names_not_utf8_in_files_as_redis(tmp_path: Path) -> None:
    """A user whose name, password, key and channel patterns are not UTF-8 is written by ACL
    SAVE and CONFIG REWRITE as the same bytes Redis 7.4 writes, and read back by ACL LOAD and
    at start-up to the same user."""
    _need_redis74("the files written for users whose names are not UTF-8")
    written = {}
    listed = {}
    for name, make in (("ours", ConfiguredServer), ("theirs", _ConfiguredRedis)):
        conf = tmp_path / f"{name}.conf"
        conf.write_bytes(b"user default on nopass ~* &* +@all\n")
        acl = tmp_path / f"{name}.acl"
        acl.write_bytes(b"")
        proc = make(conf).start()
        try:
            with redis.Redis(port=proc.port) as r:
                assert r.execute_command(*_BYTES_USER)
                listed[name] = r.execute_command("ACL", "LIST")
                assert r.config_rewrite()
        finally:
            proc.cleanup()
        # The user lines (the rest of the file holds each server's own settings: its port...).
        written[name] = b"".join(line for line in conf.read_bytes().splitlines(keepends=True)
                                 if line.startswith(b"user "))
        # Started again from them: the same users.
        conf.write_bytes(written[name])
        proc = make(conf).start()
        try:
            with redis.Redis(port=proc.port) as r:
                assert r.execute_command("ACL", "LIST") == listed[name]
        finally:
            proc.cleanup()
        # The same user through an ACL file: ACL SAVE, then ACL LOAD.
        proc = (ServerProcess("--aclfile", str(acl)) if name == "ours"
                else RedisProcess("--aclfile", str(acl), binary=REDIS74)).start()
        try:
            with redis.Redis(port=proc.port) as r:
                r.execute_command(*_BYTES_USER)
                assert r.execute_command("ACL", "SAVE")
                r.execute_command("ACL", "DELUSER", _BYTES_USER[2])
                assert r.execute_command("ACL", "LOAD")
                assert r.execute_command("ACL", "LIST") == listed[name]
        finally:
            proc.cleanup()
        written[name + " acl"] = acl.read_bytes()
    assert b"user \xffu\xc3( on" in written["theirs"]
    assert listed["ours"] == listed["theirs"]
    assert written["ours"] == written["theirs"]
    assert written["ours acl"] == written["theirs acl"]
