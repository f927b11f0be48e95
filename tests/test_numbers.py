"""Redis's integer syntax (protocol/numbers.string2ll): short arguments take a digit loop, long
ones the general path; both must accept exactly what util.c's string2ll accepts."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from protocol.numbers import string2ll

_SYNTAX = re.compile(rb"-?[1-9][0-9]*|0")


def _model(s: bytes) -> int | None:
    """string2ll as Redis documents it: '-'?, digits without a leading zero (or "0"), 64 bits."""
    if not _SYNTAX.fullmatch(s):
        return None
    v = int(s)
    return v if -(2**63) <= v < 2**63 else None


def test_edges_of_both_paths() -> None:
    for s, want in [(b"0", 0), (b"7", 7), (b"-7", -7), (b"10", 10), (b"9" * 18, int(b"9" * 18)),
                    (b"-" + b"9" * 17, -int(b"9" * 17)), (b"1" + b"0" * 18, 10**18),
                    (b"9223372036854775807", 2**63 - 1), (b"-9223372036854775808", -(2**63))]:
        assert string2ll(s) == want, s
    for s in (b"", b"-", b"-0", b"00", b"01", b"-01", b"+1", b" 1", b"1 ", b"1-", b"--1",
              b"1a", b"\xd9\xa1", b"9223372036854775808", b"-9223372036854775809", b"1" * 21):
        assert string2ll(s) is None, s


@given(st.one_of(st.binary(max_size=22),
                 st.text(alphabet="0123456789-+ ", max_size=22).map(str.encode),
                 st.integers(min_value=-(2**64), max_value=2**64).map(lambda n: b"%d" % n)))
def test_same_as_the_syntax(s: bytes) -> None:
    assert string2ll(s) == _model(s)
