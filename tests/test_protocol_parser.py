"""Unit tests of protocol.parser (no sockets).

Expected error texts were checked against a real redis-server 7.0.15 by hand; the parsing code of
networking.c is unchanged between 7.0.15 and 7.4.1.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pytest

import protocol.parser
from protocol.parser import (
    ProtocolError,
    QueryBufferLimitExceeded,
    RequestParser,
    split_args,
)
from tests.helpers import encode_command as resp


@pytest.fixture(autouse=True, params=["scan", "hiredis"])
def fast_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with each fast path, whichever one this build picks by default."""
    monkeypatch.setattr(protocol.parser, "FAST_PATH", request.param)
    assert RequestParser().fast_path == request.param
    return str(request.param)


def feed_all(data: bytes, step: int | None = None, **kw: object) -> tuple[list[list[bytes]], str | None]:
    p = RequestParser(**kw)  # type: ignore[arg-type]
    cmds: list[list[bytes]] = []
    chunks = [data] if step is None else [data[i:i + step] for i in range(0, len(data), step)]
    for chunk in chunks:
        got, err = p.feed(chunk)
        cmds += got
        if err is not None:
            return cmds, str(err)
    return cmds, None


# --- multibulk ------------------------------------------------------------------------------


def test_single_and_pipelined_commands() -> None:
    data = resp(b"SET", b"k", b"v") + resp(b"GET", b"k") + resp(b"PING")
    assert feed_all(data) == ([[b"SET", b"k", b"v"], [b"GET", b"k"], [b"PING"]], None)


def test_binary_payload_with_crlf_and_nul() -> None:
    value = b"a\r\nb\x00c*1\r\n$3\r\n\xff"
    assert feed_all(resp(b"SET", b"k", value)) == ([[b"SET", b"k", value]], None)
    assert feed_all(resp(b"ECHO", b"")) == ([[b"ECHO", b""]], None)


def test_empty_multibulk_is_skipped() -> None:
    data = b"*0\r\n*-1\r\n*-5\r\n" + resp(b"PING") + b"*0\r\n"
    assert feed_all(data) == ([[b"PING"]], None)


def test_bulk_trailer_is_not_checked() -> None:
    # Redis skips the two bytes after a payload without looking at them.
    assert feed_all(b"*2\r\n$4\r\nECHO\r\n$1\r\naXY" + resp(b"PING")) == (
        [[b"ECHO", b"a"], [b"PING"]],
        None,
    )


def test_header_needs_only_one_byte_after_cr() -> None:
    assert feed_all(b"*1\rX$4\r\nPING\rY") == ([[b"PING"]], None)
    p = RequestParser()
    assert p.feed(b"*1\r") == ([], None)
    assert p.feed(b"\n$4\r\nPING\r\n") == ([[b"PING"]], None)


def test_ten_thousand_pipelined_commands() -> None:
    data = b"".join(resp(b"SET", b"key:%d" % i, b"v" * (i % 50)) for i in range(10_000))
    cmds, err = feed_all(data)
    assert err is None
    assert len(cmds) == 10_000
    assert cmds[9999] == [b"SET", b"key:9999", b"v" * (9999 % 50)]
    # The same in socket-sized reads.
    assert feed_all(data, step=65536) == (cmds, None)
    assert feed_all(data, step=1000) == (cmds, None)


def test_large_bulk_across_many_feeds() -> None:
    value = bytes(range(256)) * 4096  # 1 MiB
    data = resp(b"SET", b"big", value) + resp(b"PING")
    p = RequestParser()
    cmds: list[list[bytes]] = []
    for i in range(0, len(data), 4096):
        got, err = p.feed(data[i:i + 4096])
        assert err is None
        cmds += got
    assert cmds == [[b"SET", b"big", value], [b"PING"]]
    assert p.buffered == 0


def test_bulk_over_limit_rejected_at_header() -> None:
    p = RequestParser(max_bulk_len=1000)
    assert p.feed(resp(b"PING"))[0] == [[b"PING"]]
    cmds, err = p.feed(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1001\r\n")
    assert cmds == []
    assert str(err) == "ERR Protocol error: invalid bulk length"
    assert feed_all(resp(b"SET", b"k", b"x" * 1000), max_bulk_len=1000)[1] is None


def test_bulk_over_default_limit_rejected_before_payload() -> None:
    p = RequestParser()
    cmds, err = p.feed(b"*2\r\n$3\r\nSET\r\n$536870913\r\n")
    assert str(err) == "ERR Protocol error: invalid bulk length"
    assert p.feed(b"*2\r\n$3\r\nSET\r\n$536870912\r\n") == ([], err)  # stays failed
    q = RequestParser()
    assert q.feed(b"*2\r\n$3\r\nSET\r\n$536870912\r\n") == ([], None)


def test_limits_can_change_at_run_time() -> None:
    p = RequestParser()
    assert p.feed(resp(b"SET", b"k", b"x" * 2000)) == ([[b"SET", b"k", b"x" * 2000]], None)
    p.max_bulk_len = 1000
    assert str(p.feed(resp(b"SET", b"k", b"x" * 2000))[1]) == "ERR Protocol error: invalid bulk length"


def test_max_multibulk() -> None:
    assert feed_all(resp(*[b"a"] * 5), max_multibulk=5) == ([[b"a"] * 5], None)
    assert feed_all(resp(*[b"a"] * 6), max_multibulk=5) == (
        [],
        "ERR Protocol error: invalid multibulk length",
    )
    assert feed_all(b"*2147483647\r\n")[1] is None
    assert feed_all(b"*2147483648\r\n")[1] == "ERR Protocol error: invalid multibulk length"


def test_huge_count_does_not_preallocate() -> None:
    start = time.perf_counter()
    p = RequestParser()
    assert p.feed(b"*2147483647\r\n$1\r\na\r\n") == ([], None)
    del p
    assert time.perf_counter() - start < 0.5


@pytest.mark.parametrize("header", [b"*", b"~", b"%", b">", b"|"])
def test_huge_nested_count_does_not_preallocate(header: bytes) -> None:
    # An aggregate header inside a command (after a complete one, and with IDs full of digits
    # around it) is Redis's "expected '$'" error, found without hiredis preallocating 2**31 slots.
    start = time.perf_counter()
    p = RequestParser()
    chunk = (resp(b"XACK", b"s", b"g", b"1700000000000-1")
             + b"*2\r\n$15\r\n1700000000000-2\r\n" + header + b"2147483647\r\n")
    commands, error = p.feed(chunk)
    assert commands == [[b"XACK", b"s", b"g", b"1700000000000-1"]]
    assert str(error) == "ERR Protocol error: expected '$', got '%s'" % header.decode()
    del p
    assert time.perf_counter() - start < 0.5


# --- errors ---------------------------------------------------------------------------------

ERRORS = [
    (b"*abc\r\n", "invalid multibulk length"),
    (b"*01\r\n", "invalid multibulk length"),
    (b"*+1\r\n", "invalid multibulk length"),
    (b"* 1\r\n", "invalid multibulk length"),
    (b"*1 \r\n", "invalid multibulk length"),
    (b"*-0\r\n", "invalid multibulk length"),
    (b"*\r\n", "invalid multibulk length"),
    (b"*99999999999999999999\r\n", "invalid multibulk length"),
    (b"*1\r\n$-1\r\n", "invalid bulk length"),
    (b"*1\r\n$-0\r\n", "invalid bulk length"),
    (b"*1\r\n$04\r\nPING\r\n", "invalid bulk length"),
    (b"*1\r\n$ 4\r\nPING\r\n", "invalid bulk length"),
    (b"*1\r\n$+4\r\nPING\r\n", "invalid bulk length"),
    (b"*1\r\n$x\r\n", "invalid bulk length"),
    (b"*1\r\n$\r\n", "invalid bulk length"),
    (b"*1\r\n+PING\r\n", "expected '$', got '+'"),
    (b"*1\r\n:1\r\n", "expected '$', got ':'"),
    (b"*1\r\n*1\r\n", "expected '$', got '*'"),
    (b"*1\r\nx\r\n", "expected '$', got 'x'"),
    (b"*1\r\n\r\n", "expected '$', got ' '"),  # CR/LF in the reply become spaces
    (b"*1\r\n\n\r\n", "expected '$', got ' '"),
    (b"*1\r\n\xff\r\n", "expected '$', got '\xff'"),
    (b'ECHO "x\r\n', "unbalanced quotes in request"),
    (b"ECHO 'x\r\n", "unbalanced quotes in request"),
    (b'ECHO "x"y\r\n', "unbalanced quotes in request"),
    (b"ECHO 'x'y\r\n", "unbalanced quotes in request"),
    (b'ECHO "ab\\\r\n', "unbalanced quotes in request"),
    (b"ECHO " + b"x" * 70000, "too big inline request"),
    (b"*" + b"1" * 70000, "too big mbulk count string"),
    (b"*1\r\n$" + b"1" * 70000, "too big bulk count string"),
]


@pytest.mark.parametrize(("data", "text"), ERRORS)
def test_error_texts(data: bytes, text: str) -> None:
    cmds, err = RequestParser().feed(data)
    assert cmds == []
    assert isinstance(err, ProtocolError)
    assert str(err) == "ERR Protocol error: " + text
    assert err.reply == b"-ERR Protocol error: " + text.encode("latin-1") + b"\r\n"


@pytest.mark.parametrize(("data", "text"), ERRORS)
def test_commands_before_error_are_returned(data: bytes, text: str) -> None:
    before = resp(b"SET", b"a", b"1") + b"PING\r\n" + resp(b"GET", b"a")
    expected = [[b"SET", b"a", b"1"], [b"PING"], [b"GET", b"a"]]
    cmds, err = RequestParser().feed(before + data + resp(b"PING"))
    if text.startswith("too big"):
        # these only fire when no terminator is in the buffer
        cmds, err = RequestParser().feed(before + data)
    assert cmds == expected
    assert str(err) == "ERR Protocol error: " + text


def test_error_found_in_later_feed() -> None:
    p = RequestParser()
    assert p.feed(resp(b"PING") + b"*2\r\n$4\r\nECHO\r\n") == ([[b"PING"]], None)
    cmds, err = p.feed(b"$1\r\na\r\n" + resp(b"PING") + b"*1\r\n+x\r\n")
    assert cmds == [[b"ECHO", b"a"], [b"PING"]]
    assert str(err) == "ERR Protocol error: expected '$', got '+'"
    assert p.feed(resp(b"PING")) == ([], err)


def test_too_big_inline_depends_on_terminator_in_buffer() -> None:
    # Redis only complains while no newline is buffered; a long line arriving whole is accepted.
    line = b"ECHO " + b"x" * 70000 + b"\r\n"
    assert feed_all(line) == ([[b"ECHO", b"x" * 70000]], None)
    assert feed_all(b"x" * 65536) == ([], None)
    assert feed_all(b"x" * 65537)[1] == "ERR Protocol error: too big inline request"
    assert feed_all(b"x" * 200, max_inline=100)[1] == "ERR Protocol error: too big inline request"
    assert feed_all(b"*" + b"1" * 200, max_inline=100)[1] == "ERR Protocol error: too big mbulk count string"


def test_nul_hides_terminator_like_strchr() -> None:
    # Redis searches the buffer as a C string, so a NUL before the newline means "wait".
    p = RequestParser(max_inline=100)
    assert p.feed(b"ECHO a\x00b\r\nPING\r\n") == ([], None)
    assert str(p.feed(b"x" * 100)[1]) == "ERR Protocol error: too big inline request"
    assert RequestParser().feed(b"*1\x00\r\n") == ([], None)


# --- unauthenticated limits -----------------------------------------------------------------


def test_unauthenticated_limits() -> None:
    ok = resp(*[b"a"] * 10) + resp(b"AUTH", b"x" * 16384)
    assert feed_all(ok, authenticated=False)[1] is None
    assert feed_all(b"*11\r\n", authenticated=False) == (
        [],
        "ERR Protocol error: unauthenticated multibulk length",
    )
    assert feed_all(b"PING\r\n*1\r\n$16385\r\n", authenticated=False) == (
        [[b"PING"]],
        "ERR Protocol error: unauthenticated bulk length",
    )
    # Invalid length wins over the unauthenticated check.
    assert feed_all(b"*1\r\n$536870913\r\n", authenticated=False)[1] == "ERR Protocol error: invalid bulk length"
    assert feed_all(b"*2147483648\r\n", authenticated=False)[1] == "ERR Protocol error: invalid multibulk length"


def test_authentication_switch() -> None:
    p = RequestParser(authenticated=False)
    assert p.feed(resp(b"AUTH", b"pw")) == ([[b"AUTH", b"pw"]], None)
    p.authenticated = True
    assert p.feed(resp(*[b"a"] * 11)) == ([[b"a"] * 11], None)


# --- query buffer limit ---------------------------------------------------------------------


def test_query_buffer_limit_closes_without_reply() -> None:
    p = RequestParser(query_buffer_limit=100_000)
    p.feed(resp(b"PING") + b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$200000\r\n")
    with pytest.raises(QueryBufferLimitExceeded) as info:
        for _ in range(20):
            p.feed(b"x" * 10_000)
    assert info.value.commands == []


def test_query_buffer_limit_keeps_commands_of_earlier_reads() -> None:
    p = RequestParser(query_buffer_limit=100_000)
    data = resp(b"PING") * 10 + b"*2\r\n$3\r\nGET\r\n$200000\r\n" + b"x" * 150_000
    with pytest.raises(QueryBufferLimitExceeded) as info:
        p.feed(data)
    assert info.value.commands == [[b"PING"]] * 10


def test_query_buffer_limit_allows_big_chunk_of_small_commands() -> None:
    p = RequestParser(query_buffer_limit=100_000)
    data = resp(b"SET", b"k", b"v" * 100) * 2000  # ~250 KB in one feed
    cmds, err = p.feed(data)
    assert err is None and len(cmds) == 2000


def test_unauthenticated_query_buffer_limit_is_1mb() -> None:
    # 7.4 closes an unauthenticated client whose query buffer passes 1 MB (7.0 does not).
    p = RequestParser(authenticated=False, max_inline=10**9)
    for _ in range(52):
        assert p.feed(b"x" * 20_000) == ([], None)
    with pytest.raises(QueryBufferLimitExceeded):
        p.feed(b"x" * 20_000)
    q = RequestParser(authenticated=True, max_inline=10**9)
    for _ in range(60):
        assert q.feed(b"x" * 20_000) == ([], None)


def test_queued_bytes_count_against_limit() -> None:
    p = RequestParser(query_buffer_limit=10_000)
    p.queued_bytes = 9_990
    with pytest.raises(QueryBufferLimitExceeded):
        p.feed(resp(b"PING") * 2)


# --- inline ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "args"),
    [
        (b"set a b", [b"set", b"a", b"b"]),
        (b"  set\t a   b  ", [b"set", b"a", b"b"]),
        (b"", []),
        (b"   ", []),
        (b'set a "hello world"', [b"set", b"a", b"hello world"]),
        (b'"\\n\\r\\t\\b\\a\\\\\\"\\q"', [b'\n\r\t\b\a\\"q']),
        (b'"\\x41\\x4a\\xff\\x00"', [b"AJ\xff\x00"]),
        (b'"\\xzz\\x4"', [b"xzzx4"]),
        (b"'it\\'s' '\\n'", [b"it's", b"\\n"]),
        (b'a"b c"d', None),
        (b'a"b c" d', [b"ab c", b"d"]),
        (b"x'y z'", [b"xy z"]),
        (b'"" \'\'', [b"", b""]),
        (b'"a"\x0b', [b"a"]),  # isspace() accepts a vertical tab after a quote
        (b"ECHO \x0bz\x0cq", [b"ECHO", b"z\x0cq"]),  # ...but it does not end a word
        (b"\x0bECHO\x0c  z", [b"ECHO\x0c", b"z"]),
        (b"a\rb", [b"a", b"b"]),
        (b'"a\rb"', [b"a\rb"]),
        (b'"unterminated', None),
        (b"'unterminated", None),
        (b'"ends with backslash\\', None),
    ],
)
def test_split_args(line: bytes, args: list[bytes] | None) -> None:
    assert split_args(line) == args


def test_inline_requests() -> None:
    data = b'SET k "v 1"\r\nGET k\nPING\r\n\r\n\n   \r\nECHO \'x\'\r\n'
    assert feed_all(data) == ([[b"SET", b"k", b"v 1"], [b"GET", b"k"], [b"PING"], [b"ECHO", b"x"]], None)


def test_inline_keeps_cr_inside_line() -> None:
    # Only a CR right before the LF belongs to the terminator.
    assert feed_all(b"ECHO a\r\r\n") == ([[b"ECHO", b"a"]], None)
    assert feed_all(b'ECHO "a\r"\r\n') == ([[b"ECHO", b"a\r"]], None)


def test_inline_and_multibulk_mixed() -> None:
    data = b"PING\r\n" + resp(b"ECHO", b"a") + b"ECHO b\r\n" + resp(b"ECHO", b"c") + b"~1\r\n+x\r\n"
    assert feed_all(data) == (
        [[b"PING"], [b"ECHO", b"a"], [b"ECHO", b"b"], [b"ECHO", b"c"], [b"~1"], [b"+x"]],
        None,
    )


# --- split invariance -----------------------------------------------------------------------

MIXED = (
    resp(b"SET", b"k", b"v")
    + b"PING\r\n"
    + b"*0\r\n"
    + resp(b"SET", b"bin", b"\r\n\x00*$" * 20)
    + b'SET q "a b\\x41" \'c\'\n'
    + b"\r\n"
    + resp(b"MSET", *[b"f%d" % i for i in range(30)])
    + b"*1\rX$4\r\nPING\rY"
    + resp(b"ECHO", b"z" * 300)
    + b"*2\r\n$4\r\nECHO\r\n$1\r\naXY"
)


def test_every_split_point_gives_same_result() -> None:
    expected = feed_all(MIXED)
    assert expected[1] is None and len(expected[0]) == 8
    for cut in range(1, len(MIXED)):
        p = RequestParser()
        a, ea = p.feed(MIXED[:cut])
        b, eb = p.feed(MIXED[cut:])
        assert (a + b, ea or eb) == expected, cut


def test_byte_by_byte_feeding() -> None:
    assert feed_all(MIXED, step=1) == feed_all(MIXED)
    bad = MIXED + resp(b"PING") + b"*1\r\n$x\r\n" + resp(b"PING")
    expected = feed_all(bad)
    assert expected[1] == "ERR Protocol error: invalid bulk length"
    assert feed_all(bad, step=1) == expected
    assert feed_all(bad, step=7) == expected


def test_read_ending_between_elements_whose_tail_looks_like_a_command() -> None:
    # A read ends between two elements of SET, after a value whose last bytes, with the CRLF,
    # have the size of the ECHO before it and start like it ("*2\r\n"): the commands must not be
    # taken as ending the read (the pure-Python build once ran "$1" and "v" instead of SET).
    echo = resp(b"ECHO", b"x")
    value = b"*2\r\n" + b"y" * 15
    head = echo + b"*3\r\n$3\r\nSET\r\n$19\r\n" + value + b"\r\n"
    assert head.endswith(b"*2\r\n" + b"y" * 15 + b"\r\n") and len(value) + 2 == len(echo)
    p = RequestParser()
    assert p.feed(head) == ([[b"ECHO", b"x"]], None)
    assert p.feed(b"$1\r\nv\r\n") == ([[b"SET", value, b"v"]], None)
    # The same with a malformed element instead: Redis's error at once, not a parser waiting.
    bad = resp(b"GETDEL") + b"*3\r\n$4\r\nECHO\r\n*2\r\n$1\r\na\r\n" + resp(b"DECRBY")
    assert feed_all(bad) == ([[b"GETDEL"]], "ERR Protocol error: expected '$', got '*'")


def test_random_splits_random_commands() -> None:
    rng = random.Random(1234)
    for _ in range(200):
        cmds = []
        for _ in range(rng.randint(1, 30)):
            args = [bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 3, 12, 100]))) for _ in range(rng.randint(1, 6))]
            cmds.append(args)
        data = b"".join(resp(*c) for c in cmds)
        p = RequestParser()
        got: list[list[bytes]] = []
        pos = 0
        while pos < len(data):
            step = rng.choice([1, 2, 5, 17, 100, 1000, 100000])
            out, err = p.feed(data[pos:pos + step])
            assert err is None
            got += out
            pos += step
        assert got == cmds


# --- fast path corner cases -------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        resp(b"PING") + b"*1\r\n+x\r\n",
        resp(b"PING") + b"*2\r\n$1\r\na\r\n(12\r\n",
        resp(b"PING") + b"*1\r\n=7\r\ntxt:abc\r\n",
        resp(b"PING") + b"*1\r\n,1.5\r\n",
        resp(b"PING") + b"*1\r\n#t\r\n",
        resp(b"PING") + b"*1\r\n_\r\n",
        resp(b"PING") + b"*1\r\n%1\r\n",
        resp(b"PING") + b"*1\r\n-ERR\r\n",
    ],
)
def test_non_bulk_elements_rejected(data: bytes) -> None:
    cmds, err = RequestParser().feed(data)
    assert cmds == [[b"PING"]]
    assert isinstance(err, ProtocolError)
    assert str(err).startswith("ERR Protocol error: expected '$', got '")


def test_resp3_top_level_types_are_inline() -> None:
    data = resp(b"PING") + b"~1\r\n$4\r\nPING\r\n>1\r\n" + resp(b"PING")
    assert feed_all(data) == ([[b"PING"], [b"~1"], [b"$4"], [b"PING"], [b">1"], [b"PING"]], None)


def test_resp3_set_after_unchecked_trailer_is_inline() -> None:
    # The two bytes after a payload are skipped unseen, so a "~" right after them starts an
    # inline command, whatever precedes it (here "%" instead of LF).
    data = resp(b"ECHO", b"a")[:-2] + b"\r%~1\r\n$4\r\nPING\r\n"
    assert feed_all(data) == ([[b"ECHO", b"a"], [b"~1"], [b"$4"], [b"PING"]], None)


def test_failed_parser_stays_failed() -> None:
    p = RequestParser()
    _, err = p.feed(b"*x\r\n")
    assert err is not None
    assert p.feed(resp(b"PING")) == ([], err)


def _strict_only(**limits: int) -> RequestParser:
    """The strict parser alone: the reference the fast paths must agree with."""
    return RequestParser(**limits, fast_path=None)


def test_fast_path_agrees_with_strict_parser_on_garbage() -> None:
    rng = random.Random(99)
    pieces = [b"*", b"$", b"\r\n", b"\r", b"\n", b"+x\r\n", b":1\r\n", b"~1\r\n", b"=5\r\ntxt:a\r\n",
              b"0", b"1", b"-1", b"12", b'"', b"'", b" ", b"\\", b"\x00", b"PING", b"*0\r\n",
              b"*-1\r\n", b"$-1\r\n", b"(1\r\n", b"%1\r\n", b">1\r\n"]

    def run(cls: Callable[..., RequestParser], data: bytes, steps: list[int]) -> tuple[list[list[bytes]], bytes | None]:
        p = cls(max_bulk_len=2000, max_inline=300)
        got: list[list[bytes]] = []
        pos = 0
        for step in steps:
            out, err = p.feed(data[pos:pos + step])
            got += out
            pos += step
            if err is not None:
                return got, err.reply
        return got, None

    for _ in range(1500):
        parts = []
        for _ in range(rng.randint(1, 8)):
            r = rng.random()
            if r < 0.5:
                parts.append(resp(*[bytes(rng.choice(b"ab*$\r\n+:") for _ in range(rng.choice([0, 1, 2, 5, 40])))
                                    for _ in range(rng.randint(1, 4))]))
            elif r < 0.6:
                parts.append(b'ECHO "a b" c\r\n')
            else:
                parts.append(b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))))
        data = b"".join(parts)
        steps = []
        left = len(data)
        while left > 0:
            steps.append(rng.choice([1, 3, 10, 50, 10**6]))
            left -= steps[-1]
        assert run(RequestParser, data, steps) == run(_strict_only, data, [len(data)]), data


def test_simple_strings_offset_by_verbatim_strings_are_refused() -> None:
    # hiredis reads '+a' (3 bytes shorter than "$1\r\na\r\n") and '=5\r\ntxt:b' (4 bytes longer)
    # as plain bulks: four of one and three of the other give a chunk exactly the size of the
    # canonical encoding of what hiredis returns. Redis stops at the first '+'.
    data = b"*7\r\n" + b"+a\r\n" * 4 + b"=5\r\ntxt:b\r\n" * 3
    assert len(data) == len(resp(*[b"a"] * 4, *[b"b"] * 3))
    cmds, err = RequestParser().feed(data)
    assert cmds == []
    assert str(err) == "ERR Protocol error: expected '$', got '+'"


def test_single_command_with_plus_and_equals_bulks() -> None:
    # '+' and '=' as bulk contents (XRANGE s - +, XADD s MAXLEN = 5 ...) are ordinary arguments.
    for argv in ([b"XRANGE", b"s", b"-", b"+"], [b"XADD", b"s", b"MAXLEN", b"=", b"5", b"*", b"f", b"=v"]):
        assert RequestParser().feed(resp(*argv)) == ([argv], None)


def test_odd_but_valid_commands_between_canonical_ones() -> None:
    # Redis never looks at the two bytes after a bulk nor at the byte after a header's CR: such
    # commands, amid canonical ones in one read, parse as they do in Redis, and so does the rest.
    data = (resp(b"PING") + b"*2\r\n$4\r\nECHO\r\n$2\r\nhiXY" + b"*1\rX$4\r\nPING\r\n"
            + resp(b"GET", b"k") + b"*1\r\n$004\r\nPING\r\n")
    expected = [[b"PING"], [b"ECHO", b"hi"], [b"PING"], [b"GET", b"k"]]
    cmds, err = RequestParser().feed(data)
    assert (cmds, str(err)) == (expected, "ERR Protocol error: invalid bulk length")
    strict_cmds, strict_err = _strict_only().feed(data)
    assert strict_err is not None and err is not None
    assert (strict_cmds, strict_err.reply) == (cmds, err.reply)


def test_received_spans_are_the_bytes_of_their_commands() -> None:
    """What the scan reports as received (protocol.parser.Received) is, for any run of the
    commands it took, exactly their canonical encoding; commands that came another way (the
    strict parser: inline commands, odd forms, a command cut by the end of a read) are never
    reported. With the hiredis fast path nothing is reported at all."""
    rng = random.Random(11)
    reported = 0
    for _ in range(300):
        pieces: list[bytes] = []
        for _ in range(rng.randint(1, 12)):
            form = rng.random()
            argv = [rng.choice([b"XADD", b"xadd", b"SET", b"LPUSH"])]
            argv += [b"k" * rng.choice([1, 9, 10, 100, 1024]) for _ in range(rng.randint(0, 5))]
            if form < 0.1:
                pieces.append(b" ".join(argv) + b"\r\n")  # inline
            elif form < 0.15:
                pieces.append(b"*0\r\n")  # dropped, as Redis drops it
            elif form < 0.2:
                pieces.append(resp(*argv)[:-2] + b"XY")  # terminator bytes Redis never checks
            else:
                pieces.append(resp(*argv))
        data = b"".join(pieces)
        parser = RequestParser()
        cut = rng.randint(0, len(data))
        for chunk in (data[:cut], data[cut:]):
            commands, error = parser.feed(chunk)
            assert error is None
            received = parser.received
            for i in range(len(commands)):
                for count in range(1, len(commands) - i + 1):
                    span = received.span(commands, i, count)
                    if span is not None:
                        reported += 1
                        assert span == b"".join(resp(*argv) for argv in commands[i:i + count])
                        assert received.start([list(c) for c in commands], i, count) == -1
            received.clear()
            assert received.span(commands, 0, 1) is None
    assert (reported > 0) == (protocol.parser.FAST_PATH == "scan")
