"""Redis's long double numbers: what strtold reads, exact rounding to the x87 format, and printing.

Redis parses INCRBYFLOAT's and HINCRBYFLOAT's operands and the blocking commands' timeouts in
seconds with strtold, and prints INCRBYFLOAT's results with "%.17Lf".
"""

from __future__ import annotations

import re
from fractions import Fraction

from protocol.numbers import plain_decimal
from protocol.reply import ErrorReply

NOT_FLOAT = ErrorReply("ERR value is not a valid float")

# INCRBYFLOAT (and HINCRBYFLOAT, and the seconds of blocking timeouts) compute in C's long double, which on x86-64 (where Redis runs and is tested) is the
# 80-bit extended format: 64-bit significand, exponents down to 2**-16445 (subnormal). Python has no
# such type, so values are exact Fractions rounded to that format after every operation; the result
# is then printed like printf("%.17Lf") with trailing zeros dropped. A double would print
# 0.1 + 0.2 as 0.30000000000000004 where Redis prints 0.3.

_LD_MANT_BITS = 64
_LD_MIN_LSB = -16445  # exponent of the least significant bit of the smallest subnormal
_LD_MAX = Fraction((1 << 64) - 1) * (Fraction(2) ** (16383 - 63))
_MAX_LD_CHARS = 5 * 1024  # MAX_LONG_DOUBLE_CHARS: longer arguments are not numbers for Redis
_DEC_RE = re.compile(rb"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\Z")
_HEX_RE = re.compile(rb"([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?\Z")
_INF_RE = re.compile(rb"([+-]?)(?:inf|infinity)\Z", re.IGNORECASE)

INF = float("inf")


def _decimal_to_int(digits: bytes) -> int:
    # int() refuses more than 4300 digits (CVE-2020-10735 guard); numbers here reach ~5000.
    value = 0
    for i in range(0, len(digits), 4000):
        chunk = digits[i : i + 4000]
        value = value * 10 ** len(chunk) + int(chunk)
    return value


def _int_to_decimal(n: int) -> str:
    if n < 10**4000:
        return str(n)
    high, low = divmod(n, 10**4000)
    return _int_to_decimal(high) + str(low).rjust(4000, "0")


def _round_half_even(q: Fraction) -> int:
    n, rem = divmod(q.numerator, q.denominator)
    twice = 2 * rem
    if twice > q.denominator or (twice == q.denominator and n % 2 == 1):
        n += 1
    return n


def round_long_double(q: Fraction) -> Fraction | float:
    """q rounded to the nearest x87 extended value (ties to even); +-inf when it overflows."""
    if q == 0:
        return Fraction(0)
    sign = -1 if q < 0 else 1
    a = abs(q)
    exp = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** exp > a:  # make 2**exp <= a < 2**(exp+1)
        exp -= 1
    lsb = max(exp - (_LD_MANT_BITS - 1), _LD_MIN_LSB)
    scale = Fraction(2) ** lsb
    rounded = _round_half_even(a / scale) * scale
    if rounded > _LD_MAX:
        return sign * INF
    return sign * rounded


def parse_long_double(arg: bytes, error: ErrorReply = NOT_FLOAT) -> Fraction | float:
    """Redis's string2ld: what strtold reads, with no spaces, nothing left over, no NaN and no
    overflow or underflow to zero. Raises `error` (ERR value is not a valid float) otherwise.

    Exact: the value is a Fraction (or +-inf), rounded to the long double format."""
    if not arg or len(arg) >= _MAX_LD_CHARS:
        raise error
    m = _INF_RE.match(arg)
    if m:
        return -INF if m.group(1) == b"-" else INF
    m = _HEX_RE.match(arg)
    if m:
        sign, whole, frac, exp_text = m.groups()
        frac = frac or b""
        digits = (whole + frac).lstrip(b"0")
        if not whole and not frac:
            raise error
        exp2 = int(exp_text or b"0") - 4 * len(frac)
        if not digits:
            return Fraction(0)
        # Outside these bounds the value is certainly infinite or zero: skip huge exponents.
        top = exp2 + 4 * len(digits)
        if top > 16400 or top < _LD_MIN_LSB - 2:
            raise error
        value = Fraction(int(digits, 16)) * Fraction(2) ** exp2
    else:
        m = _DEC_RE.match(arg)
        if not m:
            raise error
        sign, whole, frac, exp_text = m.groups()
        frac = frac or b""
        if not whole and not frac:
            raise error
        digits = (whole + frac).lstrip(b"0")
        if not digits:
            return Fraction(0)
        exp10 = int(exp_text or b"0") - len(frac)
        top = exp10 + len(digits)  # value < 10**top
        if top > 4934 or top < -4952:
            raise error
        value = Fraction(_decimal_to_int(digits)) * Fraction(10) ** exp10
    if sign == b"-":
        value = -value
    result = round_long_double(value)
    if result == 0 or result in (INF, -INF):
        raise error
    return result


def format_long_double(value: Fraction) -> bytes:
    """printf("%.17Lf") of an exact value, then trailing zeros (and a bare '.') dropped."""
    scaled = _round_half_even(abs(value) * 10**17)
    whole, frac = divmod(scaled, 10**17)
    text = f"{_int_to_decimal(whole)}.{frac:017d}".rstrip("0").rstrip(".")
    if value < 0:
        text = "-" + text
    return b"0" if text == "-0" else text.encode()


# --- doubles: C's strtod, as Redis reads sorted-set scores and ranges ----------------------------
#
# Python's float() is correctly rounded like glibc's strtod, but accepts other syntax (spaces
# around the number, underscores) and no hexadecimal: the text strtod would consume is found with
# these patterns first and only that text is converted.

_STRTOD_SPACE = b" \t\n\v\f\r"
_STRTOD_HEX = re.compile(
    rb"([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)")
_STRTOD_DEC = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_STRTOD_INF_NAN = re.compile(rb"([+-]?)(?:(inf(?:inity)?)|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)
_NONZERO_DIGIT = re.compile(rb"[1-9]")


def strtod(text: bytes, start: int = 0) -> tuple[float, int, bool]:
    """C's strtod on text[start:]: (value, end index of what was read, whether it overflowed or
    underflowed to zero: ERANGE with a result of +-HUGE_VAL or 0). Nothing read: (0.0, start, False).
    """
    i = start
    n = len(text)
    while i < n and text[i] in _STRTOD_SPACE:
        i += 1
    m = _STRTOD_HEX.match(text, i)
    if m is not None:
        body = m.group(2)
        try:
            value = float.fromhex(body.decode())
        except OverflowError:
            value = INF
            erange = True
        else:
            erange = value == 0.0 and _has_nonzero_hex(body)
        return (-value if m.group(1) == b"-" else value), m.end(), erange
    m = _STRTOD_DEC.match(text, i)
    if m is not None:
        literal = m.group()
        value = float(literal)
        erange = (value in (INF, -INF)
                  or (value == 0.0 and _NONZERO_DIGIT.search(literal.partition(b"e")[0]
                                                            .partition(b"E")[0]) is not None))
        return value, m.end(), erange
    m = _STRTOD_INF_NAN.match(text, i)
    if m is not None:
        negative = m.group(1) == b"-"
        if m.group(2) is not None:
            return (-INF if negative else INF), m.end(), False
        return float("nan"), m.end(), False
    return 0.0, start, False


def _has_nonzero_hex(body: bytes) -> bool:
    mantissa = re.split(rb"[pP]", body)[0]
    return any(c not in b"0." for c in mantissa)


def parse_double(arg: bytes, error: ErrorReply = NOT_FLOAT) -> float:
    """Redis's string2d (ZADD's scores, WEIGHTS): all of the argument read by strtod, no leading
    space, no NaN, no overflow, no underflow to zero. Raises `error` otherwise."""
    plain = plain_decimal(arg)
    if plain is not None:
        return plain
    if not arg or arg[0] in _STRTOD_SPACE:
        raise error
    value, end, erange = strtod(arg)
    if end != len(arg) or value != value or (erange and (value == 0.0 or value in (INF, -INF))):
        raise error
    return value


def parse_c_double(arg: bytes) -> float | None:
    """strtod over a C string (up to its first NUL) that must be read to its end, NaN refused:
    how Redis reads score range bounds (leading spaces and an empty string, 0, are accepted, and
    an overflow is an infinity). None when it is not such a number."""
    nul = arg.find(b"\0")
    if nul >= 0:
        arg = arg[:nul]
    value, end, _erange = strtod(arg)
    if end != len(arg) or value != value:
        return None
    return value
