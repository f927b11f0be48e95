"""Encode typed reply values (see protocol.reply) into RESP2 or RESP3 bytes."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any, Final

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
# Final: compiled, a Final module name is a C static, any other global a dict lookup per use.
_INT_CACHE: Final = [b":%d\r\n" % i for i in range(10000)]
_BULK_HDR_CACHE: Final = [b"$%d\r\n" % i for i in range(1024)]
_ARR_HDR_CACHE: Final = [b"*%d\r\n" % i for i in range(1024)]
BULK_HDR_CACHE: Final = _BULK_HDR_CACHE
ARR_HDR_CACHE: Final = _ARR_HDR_CACHE
# The reply classes of the (uncompiled) protocol.reply that write_reply tests first.
_SIMPLE_STRING: Final = SimpleString
_RAW: Final = Raw
# Status replies come from a small set (OK, PONG, QUEUED, type names...): each line is built once.
_SIMPLE_LINES: Final[dict[bytes, bytes]] = {}


_LLONG_HALF = float((2**63 - 1) // 2)  # double2ll's bound: integers within it print as integers


def format_double(value: float) -> bytes:
    """Redis 7.4's d2string: integral values within +-2**62 as integers, others as fpconv_dtoa
    writes them (Grisu2's round-trip digits; plain decimals for moderate exponents, d.ddde+X
    otherwise), and nan / inf / -inf / -0 spelled as Redis does."""
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


# --- Grisu2, as Redis 7.4's fpconv_dtoa prints a double -------------------------------------------
#
# Grisu2 finds round-trip digits with 64-bit arithmetic; unlike repr they are not always the
# shortest or closest (about 1 double in 400 prints differently: 820833909252165.7 where repr
# says 820833909252165.8), so the algorithm itself is followed. The C code's uint64 arithmetic
# is reproduced with explicit masks.

_U64 = (1 << 64) - 1
_FRAC_MASK = (1 << 52) - 1
_HIDDEN = 1 << 52
_EXP_BIAS = 1023 + 52
_FIRST_POWER = -348
_POWER_STEP = 8


def _cached_power(k: int) -> tuple[int, int]:
    """10**k as a 64-bit significand (top bit set), rounded to nearest, and a binary exponent."""
    n, d = (10**k, 1) if k >= 0 else (1, 10**-k)
    e = n.bit_length() - d.bit_length() - 64
    while True:
        num, den = (n, d << e) if e >= 0 else (n << -e, d)
        q, r = divmod(num, den)
        if q >> 64:
            e += 1
        elif not q >> 63:
            e -= 1
        else:
            if 2 * r >= den:
                q += 1
            if q >> 64:
                q >>= 1
                e += 1
            return q, e


_POWERS = [_cached_power(_FIRST_POWER + i * _POWER_STEP) for i in range(87)]
_TENS = [10**i for i in range(19, -1, -1)]


def _grisu2(d: float) -> tuple[str, int]:
    """The digits Grisu2 generates for a positive finite double, and K (value = digits * 10**K)."""
    bits = struct.unpack("<Q", struct.pack("<d", d))[0]
    frac = bits & _FRAC_MASK
    exp = (bits >> 52) & 0x7FF
    if exp:
        frac += _HIDDEN
        exp -= _EXP_BIAS
    else:
        exp = -_EXP_BIAS + 1
    # boundaries
    up_frac = (frac << 1) + 1
    up_exp = exp - 1
    while not up_frac & (_HIDDEN << 1):
        up_frac <<= 1
        up_exp -= 1
    up_frac <<= 64 - 52 - 2
    up_exp -= 64 - 52 - 2
    l_shift = 2 if frac == _HIDDEN else 1
    lo_frac = (frac << l_shift) - 1
    lo_exp = exp - l_shift
    lo_frac = (lo_frac << (lo_exp - up_exp)) & _U64
    # normalize w
    while not frac & _HIDDEN:
        frac <<= 1
        exp -= 1
    frac <<= 64 - 52 - 1
    exp -= 64 - 52 - 1
    # the cached power that brings the upper boundary's exponent into [-60, -32]
    approx = int(-(up_exp + 87) * 0.30102999566398114)
    idx = int((approx - _FIRST_POWER) / _POWER_STEP)
    while True:
        current = up_exp + _POWERS[idx][1] + 64
        if current < -60:
            idx += 1
        elif current > -32:
            idx -= 1
        else:
            break
    cp_frac, cp_exp = _POWERS[idx]
    k = _FIRST_POWER + idx * _POWER_STEP
    half = 1 << 63
    w_frac = (frac * cp_frac + half) >> 64
    up_frac = (up_frac * cp_frac + half) >> 64
    up_exp = up_exp + cp_exp + 64
    lo_frac = ((lo_frac * cp_frac + half) >> 64) + 1
    up_frac -= 1
    big_k = -k
    # generate digits
    wfrac = (up_frac - w_frac) & _U64
    delta = (up_frac - lo_frac) & _U64
    shift = -up_exp
    one = 1 << shift
    part1 = up_frac >> shift
    part2 = up_frac & (one - 1)
    digits: list[int] = []
    kappa = 10
    i = 10
    while kappa > 0:
        div = _TENS[i]
        i += 1
        digit = part1 // div
        if digit or digits:
            digits.append(digit)
        part1 -= digit * div
        kappa -= 1
        tmp = ((part1 << shift) + part2) & _U64
        if tmp <= delta:
            big_k += kappa
            _round_digit(digits, delta, tmp, (div << shift) & _U64, wfrac)
            return "".join(map(str, digits)), big_k
    unit = 18
    while True:
        part2 = (part2 * 10) & _U64
        delta = (delta * 10) & _U64
        kappa -= 1
        digit = part2 >> shift
        if digit or digits:
            digits.append(digit)
        part2 &= one - 1
        if part2 < delta:
            big_k += kappa
            _round_digit(digits, delta, part2, one, (wfrac * _TENS[unit]) & _U64)
            return "".join(map(str, digits)), big_k
        unit -= 1


def _round_digit(digits: list[int], delta: int, rem: int, kappa: int, frac: int) -> None:
    while (rem < frac and ((delta - rem) & _U64) >= kappa
           and (((rem + kappa) & _U64) < frac
                or ((frac - rem) & _U64) > ((rem + kappa - frac) & _U64))):
        digits[-1] -= 1
        rem = (rem + kappa) & _U64


def _dtoa(value: float) -> bytes:
    """fpconv_dtoa: Grisu2's digits laid out as its emit_digits does."""
    digits, k = _grisu2(abs(value))
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
    # The commonest replies first, as direct calls: through the table, each is a dict lookup
    # and a call with Python argument parsing.
    cls = type(value)
    if cls is bytes:
        _bulk(out, value, resp3)
        return
    if cls is int:
        _int(out, value, resp3)
        return
    if cls is _SIMPLE_STRING:
        _simple(out, value, resp3)
        return
    if value is None:
        out.append(b"_\r\n" if resp3 else b"$-1\r\n")
        return
    if cls is list:
        _array(out, value, resp3)
        return
    if cls is _RAW:
        out.append(value)
        return
    writer = _WRITERS.get(cls)
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
    line = _SIMPLE_LINES.get(value)
    if line is None:
        line = b"+" + bytes(value) + b"\r\n"
        if len(_SIMPLE_LINES) < 256:
            _SIMPLE_LINES[bytes(value)] = line
    out.append(line)


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


_WRITERS: Final[dict[type, Callable[[list[bytes], Any, bool], None]]] = {
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
