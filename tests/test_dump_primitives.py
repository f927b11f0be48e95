"""The byte-level RDB encodings (server/rdb/primitives.py, listpack.py), checked against the bytes a
real Redis puts in DUMP payloads."""

from __future__ import annotations

import math

import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st

from server.rdb import listpack
from server.rdb.primitives import (
    RdbError,
    RdbReader,
    RdbWriter,
    crc64,
    encode_length,
    string_to_int64,
)
from tests.dump_helpers import payload_body

STRING_SAMPLES = [
    b"", b"0", b"1", b"-1", b"127", b"128", b"-128", b"-129", b"32767", b"32768", b"-32768", b"-32769",
    b"2147483647", b"2147483648", b"-2147483648", b"-2147483649", b"9223372036854775807",
    b"-9223372036854775808", b"9223372036854775808", b"007", b"-0", b"+1", b" 1", b"1 ", b"1.0", b"1e3",
    b"12345678901", b"-1234567890", b"abc", b"x" * 20, b"x" * 21, b"abcdefghijklmnopqrstu", b"ab" * 40,
    bytes(range(256)), b"hello world " * 100, b"\x00" * 5000, b"y" * 70000,
]


def test_crc64_matches_redis_test_vector() -> None:
    # crc64.c's own test: CRC-64/Jones of "123456789".
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA
    # Incremental use continues the same checksum.
    assert crc64(b"56789", crc64(b"1234")) == 0xE9C6D914C4B8D9CA
    assert crc64(b"") == 0


@pytest.mark.parametrize(
    "n,expected",
    [
        (0, b"\x00"), (63, b"\x3f"), (64, b"\x40\x40"), (16383, b"\x7f\xff"), (16384, b"\x80\x00\x00\x40\x00"),
        (0xFFFFFFFF, b"\x80\xff\xff\xff\xff"), (0x100000000, b"\x81\x00\x00\x00\x01\x00\x00\x00\x00"),
    ],
)
def test_length_encoding_bytes_and_round_trip(n: int, expected: bytes) -> None:
    assert encode_length(n) == expected
    w = RdbWriter()
    w.length(n)
    assert w.getvalue() == expected
    r = RdbReader(expected)
    assert r.length() == n
    assert r.at_end()


def test_string_encodings_equal_redis_dump(real_redis) -> None:
    client = redis.Redis(port=real_redis.port)
    try:
        for value in STRING_SAMPLES:
            client.set("k", value)
            payload = client.dump("k")
            w = RdbWriter(compression=True)
            w.type(0)
            w.string(value)
            assert w.getvalue() == payload_body(payload), value[:40]
            r = RdbReader(payload_body(payload), 1)
            assert r.string() == value
            assert r.at_end()
    finally:
        client.delete("k")
        client.close()


def test_uncompressed_strings_when_compression_is_off() -> None:
    w = RdbWriter(compression=False)
    w.string(b"a" * 100)
    assert w.getvalue() == b"\x40\x64" + b"a" * 100


def test_integer_strings_read_as_ints_or_digits() -> None:
    w = RdbWriter()
    for v in (b"5", b"-300", b"70000", b"text"):
        w.string(v)
    data = w.getvalue()
    r = RdbReader(data)
    assert [r.string_or_int() for _ in range(4)] == [5, -300, 70000, b"text"]
    r = RdbReader(data)
    assert [r.string() for _ in range(4)] == [b"5", b"-300", b"70000", b"text"]


def test_string_to_int64_is_redis_strict() -> None:
    assert string_to_int64(b"0") == 0
    assert string_to_int64(b"-9223372036854775808") == -(1 << 63)
    for bad in (b"", b"-", b"-0", b"01", b"+1", b" 1", b"1_0", b"9223372036854775808", b"\xd9\xa1", b"1\n"):
        assert string_to_int64(bad) is None, bad


def test_doubles_binary_and_text() -> None:
    w = RdbWriter()
    w.binary_double(1.5)
    w.binary_double(-math.inf)
    w.millis(1700000000123)
    w.double_text(3.25)
    w.double_text(math.inf)
    w.double_text(-math.inf)
    w.double_text(math.nan)
    w.double_text(10.0)
    r = RdbReader(w.getvalue())
    assert r.binary_double() == 1.5
    assert r.binary_double() == -math.inf
    assert r.millis() == 1700000000123
    assert r.double_text() == 3.25
    assert r.double_text() == math.inf
    assert r.double_text() == -math.inf
    assert math.isnan(r.double_text())
    assert r.double_text() == 10.0
    assert r.at_end()
    # sscanf("%lg") reads the number at the start and ignores what follows.
    assert RdbReader(b"\x061.5abc").double_text() == 1.5
    with pytest.raises(RdbError):
        RdbReader(b"\x03abc").double_text()


def test_truncated_input_raises_rdb_error_at_every_cut() -> None:
    w = RdbWriter()
    w.length(70000)
    w.string(b"hello world " * 10)
    w.string(b"123456")
    w.string(b"x" * 100)
    w.binary_double(2.0)
    w.millis(5)
    data = w.getvalue()
    for cut in range(len(data)):
        r = RdbReader(data[:cut])
        with pytest.raises(RdbError):
            r.length()
            r.string()
            r.string()
            r.string()
            r.binary_double()
            r.millis()


def test_damaged_lzf_is_an_rdb_error() -> None:
    w = RdbWriter()
    w.string(b"abcabcabcabcabcabcabcabcabcabc")
    data = bytearray(w.getvalue())
    assert data[0] == 0xC3
    data[2] += 1  # the uncompressed length no longer matches
    with pytest.raises(RdbError, match="LZF"):
        RdbReader(bytes(data)).string()


def test_lzf_claiming_an_impossible_length_is_an_rdb_error() -> None:
    # 3 compressed bytes cannot expand to 2**40: refused before any allocation.
    with pytest.raises(RdbError, match="LZF"):
        RdbReader(b"\xc3\x03\x81" + (1 << 40).to_bytes(8, "big") + b"\x01ab").string()


def test_unknown_string_encoding_is_an_rdb_error() -> None:
    with pytest.raises(RdbError):
        RdbReader(b"\xc4\x00").string()
    with pytest.raises(RdbError):
        RdbReader(b"\x82\x00").length()


LISTPACK_SAMPLES: list[list[bytes]] = [
    [b"a"],
    [b"0", b"1", b"127", b"128", b"-1", b"4095", b"4096", b"-4096", b"-4097", b"32767", b"32768", b"-32768",
     b"-32769", b"8388607", b"8388608", b"-8388608", b"-8388609", b"2147483647", b"2147483648",
     b"-2147483648", b"-2147483649", b"9223372036854775807", b"-9223372036854775808"],
    [b"9223372036854775808", b"007", b"-0", b"", b"x" * 63, b"y" * 64, b"z" * 127, b"w" * 4095],
]


def _listpack_from_list_dump(payload: bytes) -> bytes:
    r = RdbReader(payload_body(payload))
    assert r.type() == 18  # RDB_TYPE_LIST_QUICKLIST_2
    assert r.length() == 1
    assert r.length() == 2  # a packed (listpack) node
    blob = r.string()
    assert r.at_end()
    return blob


@pytest.mark.parametrize("items", LISTPACK_SAMPLES, ids=["one", "integers", "strings"])
def test_listpack_bytes_equal_redis(real_redis, items: list[bytes]) -> None:
    client = redis.Redis(port=real_redis.port)
    # The reference server lives for the whole session: its setting is put back afterwards.
    saved = client.config_get("list-max-listpack-size")["list-max-listpack-size"]
    try:
        client.config_set("list-max-listpack-size", "-5")
        client.delete("l")
        # 7.0 keeps every list in a quicklist (7.2 added the listpack encoding); a one-node quicklist
        # dumps the same bytes as 7.4's listpack list.
        client.rpush("l", *items)
        blob = _listpack_from_list_dump(client.dump("l"))
        assert listpack.pack(items) == blob
        assert [x if isinstance(x, bytes) else str(x).encode() for x in listpack.unpack(blob)] == items
    finally:
        client.delete("l")
        client.config_set("list-max-listpack-size", saved)
        client.close()


def test_listpack_with_a_long_string_entry(real_redis) -> None:
    # 4096+ bytes: the 32-bit string encoding and a multi-byte back length.
    client = redis.Redis(port=real_redis.port)
    saved = client.config_get("list-max-listpack-size")["list-max-listpack-size"]
    try:
        client.config_set("list-max-listpack-size", "-5")
        client.delete("l")
        items = [b"q" * 5000, b"7"]
        client.rpush("l", *items)
        blob = _listpack_from_list_dump(client.dump("l"))
        assert listpack.pack(items) == blob
        assert listpack.unpack(blob) == [b"q" * 5000, 7]
    finally:
        client.delete("l")
        client.config_set("list-max-listpack-size", saved)
        client.close()


def test_listpack_int_items_and_huge_counts() -> None:
    assert listpack.pack([1, -5000, 1 << 40]) == listpack.pack([b"1", b"-5000", str(1 << 40).encode()])
    # Beyond int64 an int is stored as its digits.
    assert listpack.unpack(listpack.pack([1 << 70])) == [str(1 << 70).encode()]
    many = list(range(70000))
    blob = listpack.pack(many)
    assert blob[4:6] == b"\xff\xff"  # count unknown: more than the 16-bit header holds
    assert listpack.unpack(blob) == many
    assert listpack.entries_size(many) == len(blob)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=300), st.integers(-(1 << 63), (1 << 63) - 1),
                          st.integers(-5000, 5000).map(lambda v: str(v).encode()))))
def test_listpack_round_trip(items: list[bytes | int]) -> None:
    blob = listpack.pack(items)
    assert listpack.validate_header(blob)
    expected = []
    for item in items:
        v = item if isinstance(item, int) else string_to_int64(item)
        expected.append(item if v is None else v)
    assert listpack.unpack(blob) == expected


def test_listpack_every_damaged_byte_is_an_error_or_a_value() -> None:
    blob = listpack.pack([b"abc", 5, -3000, 100000, b"x" * 70, 1 << 40, b""])
    for i in range(len(blob)):
        for mask in (0x01, 0x80, 0xFF):
            damaged = bytearray(blob)
            damaged[i] ^= mask
            try:
                result = listpack.unpack(bytes(damaged))
            except RdbError:
                continue
            assert isinstance(result, list)
    for cut in range(len(blob)):
        with pytest.raises(RdbError):
            listpack.unpack(blob[:cut])
