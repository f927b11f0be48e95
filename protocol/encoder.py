"""Encode typed reply values (see protocol.reply) into RESP2 or RESP3 bytes."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from protocol.reply import (
    NULL_ARRAY,
    ErrorReply,
    Push,
    Raw,
    SetReply,
    SimpleString,
    Verbatim,
    _NullArray,
)

# Small integers and bulk headers are so common in replies that caching their encodings pays.
_INT_CACHE = [b":%d\r\n" % i for i in range(10000)]
_BULK_HDR_CACHE = BULK_HDR_CACHE = [b"$%d\r\n" % i for i in range(1024)]
_ARR_HDR_CACHE = ARR_HDR_CACHE = [b"*%d\r\n" % i for i in range(1024)]


_LLONG_HALF = float((2**63 - 1) // 2)  # double2ll's bound: integers within it print as integers


def format_double(value: float) -> bytes:
    """Redis 7.4's d2string: integral values within +-2**62 as integers, others as the shortest
    digits that read back as the same double (fpconv_dtoa's layout: plain decimals for moderate
    exponents, d.ddde+XX otherwise), and nan / inf / -inf / -0 spelled as Redis does."""
    if value != value:
        return b"nan"
    if value == 0:
        return b"-0" if math.copysign(1.0, value) < 0 else b"0"
    if -_LLONG_HALF <= value <= _LLONG_HALF:
        if value == int(value):
            return b"%d" % int(value)
    elif math.isinf(value):
        return b"inf" if value > 0 else b"-inf"
    return _dtoa(value)


def _dtoa(value: float) -> bytes:
    # repr gives the shortest round-trip digits; they are laid out as fpconv's emit_digits does.
    text = repr(value)
    if "e" not in text:
        # A plain decimal: fpconv writes it alike when it has at most 6 decimals, or when the
        # number is at least 1 and below 10**4.
        dot = text.index(".")
        if len(text) - dot <= 7 or (value >= 1 and dot < 5) or (value <= -1 and dot < 6):
            return text.encode()
    text = repr(abs(value))
    mantissa, _, exp_text = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    k = (int(exp_text) if exp_text else 0) - len(frac)
    stripped = digits.rstrip("0")
    k += len(digits) - len(stripped)
    digits = stripped
    nd = len(digits)
    exp = abs(k + nd - 1)
    if k >= 0 and exp < nd + 7:
        out = digits + "0" * k
    elif k < 0 and (k > -7 or exp < 4):
        offset = nd + k
        if offset <= 0:
            out = "0." + "0" * -offset + digits
        else:
            out = digits[:offset] + "." + digits[offset:]
    else:
        out = digits[0] + ("." + digits[1:] if nd > 1 else "")
        e = k + nd - 1
        out += "e" + ("-" if e < 0 else "+") + str(abs(e))
    if value < 0:
        out = "-" + out
    return out.encode()


def encode(value: Any, resp3: bool) -> bytes:
    """Encode one reply value."""
    out: list[bytes] = []
    write_reply(out, value, resp3)
    return b"".join(out)


def write_reply(out: list[bytes], value: Any, resp3: bool) -> None:
    """Append the encoding of `value` to `out` (a list joined by the connection in one write)."""
    writer = _WRITERS.get(type(value))
    if writer is None:
        writer = _writer_for_subclass(value)
    writer(out, value, resp3)


def _bulk(out: list[bytes], value: bytes, resp3: bool) -> None:
    n = len(value)
    out.append(_BULK_HDR_CACHE[n] if n < 1024 else b"$%d\r\n" % n)
    out.append(value)
    out.append(b"\r\n")


def _str(out: list[bytes], value: str, resp3: bool) -> None:
    _bulk(out, value.encode(), resp3)


def _int(out: list[bytes], value: int, resp3: bool) -> None:
    out.append(_INT_CACHE[value] if 0 <= value < 10000 else b":%d\r\n" % value)


def _bool(out: list[bytes], value: bool, resp3: bool) -> None:
    if resp3:
        out.append(b"#t\r\n" if value else b"#f\r\n")
    else:
        out.append(b":1\r\n" if value else b":0\r\n")


def _none(out: list[bytes], value: None, resp3: bool) -> None:
    out.append(b"_\r\n" if resp3 else b"$-1\r\n")


def _null_array(out: list[bytes], value: _NullArray, resp3: bool) -> None:
    out.append(b"_\r\n" if resp3 else b"*-1\r\n")


def _array(out: list[bytes], value: list | tuple, resp3: bool) -> None:
    n = len(value)
    out.append(_ARR_HDR_CACHE[n] if n < 1024 else b"*%d\r\n" % n)
    writers = _WRITERS
    for item in value:
        # Inline the common bulk case: arrays of bulk strings dominate stream replies.
        if type(item) is bytes:
            m = len(item)
            out.append(_BULK_HDR_CACHE[m] if m < 1024 else b"$%d\r\n" % m)
            out.append(item)
            out.append(b"\r\n")
        else:
            writer = writers.get(type(item))
            if writer is None:
                writer = _writer_for_subclass(item)
            writer(out, item, resp3)


def _set(out: list[bytes], value: SetReply, resp3: bool) -> None:
    if resp3:
        out.append(b"~%d\r\n" % len(value))
        for item in value:
            write_reply(out, item, resp3)
    else:
        _array(out, value, resp3)


def _push(out: list[bytes], value: Push, resp3: bool) -> None:
    if resp3:
        out.append(b">%d\r\n" % len(value))
        for item in value:
            write_reply(out, item, resp3)
    else:
        _array(out, value, resp3)


def _map(out: list[bytes], value: dict, resp3: bool) -> None:
    out.append(b"%%%d\r\n" % len(value) if resp3 else b"*%d\r\n" % (2 * len(value)))
    for key, item in value.items():
        write_reply(out, key, resp3)
        write_reply(out, item, resp3)


def _double(out: list[bytes], value: float, resp3: bool) -> None:
    text = format_double(value)
    if resp3:
        out.append(b"," + text + b"\r\n")
    else:
        _bulk(out, text, resp3)


def _simple(out: list[bytes], value: SimpleString, resp3: bool) -> None:
    out.append(b"+" + bytes(value) + b"\r\n")


def _error(out: list[bytes], value: ErrorReply, resp3: bool) -> None:
    # Redis never lets a newline into an error line: it would desynchronise the client.
    text = value.message.replace("\r", " ").replace("\n", " ")
    out.append(b"-" + text.encode("utf-8", "surrogateescape") + b"\r\n")


def _verbatim(out: list[bytes], value: Verbatim, resp3: bool) -> None:
    if resp3:
        body = value.fmt + b":" + value.text
        out.append(b"=%d\r\n" % len(body))
        out.append(body)
        out.append(b"\r\n")
    else:
        _bulk(out, value.text, resp3)


def _raw(out: list[bytes], value: Raw, resp3: bool) -> None:
    out.append(value)  # a bytes subclass: join() and transport.write() take it as it is


_WRITERS: dict[type, Callable[[list[bytes], Any, bool], None]] = {
    bytes: _bulk,
    bytearray: _bulk,
    memoryview: lambda out, v, r: _bulk(out, bytes(v), r),
    str: _str,
    int: _int,
    bool: _bool,
    type(None): _none,
    _NullArray: _null_array,
    list: _array,
    tuple: _array,
    dict: _map,
    float: _double,
    SimpleString: _simple,
    SetReply: _set,
    Push: _push,
    Verbatim: _verbatim,
    Raw: _raw,
}

# Order matters: the most specific classes first (SimpleString and Raw are bytes subclasses).
_SUBCLASS_ORDER: tuple[tuple[type, Callable[[list[bytes], Any, bool], None]], ...] = (
    (ErrorReply, _error),
    (SimpleString, _simple),
    (Raw, _raw),
    (SetReply, _set),
    (Push, _push),
    (dict, _map),
    (bytes, _bulk),
    (list, _array),
    (tuple, _array),
    (bool, _bool),
    (int, _int),
)


def _writer_for_subclass(value: Any) -> Callable[[list[bytes], Any, bool], None]:
    for cls, writer in _SUBCLASS_ORDER:
        if isinstance(value, cls):
            _WRITERS[type(value)] = writer
            return writer
    raise TypeError(f"no RESP encoding for {type(value).__name__}")


__all__ = ["encode", "write_reply", "format_double", "NULL_ARRAY"]
