"""The hash engine on its own: packing, Redis's conversion rules and encodings, copies."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hashes import Hash
from hashes.hash import PACK_MAX_FIELDS, pack, unpack


@given(st.lists(st.binary(max_size=300), max_size=40))
@settings(max_examples=200, deadline=None)
def test_pack_round_trips_any_lengths(items: list[bytes]) -> None:
    # Lengths of 128 and more take a multi-byte prefix.
    assert unpack(pack(items)) == items


def test_pack_of_many_items_and_long_items() -> None:
    # Either one needs the long form: 255 items, or an item of 255 bytes.
    many = [b"%d" % i for i in range(300)]
    assert unpack(pack(many)) == many
    for size in (254, 255, 256, 20000):
        items = [b"f", b"x" * size, b"", b"y"]
        assert unpack(pack(items)) == items
        h = Hash()
        h.set_pairs(items, 0, 512, 100000)
        assert h.get(b"f") == b"x" * size and h.get(b"") == b"y" and h.get(b"z") is None
        assert len(h) == 2


@given(st.lists(st.tuples(st.sampled_from([b"a", b"b", b"c", b"d" * 130, b"", b"e" * 300]),
                          st.binary(max_size=300)), max_size=60))
@settings(max_examples=200, deadline=None)
def test_behaves_like_an_ordered_dict(ops: list[tuple[bytes, bytes]]) -> None:
    h = Hash()
    model: dict[bytes, bytes] = {}
    for i, (field, value) in enumerate(ops):
        if i % 3 == 2:
            assert h.delete(field) == (field in model)
            model.pop(field, None)
        else:
            assert h.set(field, value, 512, 1000) == (field not in model)
            model[field] = value
        assert h.as_dict() == model
        assert list(h.as_dict()) == list(model)
        assert len(h) == len(model)
        for f in (b"a", b"d" * 130, b"e" * 300, b"zz", b""):
            assert h.get(f) == model.get(f)


def test_conversion_past_entries_and_never_back() -> None:
    h = Hash()
    h.set_pairs([b"f%d" % i if j == 0 else b"v" for i in range(4) for j in range(2)], 0, 4, 64)
    assert h.encoding() == b"listpack" and len(h) == 4
    h.set(b"f9", b"v", 4, 64)
    assert h.encoding() == b"hashtable"
    h.delete_many([b"f0", b"f1", b"f2", b"f3"])
    assert len(h) == 1 and h.encoding() == b"hashtable"


def test_conversion_by_argument_count_even_for_duplicates() -> None:
    # hashTypeTryConversion counts the pairs of the command, not the distinct fields.
    h = Hash()
    assert h.set_pairs([b"f", b"1", b"f", b"2", b"f", b"3"], 0, 2, 64) == 1
    assert h.encoding() == b"hashtable" and h.get(b"f") == b"3"


def test_conversion_by_value_length() -> None:
    h = Hash()
    h.set(b"f", b"x" * 64, 512, 64)
    assert h.encoding() == b"listpack"
    h.set(b"g", b"x" * 65, 512, 64)
    assert h.encoding() == b"hashtable"
    big_field = Hash()
    big_field.set(b"y" * 65, b"1", 512, 64)
    assert big_field.encoding() == b"hashtable"


def test_large_listpack_is_stored_as_dict_but_reported_as_listpack() -> None:
    h = Hash()
    for i in range(PACK_MAX_FIELDS + 5):
        h.set(b"f%d" % i, b"v", 512, 64)
    assert isinstance(h.data, dict) and h.encoding() == b"listpack"
    assert h.fields()[:2] == [b"f0", b"f1"]


def test_listpackex_after_expiration_is_touched_and_kept() -> None:
    h = Hash()
    h.set(b"f", b"v", 512, 64)
    h.make_expirable()
    assert h.encoding() == b"listpackex"
    h.set_expire_time(b"f", 100)
    assert h.persist(b"f") and not h.persist(b"f")
    assert h.encoding() == b"listpackex"


def test_set_clears_ttl_unless_kept_and_delete_drops_it() -> None:
    h = Hash()
    h.set_pairs([b"a", b"1", b"b", b"2"], 0, 512, 64)
    h.set_expire_time(b"a", 10)
    h.set_expire_time(b"b", 20)
    h.set(b"a", b"3", 512, 64, keep_ttl=True)
    assert h.expire_time(b"a") == 10
    h.set(b"a", b"4", 512, 64)
    assert h.expire_time(b"a") is None
    assert h.min_expire() == 20
    assert h.expired_fields(21) == [b"b"] and h.expired_fields(20) == []
    h.delete(b"b")
    assert h.min_expire() is None


def test_copy_is_independent() -> None:
    for n in (3, PACK_MAX_FIELDS + 3):
        h = Hash()
        for i in range(n):
            h.set(b"f%d" % i, b"v", 512, 64)
        h.set_expire_time(b"f0", 99)
        c = h.copy()
        c.set(b"f1", b"changed", 512, 64)
        c.set_expire_time(b"f2", 5)
        c.delete(b"f0")
        assert h.get(b"f1") == b"v" and h.get(b"f0") == b"v"
        assert h.expire_time(b"f2") is None and h.expire_time(b"f0") == 99
        assert c.encoding() == h.encoding()


def test_rewriting_every_field_in_order() -> None:
    h = Hash()
    h.set_pairs([b"HSET", b"k", b"a", b"1", b"b", b"2"], 2, 512, 64)
    h.set_expire_time(b"a", 10)
    h.set_expire_time(b"b", 20)
    assert h.set_pairs([b"HSET", b"k", b"a", b"x", b"b", b"y"], 2, 512, 64, keep_ttl=True) == 0
    assert h.flat() == [b"a", b"x", b"b", b"y"] and h.min_expire() == 10
    assert h.set_pairs([b"a", b"3", b"b", b"4"], 0, 512, 64) == 0
    assert h.flat() == [b"a", b"3", b"b", b"4"] and h.min_expire() is None
    # Same fields in another order: values replaced in place, the order kept.
    assert h.set_pairs([b"b", b"5", b"a", b"6"], 0, 512, 64) == 0
    assert h.flat() == [b"a", b"6", b"b", b"5"]


@given(st.lists(st.lists(st.tuples(st.sampled_from([b"ab", b"ba", b"a", b"", b"abc", b"x" * 254]),
                                   st.binary(max_size=260)), min_size=1, max_size=4),
                max_size=12))
@settings(max_examples=200, deadline=None)
def test_whole_records_rewritten_like_an_ordered_dict(records: list[list[tuple[bytes, bytes]]]) -> None:
    # HSET of several pairs at once, often the same fields again (compared in place while the
    # hash stays packed), fields of equal length but other bytes, values that need the long form.
    h = Hash()
    model: dict[bytes, bytes] = {}
    for pairs in records:
        flat = [b"HSET", b"k"] + [x for pair in pairs for x in pair]
        created = h.set_pairs(flat, 2, 512, 1000)
        new = {f for f, _ in pairs if f not in model}
        for field, value in pairs:
            model[field] = value
        assert created == len(new)
        assert list(h.as_dict().items()) == list(model.items())
