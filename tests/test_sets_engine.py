"""The set engine (sets/): Redis 7.4's encodings and conversions (t_set.c setTypeCreate,
setTypeAdd, setTypeMaybeConvert, SINTERSTORE/SUNIONSTORE/SDIFFSTORE destinations, SPOP's new set),
the names OBJECT ENCODING reports through the value-type registry, and member order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import server.commands.sets  # noqa: F401  (registers the set type)
from server import value_types
from server.config import Config
from sets import (
    HASHTABLE,
    INTSET,
    LISTPACK,
    Limits,
    Set,
    as_int,
    intersection,
    intersection_store,
    pop_many,
    random_distinct,
    union_or_diff,
)

L = Limits()


def encoding(s: Set) -> bytes:
    return value_types.of(s).encoding(s, Config())


def sadd(s: Set | None, *members: bytes | str | int, limits: Limits = L) -> Set:
    """What SADD does: create for the first member and the argument count, or pre-convert."""
    args = [m if isinstance(m, bytes) else str(m).encode() for m in members]
    if s is None:
        s = Set.create(args[0], len(args), limits)
    else:
        s.maybe_convert(len(args), limits)
    for m in args:
        s.add(m, limits)
    return s


def test_as_int_is_string2ll() -> None:
    assert as_int(b"0") == 0 and as_int(b"-1") == -1 and as_int(b"123") == 123
    assert as_int(b"9223372036854775807") == 2**63 - 1
    assert as_int(b"-9223372036854775808") == -(2**63)
    for bad in (b"", b"-", b"-0", b"01", b"+1", b" 1", b"1 ", b"9223372036854775808",
                b"-9223372036854775809", b"1.0", b"0x1", b"\xd9\xa1"):
        assert as_int(bad) is None, bad


def test_intset_sorted_and_converts_past_its_limit() -> None:
    limits = Limits(intset_entries=5)
    s = sadd(None, 5, -3, 100, 0, limits=limits)
    assert encoding(s) == b"intset" and list(s.members()) == [b"-3", b"0", b"5", b"100"]
    sadd(s, 7, limits=limits)
    assert encoding(s) == b"intset"
    sadd(s, 8, limits=limits)
    assert encoding(s) == b"hashtable"
    for m in (b"8", b"7", b"5"):
        s.remove(m)
    assert encoding(s) == b"hashtable"  # no conversion back


def test_registry_name_and_copy() -> None:
    s = sadd(None, "b", "a")
    vt = value_types.of(s)
    assert vt.name == b"set" and encoding(s) == b"listpack"
    c = vt.copy(s)
    c.add(b"c", L)
    assert list(s.members()) == [b"b", b"a"] and list(c.members()) == [b"b", b"a", b"c"]
    assert encoding(c) == b"listpack"
    i = sadd(None, 3, 1)
    assert encoding(vt.copy(i)) == b"intset"


def test_rewrite_batches_of_64() -> None:
    s = sadd(None, *range(130))
    cmds = list(value_types.of(s).rewrite(b"k", s))
    assert [len(c) - 2 for c in cmds] == [64, 64, 2]
    assert all(c[:2] == [b"SADD", b"k"] for c in cmds)
    assert [m for c in cmds for m in c[2:]] == [str(i).encode() for i in range(130)]


def test_non_canonical_integers_are_strings() -> None:
    s = sadd(None, "1", "01", "-0", "+2", " 3")
    assert encoding(s) == b"listpack"
    assert list(s.members()) == [b"1", b"01", b"-0", b"+2", b" 3"]
    assert encoding(sadd(None, "9223372036854775807", "-9223372036854775808")) == b"intset"
    assert encoding(sadd(None, "9223372036854775808")) == b"listpack"


def test_intset_to_listpack_puts_the_sorted_integers_first() -> None:
    s = sadd(None, 3, 1, 2)
    sadd(s, "b", "a", 0)
    assert encoding(s) == b"listpack"
    assert list(s.members()) == [b"1", b"2", b"3", b"b", b"a", b"0"]


def test_sadd_size_hint() -> None:
    assert encoding(sadd(None, *(["x"] * 129))) == b"hashtable"  # even if they repeat
    assert encoding(sadd(None, *range(200))) == b"intset"
    assert encoding(sadd(None, *range(513))) == b"hashtable"
    assert encoding(sadd(sadd(None, "x"), *(["x"] * 129))) == b"hashtable"
    assert encoding(sadd(sadd(None, 1), *([1] * 513))) == b"hashtable"
    assert encoding(sadd(sadd(None, 1), *([1] * 512))) == b"intset"
    # The first member decides between intset and listpack.
    assert encoding(sadd(None, "a", 1)) == b"listpack"


def test_listpack_limits() -> None:
    s = sadd(None, *[f"m{i}" for i in range(128)])
    assert encoding(s) == b"listpack"
    assert encoding(sadd(s, "one-more")) == b"hashtable"
    v = sadd(None, "x" * 64)
    assert encoding(v) == b"listpack"
    assert encoding(sadd(v, "y" * 65)) == b"hashtable"
    assert encoding(sadd(None, "y" * 65)) == b"hashtable"
    # An intset of 128 members cannot become a listpack; of 127 it can.
    assert encoding(sadd(sadd(None, *range(128)), "str")) == b"hashtable"
    assert encoding(sadd(sadd(None, *range(127)), "str")) == b"listpack"
    # Its integers must also fit a listpack value.
    short = Limits(listpack_value=3)
    assert encoding(sadd(sadd(None, 12345, limits=short), "ab", limits=short)) == b"hashtable"
    assert encoding(sadd(sadd(None, 123, limits=short), "ab", limits=short)) == b"listpack"


def test_listpack_order_after_deletions() -> None:
    s = sadd(None, "a", "b", "c", "d")
    s.remove(b"b")
    sadd(s, "b", "e")
    assert list(s.members()) == [b"a", b"c", b"d", b"b", b"e"]


def test_intersection_store_encodings() -> None:
    ints = sadd(None, *range(10))
    strs = sadd(None, "a", "b", *range(5))
    big = sadd(None, *[f"m{i}" for i in range(200)], *range(5))
    assert encoding(intersection_store([ints, strs], L)) == b"intset"
    assert encoding(intersection_store([big, big], L)) == b"hashtable"
    # From a listpack, integers only: converted to an intset at the end.
    d = intersection_store([strs, big], L)
    assert encoding(d) == b"intset" and len(d) == 5
    strs2 = sadd(None, "a", "b", "c")
    sadd(big, "b", "a")
    d = intersection_store([strs2, big], L)
    assert encoding(d) == b"listpack" and list(d.members()) == [b"a", b"b"]
    assert intersection([strs2, big]) == [b"a", b"b"]
    assert intersection([big, strs2], limit=1) == [b"a"]


def test_union_store_starts_as_an_intset() -> None:
    a = sadd(None, 3, 1, 2)
    b = sadd(None, "x", 0)
    u = union_or_diff([a, b], diff=False, store=True, limits=L)
    assert encoding(u) == b"listpack"
    assert list(u.members()) == [b"1", b"2", b"3", b"x", b"0"]
    assert encoding(union_or_diff([a, None], diff=False, store=True, limits=L)) == b"intset"
    # Not stored: a hashtable unless every input is an intset.
    assert encoding(union_or_diff([a, b], diff=False, store=False, limits=L)) == b"hashtable"
    assert encoding(union_or_diff([a, None, a], diff=False, store=False, limits=L)) == b"intset"


def test_diff_algorithms_and_their_encodings() -> None:
    first = [f"m{i}" for i in range(200)]
    a = sadd(None, *first)
    b = sadd(None, *first[:100])
    c = sadd(None, "zz")
    e = sadd(None, "zz")
    # Copy-then-remove (estimated cheaper here) passes through a hashtable of 200 members.
    d = union_or_diff([a, b, c, e], diff=True, store=True, limits=L)
    assert len(d) == 100 and encoding(d) == b"hashtable"
    # Testing each member of the first set only appends the survivors: a listpack.
    d = union_or_diff([a, b], diff=True, store=True, limits=L)
    assert len(d) == 100 and encoding(d) == b"listpack"
    assert set(d.members()) == {m.encode() for m in first[100:]}
    assert len(union_or_diff([a, a], diff=True, store=True, limits=L)) == 0
    assert len(union_or_diff([None, a], diff=True, store=True, limits=L)) == 0


def test_pop_many_of_a_hashtable_can_leave_a_listpack() -> None:
    s = sadd(None, *[f"m{i}" for i in range(200)])
    before = set(s.members())
    popped = pop_many(s, 190, L)
    assert len(popped) == 190 and len(s) == 10 and encoding(s) == b"listpack"
    assert set(popped) | set(s.members()) == before and not set(popped) & set(s.members())
    i = sadd(None, *range(100))
    pop_many(i, 95, L)
    assert encoding(i) == b"intset" and len(i) == 5
    few = sadd(None, *[f"m{i}" for i in range(200)])
    pop_many(few, 3, L)
    assert encoding(few) == b"hashtable" and len(few) == 197


def test_pop_many_of_a_listpack_keeps_the_order() -> None:
    names = [f"m{i}".encode() for i in range(30)]
    for count in (3, 25):
        s = sadd(None, *names)
        popped = pop_many(s, count, L)
        rest = list(s.members())
        assert popped == [n for n in names if n in popped]
        assert rest == [n for n in names if n not in popped]
        assert encoding(s) == b"listpack"


def test_random_distinct() -> None:
    lp = sadd(None, *[f"m{i}" for i in range(50)])
    got = random_distinct(lp, 10)
    order = list(lp.members())
    assert len(set(got)) == 10 and got == sorted(got, key=order.index)
    ht = sadd(None, *range(1000))
    assert len(set(random_distinct(ht, 100))) == 100


_members = st.one_of(st.integers(-5, 40).map(lambda i: str(i).encode()),
                     st.sampled_from([b"a", b"b", b"c", b"01", b"-0", b"x" * 70]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(_members, min_size=1, max_size=6)),
                max_size=30))
def test_model_of_order_and_membership(ops: list[tuple[bool, list[bytes]]]) -> None:
    """Against a model: an intset lists its members ascending, a listpack in insertion order
    with deletions closing the gap; membership is exact in every encoding."""
    limits = Limits(intset_entries=20, listpack_entries=12, listpack_value=64)
    s: Set | None = None
    model: list[bytes] = []
    for is_add, args in ops:
        if is_add:
            if s is None:
                s = Set.create(args[0], len(args), limits)
            else:
                s.maybe_convert(len(args), limits)
            for m in args:
                was = s.enc
                assert s.add(m, limits) == (m not in model)
                if m not in model:
                    if was == INTSET and s.enc == LISTPACK:
                        model.sort(key=int)  # the intset's members go first, ascending
                    model.append(m)
        elif s is not None:
            for m in args:
                assert s.remove(m) == (m in model)
                if m in model:
                    model.remove(m)
        if s is None:
            continue
        assert len(s) == len(model)
        assert set(s.members()) == set(model)
        assert all(s.contains(m) for m in model)
        assert not s.contains(b"never")
        if s.enc == INTSET:
            assert list(s.members()) == sorted(model, key=int)
        elif s.enc == LISTPACK:
            assert list(s.members()) == model
            assert len(model) <= limits.listpack_entries
            assert all(len(m) <= limits.listpack_value for m in model)
        else:
            assert s.enc == HASHTABLE


def test_random_picks_of_a_large_hashtable_follow_its_changes() -> None:
    s = sadd(None, *[f"m{i}" for i in range(1000)])
    assert s.enc == HASHTABLE
    assert s.random_member() in s.data  # lists the members for later picks
    s.add(b"new", L)
    assert b"new" in {s.random_member() for _ in range(20000)}
    for i in range(900):
        s.remove(f"m{i}".encode())
    picks = {s.random_member() for _ in range(5000)}
    assert picks <= s.data and len(picks) == len(s)
    few = random_distinct(s, 10)
    assert len(set(few)) == 10 and set(few) <= s.data
    before = set(s.data)
    popped = pop_many(s, 5, L)
    assert len(set(popped)) == 5 and set(popped) <= before
    assert set(s.data) == before - set(popped)
    assert s.pop_random() in before and len(s) == len(before) - 6


# Cases of Redis 7.4's tests/unit/type/set.tcl, on the engine.


def test_intset_and_listpack_overflow_however_filled() -> None:
    ints = [str(i) for i in range(512)]
    for s in (None, sadd(None, 1)):
        full = sadd(s, *ints)
        assert encoding(full) == b"intset" and len(full) == 512
        assert encoding(sadd(full, 512)) == b"hashtable"
    one_by_one = sadd(None, 0)
    for i in ints[1:]:
        sadd(one_by_one, i)
    assert encoding(one_by_one) == b"intset"
    assert encoding(sadd(one_by_one, 512)) == b"hashtable"
    small = [str(i) for i in range(127)]
    for s in (sadd(None, "a", *small), sadd(sadd(None, "a"), "a", *small)):
        assert encoding(s) == b"listpack" and len(s) == 128
        assert encoding(sadd(s, "b")) == b"hashtable"


def test_integer_beyond_64_bits() -> None:
    big = "213244124402402314402033402"
    s = sadd(None, big)
    assert encoding(s) == b"listpack" and s.contains(big.encode())
    large = sadd(None, *range(130))
    assert encoding(sadd(large, big)) == b"hashtable" and large.contains(big.encode())


def test_sinterstore_results_of_integers_become_intsets() -> None:
    a = sadd(None, *"a b c 1 3 6 x y z".split())
    b = sadd(None, *"e f g 1 2 3 u v w".split())
    d = intersection_store([a, b], L)
    assert encoding(d) == b"intset" and list(d.members()) == [b"1", b"3"]
    a = sadd(None, "a", "b", "c", 444, 555, 666, *range(1, 130))
    b = sadd(None, "e", "f", "g", 111, 222, 333, *range(1, 130))
    assert encoding(a) == encoding(b) == b"hashtable"
    d = intersection_store([a, b], L)
    assert encoding(d) == b"intset" and list(d.members()) == [b"%d" % i for i in range(1, 130)]


def test_same_integers_in_different_encodings() -> None:
    a = sadd(None, 1, 2, 3)
    b = sadd(None, 1, 2, 3, "a")
    b.remove(b"a")
    assert encoding(a) == b"intset" and encoding(b) == b"listpack"
    assert intersection([a, b]) == [b"1", b"2", b"3"]
