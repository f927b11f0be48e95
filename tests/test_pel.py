"""PendingList and PendingIds (streams/pel.py) against a plain dict / set, sorted on every read:
every mode and switch."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from streams import pel as pel_module
from streams.pel import PendingIds, PendingList


class Shifted:
    """A PendingList or PendingIds seen through IDs k -> k << 64 (ms k, seq 0): the models'
    small IDs become IDs whose mixed keys differ from them, so that a list past _MIX_AT
    converts between the two on every call."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            args = tuple(_up(a) for a in args)
            result = attr(*args, **kwargs)
            return result if name == "discard_many" else _down(result)  # a count, not an ID
        return call

    def __len__(self) -> int:
        return len(self.inner)

    def __bool__(self) -> bool:
        return bool(self.inner)

    def __contains__(self, k: int) -> bool:
        return k << 64 in self.inner

    def __getitem__(self, k: int) -> Any:
        return self.inner[k << 64]

    def __setitem__(self, k: int, v: Any) -> None:
        self.inner[k << 64] = v

    def __delitem__(self, k: int) -> None:
        del self.inner[k << 64]

    def __iter__(self) -> Any:
        return (eid >> 64 for eid in self.inner)


def _up(a: Any) -> Any:
    if isinstance(a, int) and not isinstance(a, bool):
        return a << 64
    if isinstance(a, list) and a and isinstance(a[0], int):
        return [x << 64 for x in a]
    return a


def _down(r: Any) -> Any:
    if isinstance(r, int) and not isinstance(r, bool):
        return r >> 64
    if hasattr(r, "__next__"):
        return (_down(x) for x in r)
    if isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], int):
        return (r[0] >> 64, r[1])
    return r


SHIFTED = False  # set by the mixing fixture


def new_list(cls: type) -> Any:
    return Shifted(cls()) if SHIFTED else cls()


class PelModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.pel = new_list(PendingList)
        self.model: dict[int, object] = {}
        self.top = 0

    @rule(n=st.integers(min_value=1, max_value=40))
    def deliver_new(self, n: int) -> None:
        # XREADGROUP >: IDs above everything delivered so far
        for _ in range(n):
            self.top += 1
            self.pel[self.top] = self.model[self.top] = object()

    @rule(n=st.integers(min_value=1, max_value=40))
    def deliver_new_batch(self, n: int) -> None:
        # XREADGROUP > in one step: IDs above everything the list holds (not only above `top`,
        # so that the IDs given up by acks at the tail can come back)
        start = max(self.model, default=0) + 1
        eids = list(range(start, start + n))
        values = [object() for _ in eids]
        self.pel.extend_new(eids, values)
        self.model.update(zip(eids, values, strict=True))
        self.top = max(self.top, eids[-1])

    @rule(eid=st.integers(min_value=1, max_value=400))
    def insert_any(self, eid: int) -> None:
        # XCLAIM / FORCE / re-delivery: any ID, possibly below the last, possibly already there
        self.pel[eid] = self.model[eid] = object()
        self.top = max(self.top, eid)

    @rule(data=st.data())
    def ack_oldest(self, data: st.DataObject) -> None:
        k = data.draw(st.integers(min_value=1, max_value=30))
        for eid in sorted(self.model)[:k]:
            assert self.pel.pop(eid) is self.model.pop(eid)

    @rule(eid=st.integers(min_value=0, max_value=400))
    def ack_any(self, eid: int) -> None:
        assert self.pel.pop(eid, None) is self.model.pop(eid, None)

    @rule(data=st.data())
    def ack_newest(self, data: st.DataObject) -> None:
        k = data.draw(st.integers(min_value=1, max_value=10))
        for eid in sorted(self.model)[-k:]:
            del self.pel[eid]
            del self.model[eid]

    @rule(data=st.data())
    def ack_batch(self, data: st.DataObject) -> None:
        # XACK with several IDs: pending or not, repeated, in any order
        eids = data.draw(st.lists(
            st.sampled_from(sorted(self.model)) | st.integers(min_value=0, max_value=420),
            max_size=12) if self.model else st.lists(st.integers(0, 420), max_size=3))
        expected = []
        for eid in eids:
            if eid in self.model:
                expected.append(self.model.pop(eid))
        got = self.pel.pop_many(eids)
        assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected, strict=True))

    @rule(data=st.data())
    def ack_oldest_batch(self, data: st.DataObject) -> None:
        # The usual XACK: the oldest pending IDs, in delivery order
        k = data.draw(st.integers(min_value=1, max_value=30))
        eids = sorted(self.model)[:k]
        expected = [self.model.pop(eid) for eid in eids]
        got = self.pel.pop_many(eids)
        assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected, strict=True))

    @rule(lo=st.none() | st.integers(min_value=0, max_value=420),
          hi=st.none() | st.integers(min_value=0, max_value=420))
    def irange(self, lo: int | None, hi: int | None) -> None:
        want = [k for k in sorted(self.model)
                if (lo is None or k >= lo) and (hi is None or k <= hi)]
        assert list(self.pel.irange(lo, hi)) == want

    def inner_items(self) -> Any:
        pel = self.pel.inner if SHIFTED else self.pel
        return list(pel.items())

    @invariant()
    def same_content(self) -> None:
        keys = sorted(self.model)
        assert len(self.pel) == len(keys)
        assert bool(self.pel) == bool(keys)
        assert list(self.pel) == keys
        assert [(_down(k) if SHIFTED else k, v) for k, v in self.inner_items()] == \
            [(k, self.model[k]) for k in keys]
        assert self.pel.first() == (keys[0] if keys else None)
        assert self.pel.last() == (keys[-1] if keys else None)
        for k in keys[:3]:
            assert k in self.pel and self.pel[k] is self.model[k] and self.pel.get(k) is self.model[k]


class IdsModel(RuleBasedStateMachine):
    """A consumer's PendingIds against a set."""

    def __init__(self) -> None:
        super().__init__()
        self.ids = new_list(PendingIds)
        self.model: set[int] = set()

    @rule(n=st.integers(min_value=1, max_value=40))
    def deliver_batch(self, n: int) -> None:
        start = max(self.model, default=0) + 1
        eids = list(range(start, start + n))
        self.ids.extend_new(eids)
        self.model.update(eids)

    @rule(eid=st.integers(min_value=1, max_value=400))
    def add_any(self, eid: int) -> None:
        self.ids.add(eid)
        self.model.add(eid)

    @rule(data=st.data())
    def discard_oldest(self, data: st.DataObject) -> None:
        k = data.draw(st.integers(min_value=1, max_value=30))
        eids = sorted(self.model)[:k]
        assert self.ids.discard_many(eids) == len(eids)
        self.model.difference_update(eids)

    @rule(data=st.data())
    def discard_newest(self, data: st.DataObject) -> None:
        k = data.draw(st.integers(min_value=1, max_value=10))
        for eid in sorted(self.model)[-k:]:
            assert self.ids.discard(eid)
            self.model.discard(eid)

    @rule(eids=st.lists(st.integers(min_value=0, max_value=420), max_size=12))
    def discard_any(self, eids: list[int]) -> None:
        expected = 0
        for eid in eids:
            if eid in self.model:
                self.model.discard(eid)
                expected += 1
        assert self.ids.discard_many(eids) == expected

    @rule(lo=st.none() | st.integers(min_value=0, max_value=420),
          hi=st.none() | st.integers(min_value=0, max_value=420))
    def irange(self, lo: int | None, hi: int | None) -> None:
        want = [k for k in sorted(self.model)
                if (lo is None or k >= lo) and (hi is None or k <= hi)]
        assert list(self.ids.irange(lo, hi)) == want

    @invariant()
    def same_content(self) -> None:
        keys = sorted(self.model)
        assert len(self.ids) == len(keys) and bool(self.ids) == bool(keys)
        assert list(self.ids) == keys
        for k in keys[:3] + keys[-3:]:
            assert k in self.ids
        assert (keys[-1] + 1 if keys else 0) not in self.ids


class IdsMixingModel(IdsModel):
    @rule(mixed=st.booleans())
    def follow_group_mode(self, mixed: bool) -> None:
        self.ids.inner.set_mixed(mixed)

    @rule(n=st.integers(min_value=1, max_value=20), mixed=st.booleans())
    def deliver_keys(self, n: int, mixed: bool) -> None:
        start = max(self.model, default=0) + 1
        eids = list(range(start, start + n))
        keys = [pel_module.mix(e << 64) if mixed else e << 64 for e in eids]
        self.ids.inner.extend_keys(keys, mixed)
        self.model.update(eids)


@pytest.fixture
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    # Small enough that the sorted mode and the rebuilds happen within a few dozen steps.
    monkeypatch.setattr(pel_module, "_SMALL", 8)
    monkeypatch.setattr(pel_module, "_SLACK", 4)


def test_model_with_production_limits() -> None:
    run_state_machine_as_test(PelModel, settings=settings(
        max_examples=150, stateful_step_count=60, deadline=None,
        suppress_health_check=list(HealthCheck)))


def test_model_with_small_limits(small_limits: None) -> None:
    run_state_machine_as_test(PelModel, settings=settings(
        max_examples=300, stateful_step_count=60, deadline=None,
        suppress_health_check=list(HealthCheck)))


def test_ids_model_with_production_limits() -> None:
    run_state_machine_as_test(IdsModel, settings=settings(
        max_examples=150, stateful_step_count=60, deadline=None,
        suppress_health_check=list(HealthCheck)))


def test_ids_model_with_small_limits(small_limits: None) -> None:
    run_state_machine_as_test(IdsModel, settings=settings(
        max_examples=300, stateful_step_count=60, deadline=None,
        suppress_health_check=list(HealthCheck)))


@pytest.fixture
def mixing(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # Lists past 16 entries switch to mixed keys, with IDs whose keys differ from them.
    global SHIFTED
    monkeypatch.setattr(pel_module, "_SMALL", 8)
    monkeypatch.setattr(pel_module, "_SLACK", 4)
    monkeypatch.setattr(pel_module, "_MIX_AT", 16)
    SHIFTED = True
    yield
    SHIFTED = False


def test_model_with_mixed_keys(mixing: None) -> None:
    run_state_machine_as_test(PelModel, settings=settings(
        max_examples=300, stateful_step_count=60, deadline=None,
        suppress_health_check=list(HealthCheck)))


def test_ids_model_with_mixed_keys(mixing: None) -> None:
    # The consumer's list follows a group's mode: switched now and then, as extend_keys does.
    run_state_machine_as_test(IdsMixingModel, settings=settings(
        max_examples=300, stateful_step_count=60, deadline=None,
        suppress_health_check=list(HealthCheck)))


def test_ids_in_order_traffic_stays_bounded() -> None:
    ids = PendingIds()
    top = 0
    for _ in range(2000):
        batch = list(range(top + 1, top + 11))
        top += 10
        ids.extend_new(batch)
        assert ids.discard_many(batch) == 10
    assert not ids and len(ids._order) <= 200


def test_in_order_traffic_stays_in_append_mode_and_bounded() -> None:
    # The XREADGROUP > / XACK cycle: no sorted mode, and the slot list does not grow with history.
    p = PendingList()
    for base in range(0, 100_000, 10):
        for eid in range(base, base + 10):
            p[eid] = eid
        for eid in range(base, base + 10, 2):  # acked out of order within the batch
            p.pop(eid)
        for eid in range(base + 1, base + 10, 2):
            p.pop(eid)
    assert len(p) == 0 and list(p) == []
    assert p._sorted is None and len(p._order) == 0
    for eid in range(1000):
        p[eid] = eid
    for eid in range(0, 1000, 3):
        p.pop(eid)
    assert p._sorted is None and len(p._order) <= 2 * len(p) + pel_module._SLACK
    assert list(p) == [e for e in range(1000) if e % 3]


def test_long_list_switches_to_sorted_mode_and_back() -> None:
    p = PendingList()
    for eid in range(10, 2000):
        p[eid] = eid
    p[5] = 5  # below the first ID with no stale slot in front: cannot stay a plain list
    assert p._sorted is not None
    p[1000] = "again"  # an existing ID keeps its place
    assert list(p.irange(4, 11)) == [5, 10, 11] and p[1000] == "again"
    for eid in list(p):
        p.pop(eid)
    assert p._sorted is None and p.first() is None
    p[1] = 1
    assert list(p) == [1] and p._sorted is None


def test_pop_missing_raises_without_default() -> None:
    p = PendingList()
    with pytest.raises(KeyError):
        p.pop(1)
    with pytest.raises(KeyError):
        del p[1]
    assert p.pop(1, "x") == "x"


def test_bursty_ids_past_the_mixing_size() -> None:
    """IDs of writes in bursts (many per millisecond) collide in a plain int-keyed dict; a PEL
    that grows past _MIX_AT re-keys its map. Everything must read the same before and after."""
    rng = random.Random(7)
    ids = [(1_700_000_000_000 + ms) << 64 | seq for ms in range(40) for seq in range(150)]
    pel = PendingList()
    model: dict[int, object] = {}
    for lo in range(0, len(ids), 100):
        batch = ids[lo:lo + 100]
        values = [object() for _ in batch]
        pel.extend_new(batch, values)
        model.update(zip(batch, values, strict=True))
        for eid in rng.sample(sorted(model), 10):
            assert pel.pop(eid) is model.pop(eid)
        eid = rng.choice(ids[:lo + 100])
        pel[eid] = model[eid] = object()  # an insertion below the last ID, or a replacement
    assert pel.mixed
    assert list(pel.items()) == sorted(model.items(), key=lambda kv: kv[0])
    assert all(pel[eid] is v and eid in pel for eid, v in model.items())
    assert all(eid not in pel for eid in ids if eid not in model)
    first = sorted(model)[:50]
    assert [pe is model[eid] for eid, pe in zip(first, pel.pop_many(first), strict=True)] == [True] * 50
    for eid in first:
        del model[eid]
    assert len(pel) == len(model)
    assert pel.pop_many(list(model)) and not pel and not pel.mixed
