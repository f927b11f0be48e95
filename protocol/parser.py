r"""Request parser: bytes from a client socket in, argument vectors out. No I/O.

Behaviour follows Redis 7.4 (``processInputBuffer``, ``processInlineBuffer``,
``processMultibulkBuffer`` in networking.c and ``sdssplitargs`` in sds.c).

API
---
``RequestParser.feed(data) -> (commands, error)``

* ``commands`` is every command completed by ``data`` (together with bytes buffered by earlier
  calls), in order; each is a non-empty ``list[bytes]``. Empty requests (``*0``, ``*-1``, blank
  inline lines) are dropped, as Redis drops them.
* ``error`` is ``None`` or a ``ProtocolError``. Redis executes the commands that precede a
  protocol error, then replies ``error.reply`` (``-ERR Protocol error: ...\r\n``) and closes the
  connection, so the caller runs ``commands`` first, then sends ``error.reply`` and closes.
  ``str(error)`` is the text without the leading ``-`` and the CRLF; the text can carry one raw
  byte (``expected '$', got 'X'``), so it is decoded as latin-1 and ``error.reply`` holds the exact
  bytes. Once an error was reported the parser stays failed: later calls return ``([], error)``.
* ``QueryBufferLimitExceeded`` is *raised* when the query buffer would exceed
  ``client-query-buffer-limit`` (or 1 MB while unauthenticated, as in 7.4). Redis then closes the
  connection without a reply. Commands completed by the same ``data`` before the limit was hit
  (Redis would have run them in earlier reads) are on the exception's ``commands`` attribute.

The limits (``max_bulk_len``, ``max_inline``, ``max_multibulk``, ``query_buffer_limit``) and
``authenticated`` are plain attributes, so CONFIG SET and AUTH take effect on the next ``feed``.
``queued_bytes`` is for the connection to keep equal to the size of the arguments of commands
queued by MULTI: Redis counts them against the query buffer limit too.

Speed
-----
A chunk that starts at a command boundary with ``*`` goes to one of two fast paths, whichever is
quicker in the build that runs (``FAST_PATH``):

* Compiled (mypyc, see setup.py): ``_scan_canonical`` walks the bytes itself and takes every
  complete command written the one way real clients write them: ``*N`` then N ``$len`` bulks,
  plain decimal numbers, every line ending in CRLF, within the limits. Compiled, that loop costs
  about what hiredis's C parser does alone (one XADD: 0.5 against 1.0 us here) and needs no
  checking afterwards, where trusting hiredis took checks worth three times the parse. It stops
  at the first command it cannot take whole.
* Pure Python: ``hiredis.Reader``, whose results are only trusted when every command is a
  non-empty plain list of ``bytes`` and the wire size computed for them is consistent: the last
  command must end exactly at the end of the chunk, or, when hiredis is still inside a command,
  the computed end of the complete ones must land on a ``*``. In pure Python that beats a byte
  loop 6-18 times.

Whatever a fast path leaves (hiredis errors, inline commands, odd RESP types, limits,
unauthenticated clients, huge counts that would make hiredis preallocate a huge list, a command
cut by the end of the read) goes to the strict parser below, which reproduces Redis byte for byte
and is also what decides every error. A command left incomplete at the end of a chunk is always
finished by the strict parser, so header limits apply as soon as the header arrives and a big bulk
is buffered once.

Read granularity
----------------
Like Redis, the "too big" checks (inline request, count strings) fire only while no terminator is
buffered, so a 70 KB inline line arriving in one read is accepted and the same line fed in small
pieces is not; Redis behaves the same way depending on its 16 KiB reads. When a ``feed`` would
cross the query buffer limit, the data is replayed in 16 KiB pieces, the size of Redis's reads, so
a big chunk of small complete commands stays legal.

Known deviation (pure-Python build only)
----------------------------------------
hiredis turns RESP simple strings (``+x``), big numbers (``(1``) and verbatim strings
(``=5\r\ntxt:x``) into ``bytes`` and a RESP3 set header (``~N``) into a list, where Redis demands
``$`` / ``*``. Chunks containing ``\n+``, ``\n(``, ``\n=`` or ``\n~`` therefore keep hiredis's
result only when they are byte for byte the canonical encoding of it (as ``XRANGE s - +`` is), and
go to the strict parser otherwise; so do chunks with a ``~`` anywhere, since a set header may
also follow the unchecked terminator bytes of a payload. The size checks catch most of the rest.
What remains: a ``+``, ``(`` or ``=`` element placed right after a bulk whose two terminator
bytes are not CRLF (Redis never checks them), in a command followed by a well-formed command in
the same read, is accepted instead of failing with ``expected '$', got '+'``. No real client
produces that.
"""

from __future__ import annotations

from itertools import chain
from typing import Any, Final

import hiredis

from protocol.numbers import string2ll

__all__ = ["FAST_PATH", "ProtocolError", "QueryBufferLimitExceeded", "Received", "RequestParser"]

# The fast path new parsers take (see "Speed"); tests set it to run both in either build.
FAST_PATH: str | None = "hiredis" if __file__.endswith(".py") else "scan"

INT_MAX = 2**31 - 1
PROTO_INLINE_MAX_SIZE = 64 * 1024
PROTO_IOBUF_LEN = 16 * 1024
UNAUTH_MAX_MULTIBULK = 10
UNAUTH_MAX_BULK = 16384
UNAUTH_QUERY_BUFFER_LIMIT = 1024 * 1024

_STAR: Final = 0x2A
_DOLLAR: Final = 0x24
_CR: Final = 0x0D
_LF: Final = 0x0A

# One translate() classifies every byte so that the checks below are plain substring searches:
# digits -> "0", aggregate headers -> "A" ("~" -> "T"), "+(=" -> "P", LF -> "N", others -> ".".
# hiredis preallocates a list of N slots for "*N" and frees it slot by slot: 2**31 slots cost
# seconds of CPU, so a header marker followed by 7+ digits keeps the chunk away from hiredis.
# "N" followed by "P" or "T" is a simple string, big number, verbatim string or set where Redis
# wants '$' or '*' (see "Known deviation"). Payloads matching either merely take the strict path.
_CLASSES = bytes(
    ord("0") if 0x30 <= b <= 0x39
    else ord("A") if b in b"*%>|"
    else ord("T") if b == 0x7E
    else ord("P") if b in b"+(="
    else ord("N") if b == 0x0A
    else ord(".")
    for b in range(256)
)

_LIST_TYPE = {list}


class ProtocolError(Exception):
    """Malformed request. ``reply`` is the exact error reply Redis sends before closing."""

    def __init__(self, message: bytes) -> None:
        # addReplyErrorFormat turns CR/LF inside the text into spaces to keep the reply one line.
        message = message.replace(b"\r", b" ").replace(b"\n", b" ")
        self.reply = b"-ERR Protocol error: " + message + b"\r\n"
        super().__init__(self.reply[1:-2].decode("latin-1"))


class QueryBufferLimitExceeded(Exception):
    """The client's query buffer outgrew its limit; close the connection without replying."""

    def __init__(self, commands: list[list[bytes]] | None = None) -> None:
        super().__init__("client reached max query buffer length")
        self.commands: list[list[bytes]] = commands if commands is not None else []


# Blank skipping uses C isspace(); a token, though, only ends at these four bytes (and NUL),
# so a vertical tab or form feed inside a word stays part of it.
_SPACE = frozenset(b" \t\n\r\x0b\x0c")
_TOKEN_END = frozenset(b" \n\r\t")
_ESCAPES = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("b"): 8, ord("a"): 7}
_HEX = frozenset(b"0123456789abcdefABCDEF")


def split_args(line: bytes) -> list[bytes] | None:
    """``sdssplitargs``: split an inline request; None means unbalanced quotes."""
    if b'"' not in line and b"'" not in line and b"\x0b" not in line and b"\x0c" not in line:
        return line.split()
    args: list[bytes] = []
    n = len(line)
    i = 0
    while True:
        while i < n and line[i] in _SPACE:
            i += 1
        if i >= n:
            return args
        cur = bytearray()
        inq = insq = False
        while True:
            c = line[i] if i < n else 0
            if inq:
                if (c == 0x5C and i + 3 < n and line[i + 1] == 0x78 and line[i + 2] in _HEX
                        and line[i + 3] in _HEX):
                    cur.append(int(line[i + 2:i + 4], 16))
                    i += 3
                elif c == 0x5C and i + 1 < n:
                    i += 1
                    cur.append(_ESCAPES.get(line[i], line[i]))
                elif c == 0x22:
                    if i + 1 < n and line[i + 1] not in _SPACE:
                        return None
                    i += 1
                    break
                elif i >= n:
                    return None
                else:
                    cur.append(c)
            elif insq:
                if c == 0x5C and i + 1 < n and line[i + 1] == 0x27:
                    i += 1
                    cur.append(0x27)
                elif c == 0x27:
                    if i + 1 < n and line[i + 1] not in _SPACE:
                        return None
                    i += 1
                    break
                elif i >= n:
                    return None
                else:
                    cur.append(c)
            else:
                if i >= n or c in _TOKEN_END:
                    i += 1
                    break
                if c == 0x22:
                    inq = True
                elif c == 0x27:
                    insq = True
                else:
                    cur.append(c)
            i += 1
        args.append(bytes(cur))


def _find(buf: bytearray, char: bytes, pos: int) -> int:
    """strchr() from pos: Redis searches a C string, so a NUL byte hides what follows it."""
    idx = buf.find(char, pos)
    if idx == -1:
        return -1
    if buf.find(b"\0", pos, idx) != -1:
        return -1
    return idx


def _suspect(classes: bytes) -> bool:
    # A '+', '(' or '=' right after a LF is nearly always the first byte of a bulk
    # ("XRANGE s - +"), but could be a type byte Redis rejects: then hiredis's result is only
    # trusted when the chunk is exactly the canonical encoding of what it returned.
    # (bytes.find, not `in`: `in` first tries the needle as an int, which costs an exception.)
    # A '~' anywhere is suspect: after a payload whose two terminator bytes are not CRLF it
    # starts an inline command for Redis and a set for hiredis, and nothing precedes it then.
    return classes.find(0x54) != -1 or (classes.find(0x50) != -1 and classes.find(b"NP") != -1)


def _huge_header(classes: bytes) -> bool:
    """Does an aggregate header ("A" or "T") carry a count of 7 digits or more?

    One search for the header mark followed by seven digits: chunks carrying stream IDs are full
    of long digit runs, so searching for the digits first and then checking each header costs
    several times more; "T" (a RESP3 set) is rare enough to be looked for before its search.
    """
    return classes.find(b"A0000000") != -1 or (
        classes.find(0x54) != -1 and classes.find(b"T0000000") != -1)


def _all_bytes(cmds: list[list[Any]]) -> bool:
    """Is every element of these lists bytes? hiredis returns no other bytes-like type, so a
    join (which takes only bytes-like objects) answers in one C call."""
    try:
        b"".join(chain.from_iterable(cmds))
    except TypeError:
        return False
    return True


def wire_size(cmds: list[list[bytes]]) -> int:
    """Bytes taken by cmds when every element is a '$' bulk: sum of lengths plus headers.

    A loop: compiled, it beats C-level passes over the lengths (map, max, repr), whose
    builtins compiled code looks up on every call.
    """
    size = 0
    for cmd in cmds:
        size += 3 + len(str(len(cmd)))
        for element in cmd:
            n = len(element)
            size += 5 + n + (1 if n < 10 else 2 if n < 100 else len(str(n)))
    return size


def _canonical(cmds: list[list[bytes]]) -> bytes:
    """The one encoding that uses only '*' and '$' headers with plain decimal lengths and CRLFs.

    A chunk equal to it is parsed by Redis into exactly ``cmds``, whatever hiredis accepted.
    """
    parts = []
    for cmd in cmds:
        parts.append(b"*%d\r\n" % len(cmd))
        for arg in cmd:
            parts.append(b"$%d\r\n" % len(arg))
            parts.append(arg)
            parts.append(b"\r\n")
    return b"".join(parts)


def _decimal(buf: bytes, pos: int, max_digits: int) -> tuple[int, int]:
    """The plain decimal number at buf[pos:] (no sign, no leading zero, at most max_digits) and
    the position of the CR that ends it; value -1 when there is none (yet)."""
    n = len(buf)
    start = pos
    value = 0
    while pos < n:
        c = buf[pos]
        if c == _CR:
            return (value if pos > start else -1), pos
        if c < 0x30 or c > 0x39 or pos - start == max_digits or (value == 0 and pos > start):
            return -1, pos
        value = value * 10 + (c - 0x30)
        pos += 1
    return -1, pos


def encoded_size(argv: list[bytes]) -> int:
    """Bytes argv takes as canonical RESP (`*N` then a `$` bulk per argument)."""
    n = len(argv)
    size = 3 + (1 if n < 10 else 2 if n < 100 else len(str(n)))
    for element in argv:
        m = len(element)
        size += 5 + m + (1 if m < 10 else 2 if m < 100 else len(str(m)))
    return size


class Received:
    """Where the commands a scan took lie in the bytes they were read from.

    commands[first:first + count] are buf's bytes from its start, one after the other, each the
    canonical RESP of its argv, which encoding the argv again gives back byte for byte. A
    handler about to encode argvs as they were sent (its effects, for the AOF and replicas) can
    take these bytes instead. Valid while the commands of that parse run; cleared afterwards,
    so that neither the read nor its commands outlive them.

    Where each command ends is either given (`ends`, which a replica's apply keeps anyway) or
    found from the argvs' sizes when asked, from the last position found: a client's scan
    records nothing per command.
    """

    __slots__ = ("commands", "buf", "first", "count", "ends", "_index", "_pos")

    def __init__(self) -> None:
        self.commands: list[list[bytes]] | None = None
        self.buf = b""
        self.first = 0
        self.count = 0
        self.ends: list[int] | None = None
        self._index = 0  # a command (counted from first) and where it starts
        self._pos = 0

    def set(self, commands: list[list[bytes]], buf: bytes, first: int, count: int,
            ends: list[int] | None = None) -> None:
        self.commands = commands
        self.buf = buf
        self.first = first
        self.count = count
        self.ends = ends
        self._index = 0
        self._pos = 0

    def clear(self) -> None:
        self.commands = None
        self.buf = b""
        self.ends = None
        self.count = 0

    def _offset(self, k: int) -> int:
        """Where commands[first + k] starts (k <= count)."""
        ends = self.ends
        if ends is not None:
            return ends[k - 1] if k else 0
        index = self._index
        pos = self._pos
        if k < index:
            index = 0
            pos = 0
        commands = self.commands
        assert commands is not None
        first = self.first
        while index < k:
            pos += encoded_size(commands[first + index])
            index += 1
        self._index = index
        self._pos = pos
        return pos

    def start(self, commands: list[list[bytes]], index: int, count: int) -> int:
        """Where commands[index] starts in buf, when commands[index:index + count] are all
        there; else -1 (another list, or calls that came another way)."""
        k = index - self.first
        if commands is not self.commands or k < 0 or k + count > self.count:
            return -1
        return self._offset(k)

    def span(self, commands: list[list[bytes]], index: int, count: int) -> bytes | None:
        """The bytes of commands[index:index + count] as received (see start), or None."""
        start = self.start(commands, index, count)
        if start < 0 or count <= 0:
            return None
        return self.buf[start:self._offset(index - self.first + count)]


def _scan_canonical(buf: bytes, out: list[list[bytes]], max_bulk_len: int, max_count: int,
                    ends: list[int] | None) -> int:
    """Append buf's complete canonical commands to out, from its start, and where each ends to
    ends if given; return where they end.

    Canonical: ``*N\r\n`` with 0 < N <= max_count, then N times ``$L\r\n``, L bytes and CRLF,
    with L <= max_bulk_len; numbers without sign or leading zero. Redis parses such a command
    into exactly these arguments, so nothing else needs checking. The scan stops at the first
    byte that breaks the form (the strict parser then decides what Redis would do) or at the end
    of the data; it never allocates ahead of the bytes it has seen, whatever N says.
    Byte by byte on purpose: compiled, indexing and integer arithmetic stay in C, where each
    bytes.find would be a method call with argument parsing.
    """
    n = len(buf)
    pos = 0
    done = 0
    while pos < n:
        if buf[pos] != _STAR:
            return done
        # Nine digits at most: more is beyond any multibulk limit.
        count, pos = _decimal(buf, pos + 1, 9)
        if count <= 0 or count > max_count or pos + 1 >= n or buf[pos + 1] != _LF:
            return done
        pos += 2
        argv: list[bytes] = []
        while count:
            if pos >= n or buf[pos] != _DOLLAR:
                return done
            size, pos = _decimal(buf, pos + 1, 10)
            if size < 0 or size > max_bulk_len:
                return done
            end = pos + 2 + size
            if end + 2 > n or buf[pos + 1] != _LF or buf[end] != _CR or buf[end + 1] != _LF:
                return done
            argv.append(buf[pos + 2:end])
            pos = end + 2
            count -= 1
        out.append(argv)
        if ends is not None:
            ends.append(pos)
        done = pos
    return done

# No limit of the scan's own: what a master sends was checked by the master.
_ANY_BULK_LEN = 9_999_999_999
_ANY_COUNT = 999_999_999


def scan_commands(buf: bytes, out: list[list[bytes]], ends: list[int]) -> int:
    """Append the complete canonical commands at the start of buf to out, and to ends the
    offset just after each; return where they end (a command cut short, or in another form,
    stops the scan). For a stream of commands a server wrote itself (a master's replication
    stream), whose limits the writer checked."""
    return _scan_canonical(buf, out, _ANY_BULK_LEN, _ANY_COUNT, ends)


class RequestParser:
    """Incremental Redis request parser; see the module docstring for the contract."""

    def __init__(
        self,
        *,
        max_bulk_len: int = 512 * 1024 * 1024,
        max_inline: int = PROTO_INLINE_MAX_SIZE,
        max_multibulk: int = INT_MAX,
        query_buffer_limit: int = 1024**3,
        authenticated: bool = True,
        fast_path: str | None = "default",
    ) -> None:
        self.max_bulk_len = max_bulk_len
        # "scan", "hiredis", "default" (FAST_PATH), or None: the strict parser alone (the
        # reference in tests).
        if fast_path == "default":
            fast_path = FAST_PATH
        if fast_path not in ("scan", "hiredis", None):
            raise ValueError(f"unknown fast path {fast_path!r}")
        self.fast_path = fast_path
        self._scan = fast_path == "scan"
        self.max_inline = max_inline
        self.max_multibulk = max_multibulk
        self.query_buffer_limit = query_buffer_limit
        self.authenticated = authenticated
        self.queued_bytes = 0
        self.error: ProtocolError | None = None
        # The commands the last scan took, as received (see Received); the caller clears it
        # once they ran.
        self.received = Received()
        self._reader = hiredis.Reader()
        # Strict parser state, the same fields Redis keeps on the client.
        self._buf = bytearray()
        self._pos = 0
        self._reqtype = 0  # 0 unknown, 1 inline, 2 multibulk
        self._multibulklen = 0
        self._bulklen = -1
        self._argv: list[bytes] = []

    @property
    def buffered(self) -> int:
        """Bytes Redis would hold in the query buffer now (the unparsed tail)."""
        return len(self._buf) - self._pos

    def feed(self, data: bytes) -> tuple[list[list[bytes]], ProtocolError | None]:
        """Parse data; return the completed commands and a protocol error or None."""
        # Narrowing a local, not self.error: the parsing below may set self.error, and compiled
        # code would trust a narrowed attribute's type.
        failed = self.error
        if failed is not None:
            return [], failed
        out: list[list[bytes]] = []
        size = len(self._buf) - self._pos + len(data) + self.queued_bytes
        if size > self.query_buffer_limit or (
            size > UNAUTH_QUERY_BUFFER_LIMIT and not self.authenticated
        ):
            return self._feed_in_reads(data, out)
        if data:
            # bytes() of a bytes object is the object itself, but still a constructor call.
            self._process(data if type(data) is bytes else bytes(data), out)
        return out, self.error

    def _feed_in_reads(
        self, data: bytes, out: list[list[bytes]]
    ) -> tuple[list[list[bytes]], ProtocolError | None]:
        # Redis checks the limit after every read of at most PROTO_IOBUF_LEN bytes, before
        # parsing it; replaying that keeps a big pipelined chunk of small commands legal.
        for start in range(0, len(data), PROTO_IOBUF_LEN):
            chunk = bytes(data[start:start + PROTO_IOBUF_LEN])
            size = len(self._buf) - self._pos + len(chunk) + self.queued_bytes
            if size > self.query_buffer_limit or (
                size > UNAUTH_QUERY_BUFFER_LIMIT and not self.authenticated
            ):
                raise QueryBufferLimitExceeded(out)
            self._process(chunk, out)
            if self.error is not None:
                break
        return out, self.error

    def _process(self, data: bytes, out: list[list[bytes]]) -> None:
        while data:
            if self._reqtype or self._buf or data[0] != _STAR or not self.authenticated or self.fast_path is None:
                data = self._strict(data, out, handback=self.authenticated)
            elif self._scan:
                first = len(out)
                end = _scan_canonical(data, out, self.max_bulk_len, self.max_multibulk, None)
                self.received.set(out, data, first, len(out) - first)
                if end < len(data):
                    # All of the rest: an odd command handed back and forth one at a time would
                    # copy the rest of a big read each time.
                    self._strict(data[end:], out, handback=False)
                return
            else:
                data, sticky = self._fast(data, out)
                if data:
                    data = self._strict(data, out, handback=not sticky)
            if self.error is not None:
                return

    # --- hiredis fast path -------------------------------------------------------------------

    def _fast(self, buf: bytes, out: list[list[bytes]]) -> tuple[bytes, bool]:
        """Parse buf (starting at a command boundary with '*') through hiredis.

        Returns the bytes the strict parser must take over, and whether it must parse them to
        the end (True: something hiredis returned is not trusted) or only finish the first,
        incomplete command (False).
        """
        classes = buf.translate(_CLASSES)
        if _huge_header(classes):
            return buf, True
        reader = self._reader
        reader.feed(buf)
        gets = reader.gets
        cmds = []
        try:
            while (cmd := gets()) is not False:
                cmds.append(cmd)
        except Exception:  # noqa: BLE001 - not only HiredisError: a RESP3 map keyed by a list raises TypeError
            self._reader = hiredis.Reader()
            return buf, True
        if len(cmds) == 1:
            # The common request/response case: cheaper checks for a single command.
            last = cmds[0]
            if type(last) is not list or not last:
                self._reader = hiredis.Reader()
                return buf, True
            try:
                total = len(b"".join(last))  # TypeError unless every element is bytes
            except TypeError:
                self._reader = hiredis.Reader()
                return buf, True
            if len(last) > self.max_multibulk or (
                total > self.max_bulk_len and max(map(len, last)) > self.max_bulk_len
            ):
                self._reader = hiredis.Reader()
                return buf, True
        elif not cmds:
            self._reader = hiredis.Reader()
            return buf, False
        elif (
            set(map(type, cmds)) != _LIST_TYPE
            or not _all_bytes(cmds)
            or [] in cmds
            or (self.max_multibulk < 1_000_000 and max(map(len, cmds)) > self.max_multibulk)
            or (
                len(buf) > self.max_bulk_len
                and max(map(len, chain.from_iterable(cmds))) > self.max_bulk_len
            )
        ):
            self._reader = hiredis.Reader()
            return buf, True
        else:
            last = cmds[-1]
        if not reader.has_data():
            # hiredis also reports no data when the chunk ended between two elements of a
            # command, so make sure the commands fill the chunk: their canonical size must be
            # the chunk's. (The last `size` bytes looking like the last command prove nothing:
            # they can be the payload of a bulk of a command hiredis holds part of.)
            end = len(buf)
            if len(cmds) == 1:
                size = wire_size([last])
                if size == end and buf.find(b"\n=") == -1:
                    # One command whose every element is a canonical '$' bulk exactly fills the
                    # chunk: a '+' or '(' element would make it shorter than `size`, and only a
                    # verbatim '=' one could make up for that.
                    out.append(last)
                    return b"", False
            else:
                size = wire_size(cmds)
            if size == end:
                if _suspect(classes) and _canonical(cmds) != buf:
                    return buf, True
                out.extend(cmds)
                return b"", False
        # hiredis holds part of a command; hand that command to the strict parser.
        self._reader = hiredis.Reader()
        offset = wire_size(cmds)
        if offset >= len(buf) or buf[offset] != _STAR:
            return buf, True
        if _suspect(classes) and not buf.startswith(_canonical(cmds)):
            return buf, True
        out.extend(cmds)
        return buf[offset:], False

    # --- strict parser (Redis semantics) -----------------------------------------------------

    def _fail(self, message: bytes) -> None:
        self.error = ProtocolError(message)

    def _strict(self, data: bytes, out: list[list[bytes]], handback: bool) -> bytes:
        """Run Redis's processInputBuffer loop over the buffered bytes plus data.

        With handback, stop at the first command boundary after at least one request and followed
        by '*', and return the rest so hiredis can take it; otherwise parse everything and return
        b"".
        """
        buf = self._buf
        buf += data
        n = len(buf)
        progressed = False
        while self._pos < n:
            if not self._reqtype:
                if progressed and handback and buf[self._pos] == _STAR:
                    # The rest is a slice of data once the buffered command is done (the
                    # common case: a command cut by the end of the previous read): one copy.
                    skip = self._pos - (n - len(data))
                    rest = data[skip:] if skip >= 0 else bytes(buf[self._pos:])
                    buf.clear()
                    self._pos = 0
                    return rest
                self._reqtype = 2 if buf[self._pos] == _STAR else 1
            if self._reqtype == 1:
                ok = self._inline(buf, out)
            else:
                ok = self._multibulk(buf, out)
            if not ok:
                break
            self._reqtype = 0
            progressed = True
        if self._pos:
            del buf[:self._pos]
            self._pos = 0
        return b""

    def _inline(self, buf: bytearray, out: list[list[bytes]]) -> bool:
        pos = self._pos
        newline = _find(buf, b"\n", pos)
        if newline == -1:
            if len(buf) - pos > self.max_inline:
                self._fail(b"too big inline request")
            return False
        end = newline
        if end != pos and buf[end - 1] == 0x0D:
            end -= 1
        args = split_args(bytes(buf[pos:end]))
        if args is None:
            self._fail(b"unbalanced quotes in request")
            return False
        self._pos = newline + 1
        if args:
            out.append(args)
        return True

    def _multibulk(self, buf: bytearray, out: list[list[bytes]]) -> bool:
        n = len(buf)
        find = buf.find
        if self._multibulklen == 0:
            pos = self._pos
            newline = find(b"\r", pos)
            ll = string2ll(bytes(buf[pos + 1:newline])) if newline != -1 else None
            if ll is None:
                # Only the slow path cares about NUL: a valid number cannot contain one.
                newline = _find(buf, b"\r", pos)
                if newline == -1:
                    if n - pos > self.max_inline:
                        self._fail(b"too big mbulk count string")
                    return False
                # Redis only needs one more byte after '\r' and never looks at it.
                if newline + 2 > n:
                    return False
                ll = string2ll(bytes(buf[pos + 1:newline]))
                if ll is None or ll > self.max_multibulk:
                    self._fail(b"invalid multibulk length")
                    return False
            elif newline + 2 > n:
                return False
            if ll > self.max_multibulk:
                self._fail(b"invalid multibulk length")
                return False
            if ll > UNAUTH_MAX_MULTIBULK and not self.authenticated:
                self._fail(b"unauthenticated multibulk length")
                return False
            self._pos = newline + 2
            if ll <= 0:
                return True
            self._multibulklen = ll
            self._argv = []
        argv = self._argv
        pos = self._pos
        left = self._multibulklen
        bulklen = self._bulklen
        try:
            while left:
                if bulklen == -1:
                    newline = find(b"\r", pos)
                    ll = (
                        string2ll(bytes(buf[pos + 1:newline]))
                        if newline != -1 and buf[pos] == _DOLLAR
                        else None
                    )
                    if ll is None:
                        ll = self._bulk_header_slow(buf, pos)
                        if ll is None:
                            return False
                        newline = find(b"\r", pos)
                    elif newline + 2 > n:
                        return False
                    if ll < 0 or ll > self.max_bulk_len:
                        self._fail(b"invalid bulk length")
                        return False
                    if ll > UNAUTH_MAX_BULK and not self.authenticated:
                        self._fail(b"unauthenticated bulk length")
                        return False
                    pos = newline + 2
                    bulklen = ll
                end = pos + bulklen
                if end + 2 > n:
                    return False
                if bulklen < 32 * 1024:
                    argv.append(bytes(buf[pos:end]))
                else:
                    with memoryview(buf) as view:  # one copy instead of two for big values
                        argv.append(bytes(view[pos:end]))
                pos = end + 2  # the two bytes after a bulk are skipped unchecked, as in Redis
                bulklen = -1
                left -= 1
        finally:
            self._pos = pos
            self._multibulklen = left
            self._bulklen = bulklen
        out.append(argv)
        self._argv = []
        return True

    def _bulk_header_slow(self, buf: bytearray, pos: int) -> int | None:
        """Bulk header with strchr semantics and every error; None when not usable (yet)."""
        newline = _find(buf, b"\r", pos)
        if newline == -1:
            if len(buf) - pos > self.max_inline:
                self._fail(b"too big bulk count string")
            return None
        if newline + 2 > len(buf):
            return None
        if buf[pos] != _DOLLAR:
            self._fail(b"expected '$', got '" + bytes(buf[pos:pos + 1]) + b"'")
            return None
        ll = string2ll(bytes(buf[pos + 1:newline]))
        if ll is None or ll < 0:
            self._fail(b"invalid bulk length")
            return None
        return ll
