"""Per-stream settings of idempotent producers: XCFGSET, and XIDMPRECORD (the internal command
that records a (producer, idempotent ID) pair, as the AOF replays it).

XADD IDMP itself is in streams_write.py, the tracking in streams/idempotency.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int
from protocol.reply import OK, ErrorReply
from server.command_table import command, key_spec
from server.commands.stream_common import SYNTAX_ERROR, get_stream
from server.keyspace import now_ms
from server.notify import NOTIFY_STREAM, notify_keyspace_event
from streams.idempotency import MAX_DURATION, MAX_MAXSIZE
from streams.ids import parse_strict_id

if TYPE_CHECKING:
    from server.connection import Client

_NO_SUCH_KEY = ErrorReply("ERR no such key")
_NO_PARAMETER = ErrorReply("ERR At least one parameter (IDMP-DURATION or IDMP-MAXSIZE) is required")
_DURATION_RANGE = ErrorReply(f"ERR IDMP-DURATION must be between 1 and {MAX_DURATION} seconds")
_MAXSIZE_RANGE = ErrorReply(f"ERR IDMP-MAXSIZE must be between 1 and {MAX_MAXSIZE} entries")
_NO_PID = ErrorReply("ERR IDMP requires a non-empty producer ID")
_NO_IID = ErrorReply("ERR IDMP requires a non-empty idempotent ID")
_NO_ENTRY = ErrorReply("ERR The stream ID refers to a non-existent or deleted entry")
_OTHER_ENTRY = ErrorReply(
    "ERR The producer ID and idempotent ID are already recorded with a different stream ID")

_KEY_ARG = {"name": "key", "type": "key", "key_spec_index": 0}


@command("xcfgset", -2, "write fast", keys=(1, 1, 1), group="stream", since="8.6.0",
         summary="Sets the IDMP configuration parameters for a stream.",
         key_specs=key_spec(("RW", "UPDATE")),
         arguments=(
             _KEY_ARG,
             {"name": "idmp-duration-block", "type": "block", "optional": True, "arguments": (
                 {"name": "idmp-duration-token", "type": "pure-token", "token": "IDMP-DURATION"},
                 {"name": "duration", "type": "integer"})},
             {"name": "idmp-maxsize-block", "type": "block", "optional": True, "arguments": (
                 {"name": "idmp-maxsize-token", "type": "pure-token", "token": "IDMP-MAXSIZE"},
                 {"name": "maxsize", "type": "integer"})},
         ))
def xcfgset(client: Client, argv: list[bytes]) -> Any:
    argc = len(argv)
    if argc == 2:
        return _NO_PARAMETER
    duration: int | None = None
    maxsize: int | None = None
    i = 2
    # Each value is checked as soon as it is read: a bad value wins over a later syntax error.
    while i < argc:
        opt = argv[i].lower()
        if opt == b"idmp-duration" and i + 1 < argc:
            duration = parse_int(argv[i + 1])
            if not 1 <= duration <= MAX_DURATION:
                return _DURATION_RANGE
        elif opt == b"idmp-maxsize" and i + 1 < argc:
            maxsize = parse_int(argv[i + 1])
            if not 1 <= maxsize <= MAX_MAXSIZE:
                return _MAXSIZE_RANGE
        else:
            return SYNTAX_ERROR
        i += 2
    key = argv[1]
    s = get_stream(client, key)
    if s is None:
        return _NO_SUCH_KEY
    s.idmp.configure(duration, maxsize)
    client.db.signal_modified(key)
    notify_keyspace_event(client, NOTIFY_STREAM, b"xcfgset", key, client.db.index)
    client.propagate(argv)
    return OK


@command("xidmprecord", 5, "write denyoom fast", keys=(1, 1, 1), group="stream", since="8.6.2",
         summary="An internal command for setting IDMP metadata on an existing stream message.",
         key_specs=key_spec(("RW", "UPDATE")),
         arguments=(_KEY_ARG, {"name": "pid", "type": "string"}, {"name": "iid", "type": "string"},
                    {"name": "stream-id", "type": "string"}))
def xidmprecord(client: Client, argv: list[bytes]) -> Any:
    key, pid, iid = argv[1], argv[2], argv[3]
    s = get_stream(client, key)
    if s is None:
        return _NO_SUCH_KEY
    if not pid:
        return _NO_PID
    if not iid:
        return _NO_IID
    eid = parse_strict_id(argv[4])
    if not s.contains(eid):
        return _NO_ENTRY
    now = now_ms()
    tracker = s.idmp
    seen = tracker.recorded(pid, iid, now)
    if seen is not None:
        return OK if seen == eid else _OTHER_ENTRY
    tracker.record(pid, iid, eid)
    client.db.signal_modified(key)
    client.propagate(argv)
    return OK
