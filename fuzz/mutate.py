"""Byte-level mutations of RESP requests: what a broken or hostile client can send.

Each mutation takes well-formed requests (from fuzz.generate) and damages them the ways that
matter to a RESP parser: flipped bits, cut-off or spliced requests, counts and lengths that are
huge, negative, non-decimal or lying, nested aggregates, inline commands, and the RESP3 types
(simple strings, maps, sets, pushes, attributes, big numbers...) a server must refuse in a
request. One input usually gets one to three of them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

_LENGTH = re.compile(rb"[*$](-?\d+)\r\n")
HEADER_NUMBERS = [b"-1", b"-2", b"0", b"1", b"2147483647", b"2147483648", b"4294967296",
                  b"9223372036854775807", b"9223372036854775808", b"99999999999999999999",
                  b"536870912", b"536870913", b"1048577", b"+1", b" 1", b"1 ", b"01", b"0x10",
                  b"", b"-0", b"1\x00", b"18446744073709551616"]
RESP3_ELEMENTS = [b"+OK\r\n", b"-ERR x\r\n", b":1\r\n", b"_\r\n", b"#t\r\n", b",1.5\r\n", b"(12345\r\n",
                  b"=5\r\ntxt:x\r\n", b"!3\r\nerr\r\n", b"%1\r\n$1\r\na\r\n$1\r\nb\r\n",
                  b"~1\r\n$1\r\na\r\n", b">1\r\n$1\r\na\r\n", b"|1\r\n+a\r\n+b\r\n", b"*-1\r\n",
                  b"$-1\r\n", b"*0\r\n", b"*1\r\n*1\r\n$4\r\nPING\r\n"]
INLINE = [b"PING\r\n", b"PING\n", b"SET a b\r\n", b'SET "a b" "c\\x41\\n"\r\n', b"GET 'a\r\n",
          b'"unbalanced\r\n', b"   \r\n", b"\r\n", b"\n", b"ECHO 'it''s'\r\n", b"XADD s * f v\r\n",
          b'ECHO "\\xZZ"\r\n', b"ECHO a\x00b\r\n"]
# Past the 64 KB an inline request may have: rarely, it costs a big copy per input.
HUGE_INLINE = b"ECHO " + b"x" * 70000 + b"\r\n"


def flip_bits(data: bytes, rnd: random.Random) -> bytes:
    if not data:
        return data
    buf = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        i = rnd.randrange(len(buf))
        buf[i] ^= 1 << rnd.randrange(8)
    return bytes(buf)


def set_bytes(data: bytes, rnd: random.Random) -> bytes:
    """Overwrite a few bytes with the ones the parser branches on."""
    if not data:
        return data
    buf = bytearray(data)
    for _ in range(rnd.randint(1, 3)):
        buf[rnd.randrange(len(buf))] = rnd.choice(b"*$\r\n+-:%~>|#,(=!_0-9 \x00\xff\"'\\")
    return bytes(buf)


def truncate(data: bytes, rnd: random.Random) -> bytes:
    return data[:rnd.randrange(len(data) + 1)]


def drop_slice(data: bytes, rnd: random.Random) -> bytes:
    if len(data) < 2:
        return data
    i = rnd.randrange(len(data))
    return data[:i] + data[i + rnd.randint(1, 8):]


def duplicate_slice(data: bytes, rnd: random.Random) -> bytes:
    if not data:
        return data
    i = rnd.randrange(len(data))
    j = min(len(data), i + rnd.randint(1, 32))
    return data[:j] + data[i:j] * rnd.randint(1, 3) + data[j:]


def splice(data: bytes, rnd: random.Random, other: bytes = b"") -> bytes:
    """The head of one request glued to the tail of another, at arbitrary points."""
    other = other or data
    return data[:rnd.randrange(len(data) + 1)] + other[rnd.randrange(len(other) + 1):]


def lie_about_length(data: bytes, rnd: random.Random) -> bytes:
    """Replace one *N or $N count with a huge, negative, empty or non-decimal one."""
    matches = list(_LENGTH.finditer(data))
    if not matches:
        return data
    m = rnd.choice(matches)
    if rnd.random() < 0.4:
        new = str(int(m.group(1)) + rnd.choice((-2, -1, 1, 2, 100))).encode()
    else:
        new = rnd.choice(HEADER_NUMBERS)
    return data[:m.start(1)] + new + data[m.end(1):]


def insert_resp3(data: bytes, rnd: random.Random) -> bytes:
    """A RESP3 (or nested RESP2) element where a request has its bulk strings."""
    positions = [m.start() for m in re.finditer(rb"\$", data)] or [0]
    i = rnd.choice(positions)
    return data[:i] + rnd.choice(RESP3_ELEMENTS) + data[i:]


def nest(data: bytes, rnd: random.Random) -> bytes:
    """Aggregates inside aggregates, which requests never have."""
    depth = rnd.randint(1, 50)
    return b"*1\r\n" * depth + data


def inline(data: bytes, rnd: random.Random) -> bytes:
    """An inline command before, inside or after the multibulk ones."""
    i = rnd.randrange(len(data) + 1)
    line = HUGE_INLINE if rnd.random() < 0.01 else rnd.choice(INLINE)
    return data[:i] + line + data[i:]


def bad_terminator(data: bytes, rnd: random.Random) -> bytes:
    """A CRLF made LF, CR, or two other bytes."""
    ends = [m.start() for m in re.finditer(rb"\r\n", data)]
    if not ends:
        return data
    i = rnd.choice(ends)
    return data[:i] + rnd.choice((b"\n", b"\r", b"xx", b"\r\r\n", b"\n\r", b"")) + data[i + 2:]


MUTATIONS: list[Callable[[bytes, random.Random], bytes]] = [
    flip_bits, set_bytes, truncate, drop_slice, duplicate_slice, splice, lie_about_length,
    lie_about_length, insert_resp3, nest, inline, bad_terminator,
]


def mutate(data: bytes, rnd: random.Random, corpus: list[bytes] | None = None) -> bytes:
    """One to three mutations of data; splicing takes its second half from the corpus."""
    for _ in range(rnd.choice((1, 1, 1, 2, 3))):
        fn = rnd.choice(MUTATIONS)
        if fn is splice and corpus:
            data = splice(data, rnd, rnd.choice(corpus))
        else:
            data = fn(data, rnd)
    return data


def chunks(data: bytes, rnd: random.Random) -> list[bytes]:
    """data cut into the reads a socket could deliver: whole, per byte, or at random points."""
    roll = rnd.random()
    if roll < 0.5 or len(data) < 2:
        return [data]
    if roll < 0.53 and len(data) < 200:
        return [data[i:i + 1] for i in range(len(data))]
    cuts = sorted(rnd.sample(range(1, len(data)), min(len(data) - 1, rnd.randint(1, 6))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
