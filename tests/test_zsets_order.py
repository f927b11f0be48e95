"""The sorted-set order structure against a plain sorted list, under random operations."""

from __future__ import annotations

from bisect import bisect_left

from hypothesis import given, settings
from hypothesis import strategies as st

from zsets import order as order_module
from zsets.order import Order

PAIRS = st.tuples(st.integers(-30, 30).map(float), st.binary(max_size=2))
OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), PAIRS),
    st.tuples(st.just("remove"), st.integers(0, 10**6)),
    st.tuples(st.just("pop"), st.booleans()),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(0, 60)),
), max_size=400)


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_order_matches_a_sorted_list(ops: list[tuple]) -> None:
    saved = order_module.LOAD
    order_module.LOAD = 4  # small blocks: splits and merges happen all the time
    try:
        o = Order()
        model: list[tuple[float, bytes]] = []
        for op in ops:
            if op[0] == "add":
                if op[1] in model:
                    continue
                o.add(*op[1])
                model.insert(bisect_left(model, op[1]), op[1])
            elif op[0] == "remove" and model:
                pair = model.pop(op[1] % len(model))
                o.remove(*pair)
            elif op[0] == "pop" and model:
                assert o.pop(op[1]) == model.pop(-1 if op[1] else 0)
            elif op[0] == "delete" and model:
                start = op[1] % len(model)
                stop = min(len(model), start + 1 + op[2])
                o.delete_range(start, stop)
                del model[start:stop]
            assert len(o) == len(model)
            assert list(o) == model
        for i, pair in enumerate(model):
            assert o.at(i) == pair and o.index(*pair) == i
            assert o.bisect_left(*pair) == i
        n = len(model)
        for start in range(-2, n + 2, 3):
            for stop in range(start, n + 3, 4):
                assert list(o.islice(start, stop)) == model[max(start, 0):max(stop, 0)]
                assert list(o.islice(start, stop, True)) == model[max(start, 0):max(stop, 0)][::-1]
        assert list(o.copy()) == model
        loaded = Order()
        loaded.load_sorted([score for score, _ in model], [member for _, member in model])
        assert list(loaded) == model and len(loaded) == len(model)
        for i, pair in enumerate(model):
            assert loaded.at(i) == pair and loaded.index(*pair) == i
    finally:
        order_module.LOAD = saved
