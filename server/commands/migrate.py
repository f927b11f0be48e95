"""MIGRATE: keys moved (or copied) to another server as RESTORE commands carrying DUMP payloads.

As in Redis, the transfer is synchronous: the server waits on the target, within the timeout, as
Redis's blocking connections do. Connections are kept per target for later MIGRATEs (closed when
idle longer than MIGRATE_SOCKET_CACHE_TTL), and remember the database last selected on them.
"""

from __future__ import annotations

import socket
import time
from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int
from protocol.reply import OK, ErrorReply, SimpleString
from server.command_table import command
from server.commands.dump import META, rdb_compression
from server.keyspace import now_ms
from server.rdb.payload import create_payload

if TYPE_CHECKING:
    from server.connection import Client

SYNTAX_ERROR = ErrorReply("ERR syntax error")
NOKEY = SimpleString(b"NOKEY")
MIGRATE_SOCKET_CACHE_ITEMS = 64
MIGRATE_SOCKET_CACHE_TTL = 10.0  # seconds
_CHUNK = 64 * 1024
_LONG_MIN = -(2**63)
_LONG_MAX = 2**63 - 1


class _Cached:
    __slots__ = ("sock", "last_dbid", "last_use", "pending")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.last_dbid = -1
        self.last_use = time.monotonic()
        self.pending = b""  # bytes read past the last reply line


_SOCKETS: dict[str, _Cached] = {}


class _Refused(Exception):
    """The target refused the connection. Redis connects without blocking and waits for the socket
    to be writable, which a refusal also makes it: the failure shows on the first write."""


class _SocketError(Exception):
    def __init__(self, timed_out: bool) -> None:
        super().__init__()
        self.timed_out = timed_out


def _bulk(parts: list[bytes]) -> bytes:
    out = [b"*%d\r\n" % len(parts)]
    for p in parts:
        out.append(b"$%d\r\n" % len(p))
        out.append(p)
        out.append(b"\r\n")
    return b"".join(out)


def _close(name: str) -> None:
    cached = _SOCKETS.pop(name, None)
    if cached is not None:
        try:
            cached.sock.close()
        except OSError:
            pass


def _expire_idle() -> None:
    now = time.monotonic()
    for name in [n for n, c in _SOCKETS.items() if now - c.last_use > MIGRATE_SOCKET_CACHE_TTL]:
        _close(name)


def _get_socket(host: bytes, port: bytes, timeout_ms: int) -> _Cached:
    name = host.decode("latin-1") + ":" + port.decode("latin-1")
    cached = _SOCKETS.get(name)
    if cached is not None:
        cached.last_use = time.monotonic()
        return cached
    if len(_SOCKETS) >= MIGRATE_SOCKET_CACHE_ITEMS:
        _close(next(iter(_SOCKETS)))
    try:
        port_number = int(port)  # atoi: anything else connects nowhere
        sock = socket.create_connection((host.decode("latin-1"), port_number), timeout=timeout_ms / 1000)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (ConnectionRefusedError, ConnectionResetError):
        raise _Refused() from None
    except (OSError, ValueError, OverflowError, UnicodeError):
        raise ErrorReply("IOERR error or timeout connecting to the client") from None
    cached = _Cached(sock)
    _SOCKETS[name] = cached
    return cached


def _read_line(cached: _Cached) -> bytes:
    buf = cached.pending
    while True:
        end = buf.find(b"\r\n")
        if end >= 0:
            cached.pending = buf[end + 2:]
            return buf[:end]
        try:
            chunk = cached.sock.recv(65536)
        except TimeoutError:
            raise _SocketError(True) from None
        except OSError:
            raise _SocketError(False) from None
        if not chunk:
            raise _SocketError(False)
        buf += chunk
        if len(buf) > 1024 * 1024:
            raise _SocketError(False)


def migrate_keys(argv: list[bytes]) -> list[int]:
    """Where MIGRATE's keys are (Redis's migrateGetKeys): the key argument, or what follows KEYS."""
    first, num = 3, 1
    skip = {b"copy": 0, b"replace": 0, b"auth": 1, b"auth2": 2}
    i = 6
    while i < len(argv):
        word = argv[i].lower()
        if word == b"keys":
            if argv[3]:
                num = 0
            else:
                first = i + 1
                num = len(argv) - first
            break
        i += skip.get(word, 0) + 1
    return list(range(first, first + num))


def _long(arg: bytes) -> int:
    value = parse_int(arg)
    if not _LONG_MIN <= value <= _LONG_MAX:
        raise ErrorReply("ERR value is not an integer or out of range")
    return value


meta = META["migrate"]


@command("migrate", meta["arity"], meta["flags"], keys=(3, 3, 1), group=meta["group"], since=meta["since"],
         summary=meta["summary"], complexity=meta["complexity"], arguments=meta["arguments"],
         key_specs=meta["key_specs"], history=meta["history"], tips=meta["tips"], acl=meta["acl"],
         key_finder=migrate_keys)
def migrate(client: Client, argv: list[bytes]) -> Any:
    copy = replace = False
    username: bytes | None = None
    password: bytes | None = None
    first_key, num_keys = 3, 1
    argc = len(argv)
    j = 6
    while j < argc:
        option = argv[j].lower()
        more = argc - 1 - j
        if option == b"copy":
            copy = True
        elif option == b"replace":
            replace = True
        elif option == b"auth":
            if not more:
                raise SYNTAX_ERROR
            j += 1
            password = argv[j]
        elif option == b"auth2":
            if more < 2:
                raise SYNTAX_ERROR
            username = argv[j + 1]
            password = argv[j + 2]
            j += 2
        elif option == b"keys":
            if argv[3]:
                raise ErrorReply("ERR When using MIGRATE KEYS option, the key argument must be set to "
                                 "the empty string")
            first_key = j + 1
            num_keys = argc - j - 1
            break
        else:
            raise SYNTAX_ERROR
        j += 1
    timeout = _long(argv[5])
    dbid = _long(argv[4])
    if timeout <= 0:
        timeout = 1000

    db = client.db
    found: list[tuple[bytes, Any]] = []
    for key in argv[first_key:first_key + num_keys]:
        value = db.read(key)
        if value is not None:
            found.append((key, value))
    if not found:
        return NOKEY

    _expire_idle()
    config = client.server.config
    compression = rdb_compression(client)
    may_retry = True
    while True:
        try:
            cached = _get_socket(argv[1], argv[2], timeout)
        except _Refused:
            if may_retry:
                may_retry = False
                continue
            raise ErrorReply("IOERR error or timeout writing to target instance") from None
        cached.sock.settimeout(timeout / 1000)
        parts: list[bytes] = []
        if password is not None:
            parts.append(_bulk([b"AUTH", username, password] if username is not None else [b"AUTH", password]))
        select = cached.last_dbid != dbid
        if select:
            parts.append(_bulk([b"SELECT", b"%d" % dbid]))
        sent: list[bytes] = []
        now = now_ms()
        for key, value in found:
            ttl = 0
            when = db.expires.get(key)
            if when is not None:
                ttl = when - now
                if ttl < 0:
                    continue
                if ttl < 1:
                    ttl = 1
            sent.append(key)
            restore = [b"RESTORE", key, b"%d" % ttl, create_payload(value, config, compression)]
            if replace:
                restore.append(b"REPLACE")
            parts.append(_bulk(restore))
        buf = b"".join(parts)
        write_error = False
        timed_out = False
        acked: list[bytes] = []
        error_reply: bytes | None = None
        socket_error = False
        replies_read = 0
        try:
            try:
                for pos in range(0, len(buf), _CHUNK):
                    cached.sock.sendall(buf[pos:pos + _CHUNK])
            except TimeoutError:
                write_error = True
                raise _SocketError(True) from None
            except OSError:
                write_error = True
                raise _SocketError(False) from None
            auth_reply = _read_line(cached) if password is not None else b""
            select_reply = _read_line(cached) if select else b""
            for key in sent:
                try:
                    reply = _read_line(cached)
                except _SocketError as exc:
                    socket_error = True
                    timed_out = exc.timed_out
                    break
                replies_read += 1
                failed = (auth_reply[:1] == b"-" and password is not None) or (select and select_reply[:1] == b"-")
                if failed or reply[:1] == b"-":
                    if error_reply is None:
                        cached.last_dbid = -1
                        if password is not None and auth_reply[:1] == b"-":
                            error_reply = auth_reply
                        elif select and select_reply[:1] == b"-":
                            error_reply = select_reply
                        else:
                            error_reply = reply
                elif not copy:
                    db.delete(key)
                    acked.append(key)
        except _SocketError as exc:
            _close(argv[1].decode("latin-1") + ":" + argv[2].decode("latin-1"))
            if may_retry and not exc.timed_out:
                may_retry = False
                continue
            raise ErrorReply("IOERR error or timeout %s to target instance"
                             % ("writing" if write_error else "reading")) from None
        if error_reply is None and socket_error and replies_read == 0 and may_retry and not timed_out:
            _close(argv[1].decode("latin-1") + ":" + argv[2].decode("latin-1"))
            may_retry = False
            continue
        if socket_error:
            _close(argv[1].decode("latin-1") + ":" + argv[2].decode("latin-1"))
        if acked:
            # Logged as the DEL of the keys the target acknowledged.
            client.propagate([b"DEL", *acked])
        if error_reply is not None:
            return ErrorReply("ERR Target instance replied with error: "
                              + error_reply[1:].decode("utf-8", "replace"))
        if socket_error:
            raise ErrorReply("IOERR error or timeout reading to target instance")
        cached.last_dbid = dbid
        return OK
