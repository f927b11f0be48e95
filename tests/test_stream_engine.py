"""Unit tests of the pure stream engine (streams/), checked against Redis 7.4 behaviour."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streams import (
    LAST,
    LAST_ENTRY,
    MAX_ID,
    NEW,
    Stream,
    StreamError,
    check_xsetid_args,
    decr_id,
    default_trim_limit,
    format_id,
    incr_id,
    make_id,
    nogroup,
    nogroup_for_key,
    nogroup_xreadgroup,
    normalize_entries_read,
    parse_group_id,
    parse_id,
    parse_range_end,
    parse_range_start,
    parse_read_id,
    parse_strict_id,
    parse_strict_ids,
    parse_xadd_id,
)
from streams import errors as E

U64 = (1 << 64) - 1
F = [b"f", b"v"]


def i(text: str) -> int:
    ms, _, seq = text.partition("-")
    return make_id(int(ms), int(seq or 0))


def ids(entries) -> list[str]:
    return [format_id(e[0]).decode() for e in entries]


def err(fn, *args, **kwargs) -> str:
    with pytest.raises(StreamError) as exc:
        fn(*args, **kwargs)
    return str(exc.value)


def filled(n: int, *, node_max_entries: int = 100, node_max_bytes: int = 4096, start: int = 1) -> Stream:
    s = Stream(node_max_entries, node_max_bytes)
    for k in range(start, start + n):
        s.add([b"f", b"%d" % k], now_ms=0, id=make_id(k, 0))
    return s


# --- ids ------------------------------------------------------------------------------------


class TestIds:
    def test_format_and_parts(self):
        assert format_id(make_id(5, 7)) == b"5-7"
        assert format_id(MAX_ID) == b"18446744073709551615-18446744073709551615"

    def test_parse_forms(self):
        assert parse_id(b"5") == i("5-0")
        assert parse_id(b"5", missing_seq=U64) == make_id(5, U64)
        assert parse_id(b"5-3") == i("5-3")
        assert parse_id(b"-") == 0
        assert parse_id(b"+") == MAX_ID
        assert parse_id(b"18446744073709551615-18446744073709551615") == MAX_ID
        # strtoull leniency kept by Redis's string2ull
        assert parse_id(b"+5") == i("5-0")
        assert parse_id(b"007-1") == i("7-1")
        assert parse_id(b"1--0") == i("1-0")

    @pytest.mark.parametrize(
        "arg",
        [b"", b"abc", b"1-", b"1-x", b"-1", b"1-2-3", b"18446744073709551616", b"1-18446744073709551616",
         b"1.5", b"1-*", b"*", b"1" * 128],
    )
    def test_parse_invalid(self, arg):
        assert err(parse_id, arg) == "ERR Invalid stream ID specified as stream command argument"

    def test_strict_rejects_minus_plus(self):
        for arg in (b"-", b"+"):
            assert err(parse_strict_id, arg) == E.INVALID_ID
        assert parse_strict_id(b"3-4") == i("3-4")

    @pytest.mark.parametrize("args", [
        [b"1-2", b"3-4"],
        [b"1795464449139-0", b"18446744073709551615-18446744073709551615", b"7"],  # 20 digits, no seq
        [b"1-1 2-2", b"3-3"],  # a space inside one argument: not two IDs
        [b"01-2", b"3-04", b"5-6"],
        [b"999999999999999999-999999999999999999", b"0-0"],
        # One millisecond (sequence numbers looked up): canonical, zero-padded, past the table
        [b"1795464449139-0", b"1795464449139-1", b"1795464449139-4095", b"1795464449139-1"],
        [b"5-1", b"5-03", b"5-2"],
        [b"5-4095", b"5-4096", b"5-999999999999999999"],
        [b"007-1", b"007-2"],
        [b"05-1", b"5-2", b"5-1 5-2"],
    ])
    def test_parse_strict_ids_is_parse_strict_id_of_each(self, args):
        expected = [err(parse_strict_id, a) if a.count(b" ") else parse_strict_id(a) for a in args]
        if any(isinstance(x, str) for x in expected):
            assert err(parse_strict_ids, args) == E.INVALID_ID
        else:
            assert parse_strict_ids(args) == expected

    @given(st.sampled_from([None, 7, 1795464449139]),
           st.lists(st.tuples(st.sampled_from([0, 7, 1795464449139, 2**64 - 1]),
                              st.integers(0, 5000) | st.integers(0, 2**64 - 1),
                              st.sampled_from([b"", b"", b"", b"0"]),
                              st.sampled_from([b"", b"", b"", b"0"])),
                    min_size=2, max_size=12))
    def test_parse_strict_ids_matches_parse_strict_id(self, shared_ms, parts):
        # One or several milliseconds, zero-padded parts, parts past the 18-digit fast path.
        args = [b"%s%d-%s%d" % (pad_ms, ms if shared_ms is None else shared_ms, pad_seq, seq)
                for ms, seq, pad_ms, pad_seq in parts]
        try:
            expected = [parse_strict_id(a) for a in args]
        except StreamError as exc:
            assert str(exc) == E.INVALID_ID
            assert err(parse_strict_ids, args) == E.INVALID_ID
        else:
            assert parse_strict_ids(args) == expected

    def test_xadd_id(self):
        assert parse_xadd_id(b"*") is None
        assert parse_xadd_id(b"5-*") == (i("5-0"), False)
        assert parse_xadd_id(b"5-2") == (i("5-2"), True)
        assert parse_xadd_id(b"5") == (i("5-0"), True)
        for bad in (b"+", b"-", b"*-1", b"5-**", b"x-*"):
            assert err(parse_xadd_id, bad) == E.INVALID_ID

    def test_range_bounds(self):
        assert parse_range_start(b"5") == i("5-0")
        assert parse_range_end(b"5") == make_id(5, U64)
        assert parse_range_start(b"(5-3") == i("5-4")
        assert parse_range_start(b"(5") == i("5-1")
        assert parse_range_end(b"(5-3") == i("5-2")
        assert parse_range_end(b"(5") == make_id(5, U64 - 1)
        assert parse_range_start(b"(5-18446744073709551615") == i("6-0")
        assert parse_range_end(b"(6-0") == make_id(5, U64)
        assert parse_range_start(b"-") == 0 and parse_range_end(b"+") == MAX_ID

    def test_range_errors(self):
        assert err(parse_range_start, b"(") == E.INVALID_ID
        assert err(parse_range_start, b"(-") == E.INVALID_ID
        assert err(parse_range_end, b"(+") == E.INVALID_ID
        assert err(parse_range_start, b"(18446744073709551615-18446744073709551615") == (
            "ERR invalid start ID for the interval"
        )
        assert err(parse_range_end, b"(0-0") == "ERR invalid end ID for the interval"
        assert parse_range_end(b"(0") == make_id(0, U64 - 1)  # "0" means 0-18446744073709551615 here
        assert err(parse_range_end, b"(0-0") == E.INVALID_END

    def test_read_ids(self):
        assert parse_read_id(b"$", group=False) == LAST
        assert parse_read_id(b"+", group=False) == LAST_ENTRY
        assert parse_read_id(b">", group=True) == NEW
        assert parse_read_id(b"0", group=True) == 0
        assert parse_read_id(b"18446744073709551615-18446744073709551615", group=True) == NEW
        assert err(parse_read_id, b">", group=False).startswith("ERR The > ID can be specified only")
        assert err(parse_read_id, b"$", group=True).startswith("ERR The $ ID is meaningless")
        assert err(parse_read_id, b"+", group=True).startswith("ERR The + ID is meaningless")
        assert err(parse_read_id, b"-", group=False) == E.INVALID_ID

    def test_group_ids(self):
        assert parse_group_id(b"$") == LAST
        assert parse_group_id(b"0") == 0
        assert err(parse_group_id, b"-") == E.INVALID_ID
        assert parse_group_id(b"-", setid=True) == 0
        assert parse_group_id(b"+", setid=True) == MAX_ID

    def test_incr_decr(self):
        assert incr_id(make_id(1, U64)) == i("2-0")
        assert incr_id(MAX_ID) is None
        assert decr_id(i("2-0")) == make_id(1, U64)
        assert decr_id(0) is None

    def test_error_helpers(self):
        assert str(nogroup(b"k", b"g")) == "NOGROUP No such key 'k' or consumer group 'g'"
        assert str(nogroup_xreadgroup(b"k", b"g")) == (
            "NOGROUP No such key 'k' or consumer group 'g' in XREADGROUP with GROUP option"
        )
        assert str(nogroup_for_key(b"k", b"g")) == "NOGROUP No such consumer group 'g' for key name 'k'"


# --- XADD -----------------------------------------------------------------------------------


class TestAdd:
    def test_auto_ids_and_clock_going_back(self):
        s = Stream()
        assert s.add(F, now_ms=100) == i("100-0")
        assert s.add(F, now_ms=100) == i("100-1")
        assert s.add(F, now_ms=50) == i("100-2")  # clock went back: keep ms, bump seq
        assert s.add(F, now_ms=101) == i("101-0")
        assert (s.length, s.entries_added, s.last_id, s.first_id) == (4, 4, i("101-0"), i("100-0"))

    def test_seq_overflow_moves_to_next_ms(self):
        s = Stream()
        s.add(F, now_ms=0, id=make_id(5, U64))
        assert s.add(F, now_ms=1) == i("6-0")

    def test_exhausted(self):
        s = Stream()
        s.add(F, now_ms=0, id=MAX_ID)
        msg = "ERR The stream has exhausted the last possible ID, unable to add more items"
        assert err(s.add, F, now_ms=0) == msg
        assert err(s.add, F, now_ms=0, id=make_id(U64, 0), seq_given=False) == msg

    def test_explicit_and_auto_seq(self):
        s = Stream()
        assert s.add(F, now_ms=0, id=0, seq_given=False) == i("0-1")
        assert s.add(F, now_ms=0, id=i("0-0"), seq_given=False) == i("0-2")
        assert s.add(F, now_ms=0, id=i("5-0"), seq_given=False) == i("5-0")
        assert s.add(F, now_ms=0, id=i("5-0"), seq_given=False) == i("5-1")
        assert s.add(F, now_ms=0, id=i("7-3")) == i("7-3")
        small = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
        assert err(s.add, F, now_ms=0, id=i("7-3")) == small
        assert err(s.add, F, now_ms=0, id=i("6-0"), seq_given=False) == small
        assert s.length == 5

    def test_auto_seq_overflow_is_too_small(self):
        s = Stream()
        s.add(F, now_ms=0, id=make_id(5, U64))
        assert err(s.add, F, now_ms=0, id=i("5-0"), seq_given=False) == E.XADD_TOO_SMALL

    def test_zero_id(self):
        s = Stream()
        assert err(s.add, F, now_ms=0, id=0) == "ERR The ID specified in XADD must be greater than 0-0"
        assert s.length == 0 and s.entries_added == 0

    def test_fields_roundtrip(self):
        s = Stream(node_max_entries=3)
        big = b"x" * 300  # multi-byte length prefix
        rows = [
            [b"a", b"1", b"b", b"2"],
            [b"a", b"3", b"b", b"4"],  # same fields as master
            [b"b", b"1", b"a", b"2"],  # same names, other order
            [b"a", b"1"],
            [b"", b"", big, big],
            [b"a", b"1", b"b", b"2"],
        ]
        got = [s.add(r, now_ms=10) for r in rows]
        assert [f for _, f in s.range()] == rows
        assert s.get(got[4]) == [b"", b"", big, big]
        assert all(type(x) is bytes for _, f in s.range() for x in f)


# --- ranges ---------------------------------------------------------------------------------


class TestRange:
    @pytest.mark.parametrize("nme", [1, 2, 3, 100, 0])
    def test_ranges_across_nodes(self, nme):
        s = filled(20, node_max_entries=nme)
        assert ids(s.range()) == [f"{k}-0" for k in range(1, 21)]
        assert ids(s.range(i("5"), i("9"))) == [f"{k}-0" for k in range(5, 10)]
        assert ids(s.range(i("5"), i("9"), reverse=True)) == [f"{k}-0" for k in range(9, 4, -1)]
        assert ids(s.range(i("5"), MAX_ID, 3)) == ["5-0", "6-0", "7-0"]
        assert ids(s.range(0, i("15"), 3, reverse=True)) == ["15-0", "14-0", "13-0"]
        # exclusive bounds at every position
        for k in range(1, 21):
            lo = parse_range_start(b"(%d-0" % k)
            hi = parse_range_end(b"(%d-0" % (k + 3))
            assert ids(s.range(lo, hi)) == [f"{x}-0" for x in range(k + 1, min(k + 3, 21))]
            assert ids(s.range(lo, hi, reverse=True)) == [f"{x}-0" for x in range(min(k + 2, 20), k, -1)]
        assert s.range(i("9"), i("5")) == []
        assert s.range(i("21"), MAX_ID) == []
        assert s.range(0, i("0-5")) == []
        assert s.range(count=0) == s.range()

    @pytest.mark.parametrize("nme", [1, 3, 100])
    def test_runs_match_ranges(self, nme):
        # runs() serves the wire encoder and group delivery: the same entries as range(),
        # grouped in runs of consecutive live entries of one node, with COUNT applied.
        s = filled(20, node_max_entries=nme)
        for k in (4, 5, 11, 17):
            s.delete([i(str(k))])

        def run_ids(runs, reverse):
            out = []
            for run in runs:
                got = run.ids()
                assert all(s.contains(eid) for eid in got)
                out += [format_id(eid).decode() for eid in (got[::-1] if reverse else got)]
            return out

        def shape(runs):
            return [(run.key, run.lo, run.hi) for run in runs]

        for reverse in (False, True):
            for count in (None, 1, 2, 3, 7, 30):
                for lo, hi in ((0, MAX_ID), (i("3"), i("12")), (i("6"), i("6")), (i("9"), i("2"))):
                    want = ids(s.range(lo, hi, count, reverse))
                    assert run_ids(s.store.runs(lo, hi, reverse, count), reverse) == want
                    if not reverse and hi == MAX_ID:
                        assert shape(s.store.runs_from(lo, count)) == shape(s.store.runs(lo, hi, False, count))
            for k in range(0, 22):  # runs_from at every position, on live and deleted IDs
                for count in (None, 1, 2, 3, 7, 30):
                    want = ids(s.range(i(str(k)), MAX_ID, count))
                    assert run_ids(s.store.runs_from(i(str(k)), count), False) == want
        if nme == 100:  # one node: runs break only at the deleted 4-5, 11 and 17
            assert [(r.lo, r.hi) for r in s.store.runs(0, MAX_ID)] == [(0, 3), (5, 10), (11, 16), (17, 20)]

    def test_node_limits(self):
        assert filled(10, node_max_entries=1).node_count() == 10
        assert filled(10, node_max_entries=2).node_count() == 5
        assert filled(250, node_max_entries=100).node_count() == 3
        s = filled(10, node_max_entries=0, node_max_bytes=1)
        assert s.node_count() == 10
        s = filled(100, node_max_entries=0, node_max_bytes=64)
        assert 1 < s.node_count() < 100
        assert ids(s.range()) == [f"{k}-0" for k in range(1, 101)]

    def test_limits_changed_at_run_time(self):
        s = filled(4, node_max_entries=100)
        s.set_node_limits(2, 4096)
        s.add(F, now_ms=0, id=i("10"))
        assert s.node_count() == 2  # the first node was already past the new limit
        s.add(F, now_ms=0, id=i("11"))
        s.add(F, now_ms=0, id=i("12"))
        assert s.node_count() == 3

    def test_same_ms_many_seqs(self):
        s = Stream(node_max_entries=7)
        for _ in range(50):
            s.add(F, now_ms=3)
        got = s.range(make_id(3, 10), make_id(3, 20))
        assert [e[0] & U64 for e in got] == list(range(10, 21))
        rev = s.range(make_id(3, 10), make_id(3, 20), reverse=True)
        assert [e[0] & U64 for e in rev] == list(range(20, 9, -1))

    def test_big_deltas_widen_arrays(self):
        s = Stream(node_max_entries=10)
        pts = [i("1-0"), make_id(1, 1 << 40), make_id(1 << 40, 0), make_id(1 << 60, 1 << 63), MAX_ID]
        for p in pts:
            s.add(F, now_ms=0, id=p)
        assert [e[0] for e in s.range()] == pts
        assert [e[0] for e in s.range(reverse=True)] == pts[::-1]
        assert all(s.contains(p) for p in pts)

    def test_read_after_and_resolve(self):
        s = filled(5)
        assert ids(s.read_after(i("3"))) == ["4-0", "5-0"]
        assert s.read_after(MAX_ID) == []
        assert s.resolve_read_id(LAST) == i("5")
        assert ids(s.read_after(s.resolve_read_id(LAST_ENTRY))) == ["5-0"]
        empty = Stream()
        assert err(empty.resolve_read_id, LAST_ENTRY) == "ERR the stream last element ID is 0-0"


# --- XDEL / XTRIM ---------------------------------------------------------------------------


class TestDelete:
    def test_delete_updates_metadata(self):
        s = filled(5, node_max_entries=2)
        assert s.delete([i("3"), i("3"), i("9")]) == 1
        assert s.max_deleted_id == i("3")
        assert s.delete([i("1")]) == 1
        assert s.max_deleted_id == i("3")  # max of deleted IDs, never lowered
        assert s.first_id == i("2")
        assert ids(s.range()) == ["2-0", "4-0", "5-0"]
        assert ids(s.range(reverse=True)) == ["5-0", "4-0", "2-0"]
        assert s.get(i("3")) is None and not s.contains(i("3"))
        assert s.length == 3 and s.entries_added == 5

    def test_empty_node_is_freed(self):
        s = filled(6, node_max_entries=2)
        assert s.node_count() == 3
        s.delete([i("3")])
        assert s.node_count() == 3
        s.delete([i("4")])
        assert s.node_count() == 2
        s.delete([i("5"), i("6")])  # the tail node too
        assert s.node_count() == 1
        s.add(F, now_ms=0, id=i("7"))
        assert s.node_count() == 2  # the freed tail was not reused
        assert ids(s.range()) == ["1-0", "2-0", "7-0"]

    def test_delete_everything(self):
        s = filled(3)
        assert s.delete([i("1"), i("2"), i("3")]) == 3
        assert (s.length, s.first_id, s.node_count(), s.last_id) == (0, 0, 0, i("3"))
        assert s.first_entry() is None and s.last_entry() is None
        assert s.last_valid_id() == 0

    def test_sealed_node_reopened_when_tail_is_freed(self):
        s = filled(3, node_max_entries=2)
        s.set_node_limits(100, 4096)
        s.delete([i("3")])
        assert s.node_count() == 1
        s.add([b"f", b"4"], now_ms=0, id=i("4"))
        assert s.node_count() == 1
        assert s.range() == [(i("1"), [b"f", b"1"]), (i("2"), [b"f", b"2"]), (i("4"), [b"f", b"4"])]

    def test_tombstones_count_toward_node_size(self):
        s = filled(2, node_max_entries=3)
        s.delete([i("2")])
        s.add(F, now_ms=0, id=i("3"))
        s.add(F, now_ms=0, id=i("4"))
        assert s.node_count() == 2

    def test_tombstone_bitmap_grows_with_the_tail_node(self):
        s = filled(3)
        s.delete([i("2")])
        for k in range(4, 30):
            s.add(F, now_ms=0, id=i(str(k)))
        assert s.delete([i("20"), i("29")]) == 2
        want = [f"{k}-0" for k in range(1, 29) if k not in (2, 20)]
        assert ids(s.range()) == want
        assert ids(s.range(reverse=True)) == want[::-1]
        assert not s.contains(i("20")) and s.contains(i("21"))

    def test_last_valid_id_skips_tombstone(self):
        s = filled(4, node_max_entries=100)
        s.delete([i("4")])
        assert s.last_valid_id() == i("3")
        assert s.last_entry()[0] == i("3")


class TestTrim:
    def test_exact_maxlen(self):
        s = filled(10, node_max_entries=3)
        assert s.trim(maxlen=4) == 6
        assert ids(s.range()) == ["7-0", "8-0", "9-0", "10-0"]
        assert s.first_id == i("7")
        assert s.max_deleted_id == 0  # trimming does not touch it
        assert s.trim(maxlen=4) == 0
        assert s.trim(maxlen=0) == 4 and s.length == 0 and s.first_id == 0

    def test_approx_maxlen_drops_whole_nodes(self):
        s = filled(10, node_max_entries=3)
        assert s.trim(maxlen=4, approx=True) == 6  # nodes 1-3 and 4-6
        s = filled(10, node_max_entries=3)
        assert s.trim(maxlen=5, approx=True) == 3  # dropping 4-6 would leave 4 < 5
        assert s.length == 7 and s.first_id == i("4")

    def test_approx_limit(self):
        s = filled(30, node_max_entries=3)
        assert s.trim(maxlen=0, approx=True, limit=7) == 6  # a node that would exceed stops it
        assert s.trim(maxlen=0, approx=True, limit=0) == 24
        assert default_trim_limit(100) == 10000
        assert default_trim_limit(0) == 10000
        assert default_trim_limit(20000) == 1_000_000
        s = filled(700, node_max_entries=2)
        assert s.trim(maxlen=0, approx=True) == 200  # default LIMIT 100 * node_max_entries

    def test_exact_minid(self):
        s = filled(10, node_max_entries=3)
        assert s.trim(minid=i("5")) == 4
        assert ids(s.range()) == [f"{k}-0" for k in range(5, 11)]
        assert s.trim(minid=i("5")) == 0
        assert s.first_id == i("5")

    def test_approx_minid(self):
        s = filled(10, node_max_entries=3)
        assert s.trim(minid=i("5"), approx=True) == 3
        assert s.first_id == i("4")
        assert s.trim(minid=i("7"), approx=True) == 3

    def test_minid_counts_tombstone_as_node_last(self):
        s = filled(3, node_max_entries=3)
        s.add(F, now_ms=0, id=i("4"))
        s.delete([i("3")])
        # node [1,2,(3)] has last ID 3 (a tombstone): not < 3, so entries are flagged instead
        assert s.trim(minid=i("3")) == 2
        assert s.node_count() == 2  # the emptied node stays, as in Redis
        assert ids(s.range()) == ["4-0"]
        assert s.first_id == i("4")
        assert s.trim(maxlen=0, approx=True) == 1 and s.node_count() == 0

    def test_trim_requires_one_strategy(self):
        with pytest.raises(ValueError):
            Stream().trim()


# --- XSETID / XINFO -------------------------------------------------------------------------


class TestSetIdAndInfo:
    def test_setid(self):
        s = filled(3)
        s.set_id(i("10"), entries_added=7, max_deleted_id=i("9"))
        assert (s.last_id, s.entries_added, s.max_deleted_id) == (i("10"), 7, i("9"))
        assert s.add(F, now_ms=0) == i("10-1")

    def test_setid_errors(self):
        s = filled(3)
        assert err(s.set_id, i("2")) == "ERR The ID specified in XSETID is smaller than the target stream top item"
        assert err(s.set_id, i("5"), entries_added=2) == (
            "ERR The entries_added specified in XSETID is smaller than the target stream length"
        )
        assert err(s.set_id, i("5"), max_deleted_id=i("6")) == (
            "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
        )
        assert err(check_xsetid_args, i("5"), -1, None) == "ERR entries_added must be positive"
        s.delete([i("3")])
        assert err(s.set_id, i("2-5")) == "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id"
        s.set_id(i("3"))  # the top valid item is now 2-0
        assert s.last_id == i("3")

    def test_setid_on_empty_stream_may_go_back(self):
        s = filled(2)
        s.trim(maxlen=0)
        s.set_id(i("1"), entries_added=0)
        assert s.last_id == i("1") and s.entries_added == 0

    def test_info(self):
        s = filled(5, node_max_entries=2)
        s.create_group(b"zz", 0)
        s.create_group(b"aa", LAST)
        s.delete([i("2")])
        info = s.info()
        assert list(info) == [
            "length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id", "max-deleted-entry-id",
            "entries-added", "recorded-first-entry-id", "idmp-duration", "idmp-maxsize", "pids-tracked",
            "iids-tracked", "iids-added", "iids-duplicates", "groups", "first-entry", "last-entry",
        ]
        assert info["length"] == 4 and info["radix-tree-keys"] == 3 and info["groups"] == 2
        assert info["last-generated-id"] == i("5") and info["max-deleted-entry-id"] == i("2")
        assert info["first-entry"] == (i("1"), [b"f", b"1"]) and info["last-entry"] == (i("5"), [b"f", b"5"])
        assert [g.name for g in s.iter_groups()] == [b"aa", b"zz"]
        full = s.info_full(count=2)
        assert ids(full["entries"]) == ["1-0", "3-0"]
        assert [g["name"] for g in full["groups"]] == [b"aa", b"zz"]
        assert full["groups"][0]["last-delivered-id"] == i("5")


# --- consumer groups ------------------------------------------------------------------------


def group_stream(n: int = 3, **kw) -> tuple[Stream, object]:
    s = filled(n, **kw)
    return s, s.create_group(b"g", 0)


def xinfo_group(s: Stream, name: bytes = b"g1") -> tuple:
    g = s.get_group(name)
    return g.entries_read, g.lag(s)


class TestGroups:
    def test_create_and_busy(self):
        s = filled(1)
        s.create_group(b"g", LAST)
        assert s.get_group(b"g").last_id == i("1")
        assert err(s.create_group, b"g", LAST) == "BUSYGROUP Consumer Group name already exists"
        assert s.destroy_group(b"g") is True and s.destroy_group(b"g") is False

    def test_entriesread_validation(self):
        assert normalize_entries_read(-1) is None
        assert err(normalize_entries_read, -3) == "ERR value for ENTRIESREAD must be positive or -1"
        s = filled(4)
        s.create_group(b"g1", LAST, 0)
        s.create_group(b"g2", LAST, 3)
        assert (s.get_group(b"g1").entries_read, s.get_group(b"g2").entries_read) == (0, 3)

    def test_read_new_and_history(self):
        s, g = group_stream(4)
        c, created = g.touch_consumer(b"alice", 100)
        assert created and c.seen_time == 100 and c.active_time == -1
        assert ids(g.read_new(s, c, 2, False, 100)) == ["1-0", "2-0"]
        assert ids(g.read_new(s, c, None, False, 101)) == ["3-0", "4-0"]
        assert g.read_new(s, c, None, False, 102) == []
        assert g.last_id == i("4") and c.active_time == 101
        hist = g.read_history(s, c, 0, None, 200)
        assert ids(hist) == ["1-0", "2-0", "3-0", "4-0"]
        assert g.pel[i("1")].delivery_count == 2 and g.pel[i("1")].delivery_time == 200
        assert ids(g.read_history(s, c, i("2"), 1, 200)) == ["3-0"]
        assert g.read_history(s, c, MAX_ID, None, 200) == []
        bob, _ = g.touch_consumer(b"bob", 300)
        assert g.read_history(s, bob, 0, None, 300) == []

    def test_history_reports_deleted_entries(self):  # Redis bug #5570
        s, g = group_stream(3)
        c, _ = g.touch_consumer(b"c", 0)
        g.read_new(s, c, None, False, 0)
        s.delete([i("2")])
        hist = g.read_history(s, c, 0, None, 5)
        assert hist == [(i("1"), [b"f", b"1"]), (i("2"), None), (i("3"), [b"f", b"3"])]
        assert g.pel[i("2")].delivery_count == 1 and g.pel[i("2")].delivery_time == 0
        assert g.pel[i("3")].delivery_count == 2

    def test_noack(self):
        s, g = group_stream(2)
        c, _ = g.touch_consumer(b"c", 0)
        assert ids(g.read_new(s, c, None, True, 7)) == ["1-0", "2-0"]
        assert len(g.pel) == 0 and c.active_time == -1 and g.last_id == i("2")

    def test_pel_reassignment_after_setid(self):
        s, g = group_stream(3)
        a, _ = g.touch_consumer(b"a", 0)
        b, _ = g.touch_consumer(b"b", 0)
        g.read_new(s, a, None, False, 10)
        g.read_history(s, a, 0, None, 11)
        g.set_id(0)
        assert g.entries_read is None
        assert ids(g.read_new(s, b, 1, False, 20)) == ["1-0"]
        pe = g.pel[i("1")]
        assert pe.consumer is b and pe.delivery_count == 1 and pe.delivery_time == 20
        assert i("1") not in a.pel and i("1") in b.pel
        assert list(a.pel) == [i("2"), i("3")]

    def test_ack(self):
        s, g = group_stream(3)
        c, _ = g.touch_consumer(b"c", 0)
        g.read_new(s, c, None, False, 0)
        assert g.ack([i("1"), i("1"), i("9")]) == 1
        assert g.ack([i("2"), i("3")]) == 2
        assert not g.pel and not c.pel

    def test_ack_of_entries_owned_by_several_consumers(self):
        s, g = group_stream(6)
        a, _ = g.touch_consumer(b"a", 0)
        b, _ = g.touch_consumer(b"b", 0)
        g.read_new(s, a, 2, False, 0)  # 1, 2
        g.read_new(s, b, 2, False, 0)  # 3, 4
        g.read_new(s, a, 2, False, 0)  # 5, 6
        # a's entries first and last, b's in between, an unknown ID and a repeat
        assert g.ack([i("1"), i("3"), i("9"), i("6"), i("3")]) == 3
        assert list(g.pel) == [i("2"), i("4"), i("5")]
        assert list(a.pel) == [i("2"), i("5")] and list(b.pel) == [i("4")]
        assert g.ack([i("4"), i("2")]) == 2  # the first acked belongs to b
        assert list(a.pel) == [i("5")] and not b.pel

    def test_pending(self):
        s, g = group_stream(5)
        assert g.pending_summary() == (0, None, None, [])
        b, _ = g.touch_consumer(b"bob", 0)
        a, _ = g.touch_consumer(b"alice", 0)
        g.touch_consumer(b"idle", 0)
        g.read_new(s, b, 2, False, 100)
        g.read_new(s, a, 3, False, 200)
        assert g.pending_summary() == (5, i("1"), i("5"), [(b"alice", 3), (b"bob", 2)])
        rows = g.pending_range(0, MAX_ID, 10, 250)
        assert rows[0] == (i("1"), b"bob", 150, 1) and rows[4] == (i("5"), b"alice", 50, 1)
        assert [r[0] for r in g.pending_range(0, MAX_ID, 2, 250)] == [i("1"), i("2")]
        assert [r[0] for r in g.pending_range(0, MAX_ID, 10, 250, consumer=b"alice")] == [i("3"), i("4"), i("5")]
        assert g.pending_range(0, MAX_ID, 10, 250, consumer=b"nobody") == []
        assert [r[0] for r in g.pending_range(0, MAX_ID, 10, 250, min_idle=100)] == [i("1"), i("2")]
        lo, hi = parse_range_start(b"(1-0"), parse_range_end(b"(4-0")
        assert [r[0] for r in g.pending_range(lo, hi, 10, 250)] == [i("2"), i("3")]
        assert g.pending_range(0, MAX_ID, 0, 250) == []
        assert g.pending_range(0, MAX_ID, 1, 0)[0][2] == 0  # idle clamped at 0

    def test_create_and_delete_consumer(self):
        s, g = group_stream(3)
        assert g.create_consumer(b"c", 5) is True and g.create_consumer(b"c", 6) is False
        c = g.consumers[b"c"]
        assert (c.seen_time, c.active_time) == (5, -1)
        g.read_new(s, c, 2, False, 9)
        assert g.delete_consumer(b"c") == 2 and not g.pel and b"c" not in g.consumers
        assert g.delete_consumer(b"c") == 0


class TestClaim:
    def setup_stream(self):
        s, g = group_stream(3)
        alice, _ = g.touch_consumer(b"alice", 0)
        g.read_new(s, alice, None, False, 1000)
        bob, _ = g.touch_consumer(b"bob", 1100)
        return s, g, alice, bob

    def test_claim_min_idle(self):
        s, g, alice, bob = self.setup_stream()
        assert g.claim(s, bob, [i("1")], 200, 1100) == []
        got = g.claim(s, bob, [i("1"), i("2")], 100, 1100)
        assert got == [(i("1"), [b"f", b"1"]), (i("2"), [b"f", b"2"])]
        pe = g.pel[i("1")]
        assert pe.consumer is bob and pe.delivery_count == 2 and pe.delivery_time == 1100
        assert list(alice.pel) == [i("3")] and list(bob.pel) == [i("1"), i("2")]
        assert bob.active_time == 1100

    def test_claim_options(self):
        s, g, alice, bob = self.setup_stream()
        assert g.claim(s, bob, [i("1")], 0, 2000, justid=True) == [i("1")]
        assert g.pel[i("1")].delivery_count == 1  # JUSTID does not count a delivery
        g.claim(s, bob, [i("2")], 0, 2000, retry_count=7, delivery_time=2000 - 500)
        pe = g.pel[i("2")]
        assert (pe.delivery_count, pe.delivery_time) == (7, 1500)
        g.claim(s, bob, [i("3")], 0, 2000, delivery_time=5000)  # in the future: now
        assert g.pel[i("3")].delivery_time == 2000
        g.claim(s, bob, [i("3")], 0, 2000, last_id=i("9"))
        assert g.last_id == i("9")
        g.claim(s, bob, [], 0, 2000, last_id=i("4"))
        assert g.last_id == i("9")

    def test_claim_force(self):
        s, g, alice, bob = self.setup_stream()
        g.ack([i("2")])
        assert g.claim(s, bob, [i("2")], 0, 3000) == []
        assert g.claim(s, bob, [i("2"), i("99")], 10**6, 3000, force=True) == [(i("2"), [b"f", b"2"])]
        assert g.pel[i("2")].delivery_count == 2 and i("99") not in g.pel
        assert g.pel[i("2")].consumer is bob

    def test_claim_deleted_entries(self):  # XCLAIM with XDEL / with trimming
        s, g, alice, bob = self.setup_stream()
        s.delete([i("2")])
        assert ids(g.claim(s, bob, [i("1"), i("2"), i("3")], 0, 2000)) == ["1-0", "3-0"]
        assert g.pending_range(0, MAX_ID, 10, 2000, consumer=b"alice") == []
        assert i("2") not in g.pel

        s, g = group_stream(3, node_max_entries=2)
        a, _ = g.touch_consumer(b"alice", 0)
        g.read_new(s, a, None, False, 0)
        s.trim(maxlen=1)
        b, _ = g.touch_consumer(b"bob", 0)
        assert ids(g.claim(s, b, [i("1"), i("2"), i("3")], 0, 0)) == ["3-0"]

    def test_autoclaim_iterator(self):
        s = Stream()
        got = [s.add([b"k", b"%d" % n], now_ms=10) for n in range(5)]
        g = s.create_group(b"g", 0)
        c1, _ = g.touch_consumer(b"c1", 10)
        g.read_new(s, c1, 90, False, 10)
        c2, _ = g.touch_consumer(b"c2", 300)
        cursor, claimed, deleted = g.autoclaim(s, c2, 0, 10, 300, count=2)
        assert cursor == got[2] and [e[1] for e in claimed] == [[b"k", b"0"], [b"k", b"1"]] and deleted == []
        cursor, claimed, _ = g.autoclaim(s, c2, cursor, 10, 300, count=2)
        assert cursor == got[4] and claimed[0][1] == [b"k", b"2"]
        cursor, claimed, _ = g.autoclaim(s, c2, cursor, 10, 300, count=1)
        assert cursor == 0 and claimed[0][1] == [b"k", b"4"]
        assert g.pel[got[0]].delivery_count == 2
        assert c2.active_time == 300 and len(c2.pel) == 5

    def test_autoclaim_deleted(self):
        s, g = group_stream(3)
        a, _ = g.touch_consumer(b"alice", 0)
        g.read_new(s, a, None, False, 0)
        s.delete([i("2")])
        b, _ = g.touch_consumer(b"bob", 0)
        assert g.autoclaim(s, b, 0, 0, 0) == (0, [(i("1"), [b"f", b"1"]), (i("3"), [b"f", b"3"])], [i("2")])
        assert not a.pel

    def test_autoclaim_deleted_with_count(self):
        s, g = group_stream(3)
        a, _ = g.touch_consumer(b"alice", 0)
        g.read_new(s, a, None, False, 0)
        s.delete([i("1")])
        s.delete([i("2")])
        b, _ = g.touch_consumer(b"bob", 0)
        assert g.autoclaim(s, b, 0, 0, 0, count=1) == (i("2"), [], [i("1")])
        assert g.autoclaim(s, b, i("2"), 0, 0, count=1) == (i("3"), [], [i("2")])
        assert g.autoclaim(s, b, i("3"), 0, 0, count=1) == (0, [(i("3"), [b"f", b"3"])], [])

    def test_autoclaim_trimmed_justid_and_attempts(self):
        s, g = group_stream(3, node_max_entries=2)
        a, _ = g.touch_consumer(b"alice", 0)
        g.read_new(s, a, None, False, 0)
        s.trim(maxlen=1)
        b, _ = g.touch_consumer(b"bob", 0)
        assert g.autoclaim(s, b, 0, 0, 0, justid=True) == (0, [i("3")], [i("1"), i("2")])
        assert g.pel[i("3")].delivery_count == 1
        s, g = group_stream(30)
        a, _ = g.touch_consumer(b"alice", 0)
        g.read_new(s, a, None, False, 100)
        # nothing idle enough: stops after count*10 = 20 attempts, cursor at the 21st
        assert g.autoclaim(s, a, 0, 1000, 200, count=2) == (i("21"), [], [])


class TestPendingOrder:
    """Every ordered view of the PELs stays in ID order through appends, acks, out-of-order claims
    and SETID re-delivery."""

    def test_out_of_order_claims_and_redelivery(self):
        s, g = group_stream(20)
        a, _ = g.touch_consumer(b"a", 0)
        b, _ = g.touch_consumer(b"b", 0)
        g.read_new(s, a, 10, False, 100)
        g.read_new(s, b, 10, False, 100)
        assert g.pending_range(0, MAX_ID, 5, 100, b"b") == [(i(str(k)), b"b", 0, 1) for k in range(11, 16)]
        g.claim(s, b, [i("7"), i("3")], 0, 200)  # older IDs behind b's newest
        assert list(b.pel) == [i("3"), i("7")] + [i(str(k)) for k in range(11, 21)]
        assert [r[0] for r in g.pending_range(i("4"), i("12"), 10, 200, b"b")] == [i("7"), i("11"), i("12")]
        assert [e for e, _ in g.read_history(s, b, i("5"), 2, 300)] == [i("7"), i("11")]
        g.ack([i("1"), i("2"), i("11")])
        assert g.pending_summary()[:3] == (17, i("3"), i("20"))
        cursor, got, _ = g.autoclaim(s, a, i("4"), 0, 400, count=3, justid=True)
        assert got == [i("4"), i("5"), i("6")] and cursor == i("7")
        cursor, got, _ = g.autoclaim(s, a, cursor, 0, 400, count=4, justid=True)
        assert got == [i("7"), i("8"), i("9"), i("10")] and cursor == i("12")
        assert list(a.pel) == [i(str(k)) for k in range(4, 11)]
        assert list(g.pel) == [i("3")] + [i(str(k)) for k in range(4, 21) if k != 11]
        g.set_id(0)  # re-delivery: 1..20 again, re-assigned to b in order
        g.ack([i("3")])
        g.read_new(s, b, 5, False, 500)
        assert list(b.pel) == [i(str(k)) for k in (*range(1, 6), *range(12, 21))]
        assert list(a.pel) == [i(str(k)) for k in range(6, 11)]
        assert list(g.pel) == [i(str(k)) for k in range(1, 21) if k != 11]
        full = g.info_full(s, 3)
        assert [r[0] for r in full["pending"]] == [i("1"), i("2"), i("3")]
        assert [r[0] for r in full["consumers"][1]["pending"]] == [i("1"), i("2"), i("3")]
        assert g.delete_consumer(b"a") == 5 and list(g.pel) == list(b.pel)


class TestLag:
    """Cases from redis tests/unit/type/stream-cgroups.tcl."""

    def test_empty_streams(self):
        s = Stream()
        s.create_group(b"g1", 0)
        assert s.max_deleted_id == 0 and s.entries_added == 0
        assert xinfo_group(s) == (None, 0)
        s.add([b"data", b"a"], now_ms=0, id=i("1"))
        s.delete([i("1")])
        assert s.max_deleted_id == i("1") and s.entries_added == 1
        assert xinfo_group(s) == (None, 0)

    def test_sanity(self):
        s = filled(5)
        g = s.create_group(b"g1", 0)
        assert xinfo_group(s) == (None, 5)
        c11, _ = g.touch_consumer(b"c11", 0)
        g.read_new(s, c11, 1, False, 0)
        assert xinfo_group(s) == (1, 4)
        c12, _ = g.touch_consumer(b"c12", 0)
        g.read_new(s, c12, 10, False, 0)
        assert xinfo_group(s) == (5, 0)
        s.add(F, now_ms=0, id=i("6"))
        assert xinfo_group(s) == (5, 1)

    def test_with_xdels(self):
        s = filled(5)
        s.delete([i("3")])
        g1 = s.create_group(b"g1", 0)
        s.create_group(b"g2", 0)
        assert xinfo_group(s) == (None, None)
        c, _ = g1.touch_consumer(b"c11", 0)
        for _ in range(3):
            g1.read_new(s, c, 1, False, 0)
            assert xinfo_group(s) == (None, None)
        g1.read_new(s, c, 1, False, 0)
        assert xinfo_group(s) == (5, 0)
        s.add(F, now_ms=0, id=i("6"))
        assert xinfo_group(s) == (5, 1)
        s.trim(minid=i("3"))
        assert xinfo_group(s) == (5, 1) and xinfo_group(s, b"g2") == (None, 3)
        s.trim(minid=i("5"))
        assert xinfo_group(s) == (5, 1) and xinfo_group(s, b"g2") == (None, 2)

    def test_entriesread_given(self):
        s = filled(4)
        g = s.create_group(b"g", LAST, 4)
        assert g.lag(s) == 0
        s.add(F, now_ms=0, id=i("9"))
        assert g.lag(s) == 1
        g.set_id(i("2"), 2)
        assert g.lag(s) == 3

    def test_group_info_rows(self):
        s, g = group_stream(3)
        c, _ = g.touch_consumer(b"c", 100)
        g.read_new(s, c, 1, False, 100)
        assert g.info(s) == {
            "name": b"g", "consumers": 1, "pending": 1, "last-delivered-id": i("1"),
            "entries-read": 1, "lag": 2,
        }
        assert g.consumers_info(150) == [{"name": b"c", "pending": 1, "idle": 50, "inactive": 50}]
        g.touch_consumer(b"b", 120)
        assert [r["name"] for r in g.consumers_info(150)] == [b"b", b"c"]
        assert g.consumers_info(150)[0]["inactive"] == -1
        full = g.info_full(s, 10)
        assert full["pending"] == [(i("1"), b"c", 100, 1)]
        assert full["consumers"][1]["pending"] == [(i("1"), 100, 1)]

    def test_seen_and_active_time(self):
        s, g = group_stream(2)
        c, _ = g.touch_consumer(b"c", 10)
        g.read_new(s, c, 1, False, 10)
        c, created = g.touch_consumer(b"c", 20)
        assert not created
        assert g.read_new(s, c, None, True, 20)  # NOACK read: seen, not active
        assert (c.seen_time, c.active_time) == (20, 10)
        g.touch_consumer(b"c", 30)
        assert g.read_new(s, c, None, False, 30) == []
        assert (c.seen_time, c.active_time) == (30, 10)
