"""Differential tests: the same ACL command sequences sent to a real Redis and to Rivulet, replies
compared byte for byte.

Redis 7.4 (RIVULET_REDIS74, default /tmp/redis74/src/redis-server) is the specification and is
compared exactly. Debian's redis-server 7.0 is compared too, with its known differences from 7.4
rewritten into 7.4's form before comparing (and nothing else):
  - NOPERM texts: 7.0 "this user has no permissions to run the 'x' command" / "... to access one
    of the keys used as arguments" / "... channels used as arguments"; 7.4 "User <name> has no
    permissions to run the 'x' command" / "No permissions to access a key" / "... a channel";
  - ACL DRYRUN: 7.0 says "This user has ...", 7.4 "User <name> has ...";
  - ACL LIST / GETUSER: 7.0 does not show sanitize-payload for users created without it and
    rebuilds the command rules from the resulting command set (7.2+ keeps them as given): those
    replies are compared with 7.4 only;
  - ACL LOG: 7.0 has no entry-id, timestamp-created, timestamp-last-updated, and INFO no
    acl_access_denied_* counters (both compared with 7.4 only);
  - WAIT is in @blocking since 7.2.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import hiredis
import pytest
import redis

from tests.helpers import as_map, encode_command, plain, read_reply
from tests.serverproc import RawConnection, RedisProcess, ServerProcess, free_port, wait_for_port

REDIS74 = os.environ.get("RIVULET_REDIS74", "/tmp/redis74/src/redis-server")


class _Real:
    def __init__(self, binary: str) -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="redis-acl-")
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc)

    def cleanup(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def rivulet() -> Iterator[ServerProcess]:
    proc = ServerProcess().start()
    yield proc
    proc.cleanup()


@pytest.fixture(scope="module", params=["7.4", "7.0"])
def reference(request) -> Iterator[tuple[str, int]]:
    if request.param == "7.4":
        if not os.access(REDIS74, os.X_OK):
            pytest.skip(f"no Redis 7.4 at {REDIS74}: the exact comparison with Redis 7.4 "
                        "(ACL LIST, GETUSER, LOG fields, NOPERM texts) is not tested")
        real = _Real(REDIS74)
    else:
        if not RedisProcess.available():
            pytest.skip("redis-server (Debian's 7.0) is not installed: the comparison with it "
                        "is not tested")
        real = _Real(shutil.which("redis-server") or "redis-server")
    yield request.param, real.port
    real.cleanup()


def _reset(*ports: int) -> None:
    for port in ports:
        with redis.Redis(port=port) as r:
            for name in r.execute_command("ACL", "USERS"):
                if name != b"default":
                    r.execute_command("ACL", "DELUSER", name)
            r.execute_command("ACL", "SETUSER", "default", "reset", "on", "nopass", "~*", "&*",
                              "+@all")
            r.execute_command("ACL", "LOG", "RESET")
            r.flushall()


def _to_74(reply: bytes) -> bytes:
    """A Redis 7.0 reply in Redis 7.4's words (see the module docstring)."""
    reply = re.sub(rb"This user has no permissions", rb"User {user} has no permissions", reply)
    reply = re.sub(rb"NOPERM this user has no permissions to run",
                   rb"NOPERM User {user} has no permissions to run", reply)
    reply = reply.replace(b"NOPERM this user has no permissions to access one of the keys used "
                          b"as arguments", b"NOPERM No permissions to access a key")
    reply = reply.replace(b"NOPERM this user has no permissions to access one of the channels "
                          b"used as arguments", b"NOPERM No permissions to access a channel")
    return reply


def _fix_length(reply: bytes) -> bytes:
    # A bulk string rewritten by _to_74 gets its new length back.
    if reply.startswith(b"$") and b"\r\n" in reply:
        body = reply.split(b"\r\n", 1)[1][:-2]
        return b"$%d\r\n%s\r\n" % (len(body), body)
    return reply


# (command, user the texts name, compared with 7.0 too)
SETUP = [
    "ACL SETUSER alice on >pw ~orders:* %R~dash:* &ch* +xadd +@read -keys +publish",
    "ACL SETUSER alice (+get ~x*) (+set %W~y*)",
    "ACL SETUSER bob +config|get +select|0 +select|1 -config +client|list +acl|whoami",
    "ACL SETUSER reader on %R~* +@all",
    "ACL SETUSER writer on %W~* +@all",
]
# Read or write access per key, as each command's key specs say (a sample of every family).
_ACCESS = ["xreadgroup group g c streams s >", "xread streams s 0", "xadd s * a 1",
           "xack s g 0-1", "xrange s - +", "xlen s", "xinfo stream s", "xgroup create s g $",
           "xtrim s maxlen 1", "xdel s 0-1", "xclaim s g c 0 0-1", "xautoclaim s g c 0 0",
           "xpending s g", "xsetid s 0-1", "set k v", "set k v get", "get k", "getdel k",
           "getex k", "incr k", "append k v", "strlen k", "exists k", "type k", "del k",
           "unlink k", "rename a b", "renamenx a b", "copy a b", "expire k 1", "ttl k",
           "persist k", "mget a b", "mset a 1 b 2", "lpush l a", "lpop l", "lrange l 0 -1",
           "lmove a b left right", "blpop l 0", "hset h f v", "hget h f", "hgetall h",
           "hincrby h f 1", "sadd s m", "smembers s", "sinterstore d a b", "sunion a b",
           "zadd z 1 m", "zrange z 0 -1", "zunionstore d 2 a b", "zpopmin z", "setbit b 1 1",
           "getbit b 1", "bitcount b", "bitop and d a b", "bitfield b get u8 0",
           "bitfield b set u8 0 1", "bitfield_ro b get u8 0", "touch k", "dump k",
           "object encoding k", "memory usage k", "lcs a b", "watch k"]
SCRIPT_ACCESS = [(f"ACL DRYRUN {user} {command}", True) for command in _ACCESS
                 for user in ("reader", "writer")]
SCRIPT: list[tuple[str, bool]] = [
    ("ACL LIST", False),
    ("ACL GETUSER alice", False),
    ("ACL GETUSER bob", False),
    ("ACL GETUSER nobody", True),
    ("ACL SETUSER bob allcommands -get +@hash -@write nocommands +get", True),
    ("ACL SETUSER bob ~x allkeys ~y", True),
    ("ACL SETUSER bob &x allchannels &y", True),
    ("ACL SETUSER bob %Q~x", True),
    ("ACL SETUSER bob %~x", True),
    ("ACL SETUSER bob %RW", True),
    ("ACL SETUSER bob %RRW~x", True),
    ("ACL SETUSER bob +nosuch", True),
    ("ACL SETUSER bob +@nosuch", True),
    ("ACL SETUSER bob +config|get|x", True),
    ("ACL SETUSER bob +config|", True),
    ("ACL SETUSER bob +get|", True),
    ("ACL SETUSER bob +config|nosuch", True),
    ("ACL SETUSER bob -select|0", True),
    ("ACL SETUSER bob #abc", True),
    ("ACL SETUSER bob !abc", True),
    ("ACL SETUSER bob <nopw", True),
    ("ACL SETUSER bob foo", True),
    ("ACL SETUSER bob (+get", True),
    ("ACL SETUSER bob (+get ~x) (foo)", True),
    ("ACL SETUSER bob ( +get ~x )", True),
    ("ACL SETUSER bob on nopass resetpass >a >b <a skip-sanitize-payload", True),
    ("ACL LIST", False),
    ("ACL SETUSER bob reset", True),
    ("ACL LIST", False),
    ("ACL SETUSER bob +@all -@dangerous %RW~a* %R~a* %W~b* clearselectors (~z)", True),
    ("ACL GETUSER bob", False),
    ("ACL SETUSER carol %r~x %w~x %Rw~y ~z %R~z resetchannels &a &a &b", True),
    ("ACL SETUSER dave -@all +@all +client|kill -client +client|list", True),
    ("ACL LIST", False),
    ("ACL DRYRUN alice xadd orders:1 * a 1", True),
    ("ACL DRYRUN alice xadd other * a 1", True),
    ("ACL DRYRUN alice get dash:1", True),
    ("ACL DRYRUN alice set dash:1 x", True),
    ("ACL DRYRUN alice set y1 x", True),
    ("ACL DRYRUN alice set y1 x get", True),
    ("ACL DRYRUN alice keys *", True),
    ("ACL DRYRUN alice publish ch1 x", True),
    ("ACL DRYRUN alice publish other x", True),
    ("ACL DRYRUN alice config get x", True),
    ("ACL DRYRUN alice exists zzz", True),
    ("ACL DRYRUN alice xread streams dash:1 0", True),
    ("ACL DRYRUN alice xreadgroup group g c streams dash:1 >", True),
    ("ACL DRYRUN alice rename orders:1 dash:2", True),
    ("ACL DRYRUN alice get", True),
    ("ACL DRYRUN nosuch get x", True),
    ("ACL DRYRUN alice nosuch x", True),
    ("ACL USERS", True),
    ("ACL DELUSER default", True),
    ("ACL DELUSER carol nosuch", True),
    ("ACL CAT nosuch", True),
    ("ACL CAT", True),
    ("ACL GENPASS 0", True),
    ("ACL GENPASS 5000", True),
    ("ACL GENPASS x", True),
    ("ACL LOG x", True),
    ("ACL LOG 1 2", True),
    ("ACL LOAD", True),
    ("ACL SAVE", True),
    ("ACL FOO", True),
    ("ACL GETUSER", True),
    ("ACL SETUSER", True),
    ("ACL DRYRUN a b", True),
    ("ACL WHOAMI", True),
    ("AUTH nosuch pw", True),
    ("AUTH x", True),
    *SCRIPT_ACCESS,
]


def _run(port: int, commands: list[str]) -> list[bytes]:
    conn = RawConnection(port)
    out = []
    for line in commands:
        conn.send(encode_command(*line.split()))
        out.append(read_reply(conn))
    conn.close()
    return out


def test_acl_commands_as_redis(rivulet: ServerProcess, reference: tuple[str, int]) -> None:
    version, port = reference
    _reset(rivulet.port, port)
    _run(rivulet.port, SETUP)
    _run(port, SETUP)
    wanted = [line for line, with_70 in SCRIPT if with_70 or version == "7.4"]
    ours = _run(rivulet.port, wanted)
    theirs = _run(port, wanted)
    if version == "7.0":
        theirs = [_fix_length(_to_74(r).replace(b"{user}", line.split()[2].encode()))
                  if line.startswith("ACL DRYRUN") and len(line.split()) > 2 else r
                  for line, r in zip(wanted, theirs, strict=True)]
    diffs = [(line, a, b) for line, a, b in zip(wanted, ours, theirs, strict=True) if a != b]
    assert diffs == []


def test_acl_cat_per_category_as_redis(rivulet: ServerProcess,
                                       reference: tuple[str, int]) -> None:
    """Each category lists the same commands, among the commands both servers have. Named
    differences: Redis 7.4 has commands 7.0 lacks (compared by name presence), and Rivulet has
    Redis 8's stream commands (XACKDEL, XDELEX, XCFGSET, XIDMPRECORD, XNACK) Redis 7 lacks."""
    version, port = reference
    with redis.Redis(port=rivulet.port) as ours, redis.Redis(port=port) as theirs:
        ours_all = {c for cat in ours.execute_command("ACL", "CAT")
                    for c in ours.execute_command("ACL", "CAT", cat)}
        theirs_all = {c for cat in theirs.execute_command("ACL", "CAT")
                      for c in theirs.execute_command("ACL", "CAT", cat)}
        both = ours_all & theirs_all
        assert len(both) > 200
        mismatches = set()
        for category in theirs.execute_command("ACL", "CAT"):
            a = set(ours.execute_command("ACL", "CAT", category)) & both
            b = set(theirs.execute_command("ACL", "CAT", category)) & both
            mismatches |= {(category, c, "rivulet only") for c in a - b}
            mismatches |= {(category, c, "redis only") for c in b - a}
    # WAIT became @blocking in Redis 7.2 (7.0 has no BLOCKING flag on it).
    known = {(b"blocking", b"wait", "rivulet only")} if version == "7.0" else set()
    assert mismatches == known


# --- enforcement: several connections, replies compared in order -----------------------------

ENFORCEMENT = [
    ("admin", "ACL SETUSER prod on >pw ~orders:* +xadd +ping"),
    ("admin", "ACL SETUSER dash on >pw %R~* +@read -keys &news +subscribe +publish +multi +exec"),
    ("admin", "ACL SETUSER w on >pw %W~* +@all"),
    ("p", "AUTH prod wrong"),
    ("p", "AUTH prod pw"),
    ("p", "XADD other * a 1"),
    ("p", "GET orders:1"),
    ("p", "CONFIG GET maxmemory"),
    ("d", "AUTH dash pw"),
    ("d", "GET x"),
    ("d", "SET x 1"),
    ("d", "KEYS *"),
    ("d", "PUBLISH news hi"),
    ("d", "PUBLISH other hi"),
    ("d", "SUBSCRIBE news other"),
    ("w", "AUTH w pw"),
    ("w", "SET a 1"),
    ("w", "GET a"),
    ("w", "EXISTS a"),
    ("w", "SET a 1 GET"),
    ("w", "BITFIELD a GET u8 0"),
    ("w", "BITFIELD a SET u8 0 1"),
    ("w", "MULTI"),
    ("w", "SET b 2"),
    ("w", "GET b"),
    ("w", "EXEC"),
    ("w", "MULTI"),
    ("w", "SET b 2"),
    ("admin", "ACL SETUSER w -set"),
    ("w", "EXEC"),
    ("admin", "CLIENT KILL USER nosuch"),
    ("admin", "CLIENT KILL USER prod"),
    ("admin", "ACL DELUSER w"),
    ("x", "AUTH nosuch x"),
]
_LOG_FIELDS = [b"count", b"reason", b"context", b"object", b"username"]


def _read_all(sock: socket.socket) -> bytes:
    """The bytes of the next complete reply: b"" if the connection is closed, what came if
    nothing completes it within 2 s. A second reply to one command (none of the scripts' commands
    has one where it is refused) would land in the next command's bytes, where the comparison
    sees it."""
    reader = hiredis.Reader()
    sock.settimeout(2)
    data = b""
    try:
        while reader.gets() is False:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            reader.feed(chunk)
    except TimeoutError:
        pass
    return data


def _field(entry, name: bytes):
    # redis-py may have parsed the entry (str keys) or not (bytes keys, flat or as a map).
    fields = as_map(entry)
    value = fields.get(name, fields.get(name.decode()))
    return value.encode() if isinstance(value, str) else value


def _enforce(port: int) -> tuple[list[bytes], list, dict]:
    conns: dict[str, socket.socket] = {}
    out = []
    for who, line in ENFORCEMENT:
        if who not in conns:
            conns[who] = socket.create_connection(("127.0.0.1", port))
        conns[who].sendall(encode_command(*line.split()))
        out.append(_read_all(conns[who]))
    for sock in conns.values():
        sock.close()
    time.sleep(0.1)
    with redis.Redis(port=port) as r:
        stats = r.info("stats")
    with redis.Redis(port=port) as r:
        log = plain(r).execute_command("ACL", "LOG")
    entries = [[_field(e, f) for f in _LOG_FIELDS] for e in log]
    denied = {k: v for k, v in stats.items() if k.startswith("acl_access_denied")}
    return out, entries, denied


def test_enforcement_as_redis(rivulet: ServerProcess, reference: tuple[str, int]) -> None:
    version, port = reference
    _reset(rivulet.port, port)
    with redis.Redis(port=rivulet.port) as r:
        before_ours = {k: v for k, v in r.info("stats").items() if k.startswith("acl_access")}
    with redis.Redis(port=port) as r:
        before_theirs = {k: v for k, v in r.info("stats").items() if k.startswith("acl_access")}
    ours, ours_log, ours_denied = _enforce(rivulet.port)
    theirs, theirs_log, theirs_denied = _enforce(port)
    if version == "7.0":
        users = {who: line.split()[1] for who, line in ENFORCEMENT if line.startswith("AUTH ")}
        theirs = [_to_74(r).replace(b"{user}", users.get(who, "default").encode())
                  for (who, _line), r in zip(ENFORCEMENT, theirs, strict=True)]
    diffs = [(who, line, a, b) for (who, line), a, b in zip(ENFORCEMENT, ours, theirs,
                                                            strict=True) if a != b]
    assert diffs == []
    assert ours_log == theirs_log
    if version == "7.4":  # INFO's acl_access_denied_* came with Redis 7.2
        assert {k: v - before_ours[k] for k, v in ours_denied.items()} == {
            k: v - before_theirs[k] for k, v in theirs_denied.items()}


# --- ACL LOG's client-info: what the refused client was doing -------------------------------

# Fields of client-info that say what the client was doing; the others are addresses, times
# and sizes of Redis's own buffers.
_INFO_FIELDS = ("name", "flags", "db", "sub", "psub", "ssub", "multi", "watch", "argv-mem",
                "multi-mem", "cmd", "user", "redir", "resp", "lib-name", "lib-ver")
CLIENT_INFO_SCRIPT = [
    ("admin", "ACL SETUSER w on >pw ~a* +@all -del"),
    ("w", "AUTH w pw"),
    ("w", "AUTH w wrong"),
    ("w", "GET zzzz"),
    ("w", "DEL azzz"),
    ("w", "MULTI"),
    ("w", "SET b 2"),
    ("w", "DISCARD"),
    ("w", "WATCH a1"),
    ("w", "MULTI"),
    ("w", "SET a1 2"),
    ("w", "GET a2"),
    ("w", "CLIENT INFO"),
    ("w", "SET a3 2"),
    ("admin", "ACL SETUSER w -set"),
    ("w", "EXEC"),
    ("w", "MULTI"),
    ("w", "GET a1"),
    ("w", "PING"),
    ("admin", "ACL SETUSER w resetkeys ~b*"),
    ("w", "EXEC"),
]


def _info_fields(line: bytes) -> dict[str, bytes]:
    pairs = dict(p.split(b"=", 1) for p in line.strip().split(b" "))
    return {name: pairs[name.encode()] for name in _INFO_FIELDS}


def _client_info_log(port: int) -> tuple[list[bytes], list]:
    conns: dict[str, socket.socket] = {}
    out = []
    for who, line in CLIENT_INFO_SCRIPT:
        if who not in conns:
            conns[who] = socket.create_connection(("127.0.0.1", port))
        conns[who].sendall(encode_command(*line.split()))
        reply = _read_all(conns[who])
        # CLIENT INFO inside EXEC: the fields that say what the client is doing.
        out.append(re.sub(rb"\$\d+\r\nid=[^\n]*",
                          lambda m: repr(_info_fields(m.group(0).split(b"\n", 1)[1])).encode(),
                          reply))
    for sock in conns.values():
        sock.close()
    with redis.Redis(port=port) as r:
        log = plain(r).execute_command("ACL", "LOG")
    entries = [[_field(e, f) for f in _LOG_FIELDS + [b"context"]]
               + [_info_fields(_field(e, b"client-info"))] for e in log]
    return out, entries


def test_acl_log_client_info_as_redis(rivulet: ServerProcess,
                                      reference: tuple[str, int]) -> None:
    """The log's client-info of a refusal at top level (the refused command current, its
    argv-mem), at queue time (in MULTI), at EXEC (still in MULTI with its queue, EXEC current)
    and of a failed AUTH; and CLIENT INFO inside EXEC, as Redis 7.4 shows them."""
    version, port = reference
    if version != "7.4":
        pytest.skip("client-info fields are compared with Redis 7.4 only")
    _reset(rivulet.port, port)
    ours, ours_log = _client_info_log(rivulet.port)
    theirs, theirs_log = _client_info_log(port)
    diffs = [(line, a, b) for (_who, line), a, b in zip(CLIENT_INFO_SCRIPT, ours, theirs,
                                                        strict=True) if a != b]
    assert diffs == []
    assert len(theirs_log) >= 5
    assert ours_log == theirs_log


# --- user names that are not UTF-8 ----------------------------------------------------------

_NAME = b"\xffu\xc3("
BYTES_NAME_SCRIPT = [
    ("admin", [b"ACL", b"SETUSER", _NAME, b"on", b">pw", b"+get", b"+set", b"+client|list",
               b"~k*"]),
    ("admin", [b"ACL", b"LIST"]),
    ("admin", [b"ACL", b"USERS"]),
    ("admin", [b"ACL", b"GETUSER", _NAME]),
    ("admin", [b"ACL", b"DRYRUN", _NAME, b"set", b"x", b"1"]),
    ("admin", [b"ACL", b"DRYRUN", _NAME, b"del", b"x"]),
    ("admin", [b"ACL", b"DRYRUN", b"\xfe", b"del", b"x"]),
    ("admin", [b"ACL", b"SETUSER", _NAME, b"bad\xferule"]),
    ("admin", [b"ACL", b"SETUSER", b"a\xff b"]),
    ("u", [b"AUTH", _NAME, b"bad"]),
    ("u", [b"AUTH", _NAME, b"pw"]),
    ("u", [b"SET", b"x", b"1"]),
    ("u", [b"DEL", b"x"]),
    ("u", [b"ACL", b"WHOAMI"]),
    ("admin", [b"CLIENT", b"KILL", b"USER", b"\xfe"]),
]


def _bytes_name_run(port: int) -> tuple[list[bytes], list, list[bytes]]:
    conns: dict[str, socket.socket] = {}
    out = []
    for who, argv in BYTES_NAME_SCRIPT:
        if who not in conns:
            conns[who] = socket.create_connection(("127.0.0.1", port))
        conns[who].sendall(encode_command(*argv))
        out.append(_read_all(conns[who]))
    conns["admin"].sendall(encode_command(b"CLIENT", b"LIST"))
    users = re.findall(rb" user=(\S+)", _read_all(conns["admin"]))
    for sock in conns.values():
        sock.close()
    with redis.Redis(port=port) as r:
        log = plain(r).execute_command("ACL", "LOG")
    entries = [[_field(e, f) for f in _LOG_FIELDS]
               + [_info_fields(_field(e, b"client-info"))["user"]] for e in log]
    return out, entries, sorted(users)


def test_user_names_not_utf8_as_redis(rivulet: ServerProcess,
                                      reference: tuple[str, int]) -> None:
    """A user name of any bytes is kept and shown as its bytes: ACL LIST, USERS, GETUSER, the
    NOPERM and DRYRUN texts, errors that quote it, ACL LOG and CLIENT LIST's user=."""
    version, port = reference
    if version != "7.4":
        pytest.skip("compared with Redis 7.4 only (7.0's NOPERM texts name no user)")
    _reset(rivulet.port, port)
    ours = _bytes_name_run(rivulet.port)
    theirs = _bytes_name_run(port)
    assert any(_NAME in reply for reply in theirs[0])
    assert ours == theirs
