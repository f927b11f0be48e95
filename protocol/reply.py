"""Typed reply values.

Command handlers return (or raise) these; the encoder turns them into RESP2 or RESP3 bytes
depending on the connection's protocol version. The reply type is always chosen by the handler
through the Python type of the value, never inferred from its content:

    bytes / str      bulk string            int          integer
    None             null (bulk in RESP2)   NULL_ARRAY   null (array in RESP2)
    list / tuple     array                  dict         map (flat array in RESP2)
    SetReply         set (array in RESP2)   float        double (bulk string in RESP2)
    bool             boolean (integer 1/0 in RESP2)
    SimpleString     simple string          ErrorReply   error
    Verbatim         verbatim string (bulk in RESP2)
    Push             push (array in RESP2)
    Raw              bytes already encoded, identical in both protocols
    PushReplies      pushes already encoded for the client's protocol (SUBSCRIBE...)
"""

from __future__ import annotations


class SimpleString(bytes):
    """A status reply such as +OK."""

    __slots__ = ()


class ErrorReply(Exception):
    """An error reply. Handlers may return it or raise it; the text is sent verbatim.

    The message carries Redis's code prefix ("ERR", "WRONGTYPE", "NOGROUP"...), which is also what
    INFO errorstats counts by.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def code(self) -> str:
        return self.message.split(" ", 1)[0]


class _NullArray:
    """Redis's null array: `*-1` in RESP2 (XREAD timeouts, EXEC aborted by WATCH), `_` in RESP3."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NULL_ARRAY"


NULL_ARRAY = _NullArray()


class SetReply(list):
    """A set reply. A list subclass, because Redis sets reply in a definite order."""

    __slots__ = ()


class Push(list):
    """An out-of-band push message (RESP3 `>`); an array in RESP2."""

    __slots__ = ()


class Verbatim:
    """A verbatim string (INFO, CLIENT LIST...): `=` with a format in RESP3, bulk in RESP2."""

    __slots__ = ("text", "fmt")

    def __init__(self, text: bytes, fmt: bytes = b"txt") -> None:
        self.text = text
        self.fmt = fmt


class Raw(bytes):
    """A reply that is already encoded and reads the same in RESP2 and RESP3."""

    __slots__ = ()


class PushReplies(Raw):
    """Push messages already encoded for the client's protocol: the reply of a (un)subscribe
    command. Sent even under CLIENT REPLY OFF / SKIP, as Redis sends pushes."""

    __slots__ = ()


OK = SimpleString(b"OK")
QUEUED = SimpleString(b"QUEUED")
PONG = SimpleString(b"PONG")
