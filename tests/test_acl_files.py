"""The ACL file (aclfile, ACL LOAD, ACL SAVE) and `user` lines of the config file, against real
server processes (and Redis's own reading of a file Rivulet saved, when redis-server is here)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from tests.helpers import call_raw
from tests.serverproc import ROOT, RawConnection, RedisProcess, ServerProcess, free_port


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
