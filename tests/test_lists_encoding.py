"""The list's storage: listpack <-> quicklist conversions as Redis 7.4 makes them (the cases of
Redis's tests/unit/type/list.tcl, run through the real command handlers on an in-process server),
and the engine against a plain Python list under random operations."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator

import pytest

from lists import List
from lists.storage import LP_EMPTY, entry_size, exceeds_limit, is_large, unpack
from server import value_types
from server.config import Config
from server.connection import Client
from server.server import Server

LARGE_QUICKLIST = "q" * 8192  # larger than a -1 (4 KB) node: a plain node of its own
LARGE_LISTPACK = "hello"  # large only for a count limit


class Node:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = Server(Config())
        self.server.attach_loop(self.loop)
        self.client = Client(self.server)
        assert self.server.client_connected(self.client, ("127.0.0.1", 1)) is None
        self.client.flush_pending = True

    def run(self, *argv: str) -> bytes:
        self.client.run_commands([[a.encode() for a in argv]])
        out = b"".join(self.client.out)
        self.client.out.clear()
        assert not out.startswith(b"-"), (argv, out)
        return out

    def encoding(self, key: str) -> bytes:
        value = self.client.db.get(key.encode())
        return value_types.of(value).encoding(value, self.server.config)

    def value(self, key: str) -> List:
        value = self.client.db.get(key.encode())
        assert type(value) is List
        return value

    def fill(self, fill: int) -> None:
        self.run("CONFIG", "SET", "list-max-listpack-size", str(fill))

    def create(self, key: str, *items: str) -> None:
        # One RPUSH per element, as list.tcl's create_listpack / create_quicklist.
        self.run("DEL", key)
        for item in items:
            self.run("RPUSH", key, item)

    def create_listpack(self, key: str, *items: str) -> None:
        self.create(key, *items)
        assert self.encoding(key) == b"listpack"

    def create_quicklist(self, key: str, *items: str) -> None:
        self.create(key, *items)
        assert self.encoding(key) == b"quicklist"

    def close(self) -> None:
        self.loop.close()


@pytest.fixture
def node() -> Iterator[Node]:
    n = Node()
    yield n
    n.close()


def test_small_list_is_a_listpack_and_grows_into_a_quicklist(node: Node) -> None:
    # Redis 7.0 answers quicklist for every list; 7.2+ keeps small lists in one listpack.
    node.run("RPUSH", "l", "a", "b")
    assert node.encoding("l") == b"listpack"
    node.run("RPUSH", "l", *["x" * 60] * 150)  # past 8 KB
    assert node.encoding("l") == b"quicklist"


@pytest.mark.parametrize("fill,large", [(3, LARGE_LISTPACK), (-1, LARGE_QUICKLIST)])
def test_listpack_to_quicklist_conversions(node: Node, fill: int, large: str) -> None:
    # Past 3 entries, or past 4 KB: RPUSH, LINSERT, LSET and LMOVE's push all convert.
    node.fill(fill)
    node.create_listpack("lst", "a", "b", "c")
    node.run("RPUSH", "lst", large)
    assert node.encoding("lst") == b"quicklist"
    node.create_listpack("lst", "a", "b", "c")
    node.run("LINSERT", "lst", "after", "b", large)
    assert node.encoding("lst") == b"quicklist"
    node.create_listpack("lst", "a", "b", "c")
    node.run("LSET", "lst", "0", large)
    assert node.encoding("lst") == b"quicklist"  # for 3 entries too: LSET counts one more
    node.create_quicklist("lsrc", "a", "b", "c", large)
    node.create_listpack("ldes", "d", "e", "f")
    node.run("LMOVE", "lsrc", "ldes", "right", "right")
    assert node.encoding("ldes") == b"quicklist"


def test_linsert_converts_even_without_the_pivot(node: Node) -> None:
    node.fill(-1)
    node.create_listpack("lst", "a", "b", "c")
    assert node.run("LINSERT", "lst", "after", "zz", LARGE_QUICKLIST) == b":-1\r\n"
    assert node.encoding("lst") == b"quicklist"


def test_quicklist_to_listpack_conversions(node: Node) -> None:
    node.fill(3)
    node.create_quicklist("lst", "a", "b", "c", "d")
    node.run("RPOP", "lst", "3")
    assert node.encoding("lst") == b"listpack"
    node.create_quicklist("lst", "a", "a", "a", "d")
    node.run("LREM", "lst", "3", "a")
    assert node.encoding("lst") == b"listpack"
    node.create_quicklist("lst", "a", "b", "c", "d")
    node.run("LTRIM", "lst", "1", "1")
    assert node.encoding("lst") == b"listpack"

    node.fill(-1)
    node.create_quicklist("lst", "a", "b", "c", LARGE_QUICKLIST)
    node.run("RPOP", "lst", "1")
    assert node.encoding("lst") == b"listpack"
    node.create_quicklist("lst", "a", LARGE_QUICKLIST)
    node.run("LREM", "lst", "1", LARGE_QUICKLIST)
    assert node.encoding("lst") == b"listpack"
    node.create_quicklist("lst", "a", "b", LARGE_QUICKLIST)
    node.run("LTRIM", "lst", "0", "1")
    assert node.encoding("lst") == b"listpack"
    node.create_quicklist("lst", LARGE_QUICKLIST, "a", "b")
    node.run("RPOP", "lst", "2")
    assert node.encoding("lst") == b"quicklist"  # a plain node is never a listpack
    node.run("LSET", "lst", "-1", "c")
    assert node.encoding("lst") == b"listpack"


def test_shrinking_converts_back_only_below_half_the_limit(node: Node) -> None:
    node.fill(4)
    node.create_quicklist("lst", "a", "b", "c", "d", "e")  # nodes [a b c d] [e]
    node.run("RPOP", "lst")
    assert node.encoding("lst") == b"quicklist"  # one node, but 4 > 4/2
    node.run("RPOP", "lst", "2")
    assert node.encoding("lst") == b"listpack"
    node.run("RPUSH", "lst", "x", "y")  # 4 entries fit a listpack of 4
    assert node.encoding("lst") == b"listpack"
    node.run("RPUSH", "lst", "z")
    assert node.encoding("lst") == b"quicklist"


def test_size_limited_listpack_counts_listpack_bytes(node: Node) -> None:
    # -1: 4096 bytes. An empty listpack is 7 bytes, a 10-byte string entry 12 bytes.
    node.fill(-1)
    node.run("RPUSH", "lst", *["0123456789"] * 340)  # 7 + 340 * 12 = 4087
    assert node.encoding("lst") == b"listpack"
    node.run("RPUSH", "lst", "z")  # Redis checks 4087 + 1 raw byte: still fits
    assert node.encoding("lst") == b"listpack"
    node.run("RPUSH", "lst", "0123456789")  # 4087 + 3 + 10 > 4096
    assert node.encoding("lst") == b"quicklist"


def test_out_of_range_fills(node: Node) -> None:
    # 0 counts as 1 entry per node; below -5 counts as -5 (64 KB).
    node.fill(0)
    node.run("RPUSH", "lst", "a")
    assert node.encoding("lst") == b"listpack"
    node.run("RPUSH", "lst", "b")
    assert node.encoding("lst") == b"quicklist"
    node.fill(-6)
    node.run("DEL", "lst")
    node.run("RPUSH", "lst", "x" * 60000)
    assert node.encoding("lst") == b"listpack"
    node.run("RPUSH", "lst", "x" * 5536)
    assert node.encoding("lst") == b"quicklist"


def test_various_listpack_encodings_past_the_node_size(node: Node) -> None:
    for x in ("127", "32767", "2147483647", "9223372036854775808", "0", "12", "x" * 31,
              "x" * 8191, "x" * 65535):
        node.run("LPUSH", "k", x)
    assert node.encoding("k") == b"quicklist"
    assert len(node.run("LRANGE", "k", "0", "-1")) > 65535 + 8191
    assert node.value("k").nbytes() > 65535


def test_copy_keeps_the_encoding(node: Node) -> None:
    node.fill(3)
    node.create_quicklist("a", "1", "2", "3", "4")
    node.run("COPY", "a", "b")
    assert node.encoding("b") == b"quicklist"
    node.create_listpack("c", "1")
    node.run("COPY", "c", "d")
    assert node.encoding("d") == b"listpack"


def test_listpack_entry_sizes() -> None:
    # lpEncodeGetType / lpEncodeBacklen: integers packed by range, strings by length.
    assert [entry_size(x) for x in (b"0", b"127", b"128", b"-4096", b"4096", b"-32768",
                                    b"40000", b"-8388608", b"9000000", b"2147483647",
                                    b"2147483648", b"9223372036854775807")] == \
        [2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 10, 10]
    assert [entry_size(x) for x in (b"", b"a", b"007", b"-0", b"+1", b"9223372036854775808",
                                    b"x" * 63, b"x" * 64, b"x" * 125, b"x" * 126,
                                    b"x" * 4095, b"x" * 4096)] == \
        [2, 3, 5, 4, 4, 21, 65, 67, 128, 130, 4099, 4103]


def test_node_limits() -> None:
    assert not exceeds_limit(-2, 8192, 10**6) and exceeds_limit(-2, 8193, 1)
    assert exceeds_limit(-9, 65537, 1) and not exceeds_limit(-9, 65536, 1)
    assert exceeds_limit(5, 100, 6) and not exceeds_limit(5, 100, 5)
    assert exceeds_limit(5, 8193, 1) and exceeds_limit(0, 10, 2) and not exceeds_limit(0, 10, 1)
    assert is_large(8193, 100) and not is_large(8192, 100) and is_large(4097, -1)


# --- the engine against a model ----------------------------------------------------------------


def check(lst: List, model: list[bytes], full: bool) -> None:
    """The nodes' invariants, read without changing the nodes (a reversed head node stays so);
    full: also through the list's own readers, which put such a node back in order."""
    nodes = lst.nodes
    seen: list[bytes] = []
    for n in nodes:
        if n.items is None:
            seen += unpack(n.blob or b"")
        else:
            seen += n.items[::-1] if n.rev else n.items
    assert seen == model
    assert lst.length == len(model)
    if full:
        assert list(lst) == model
        assert list(lst.iter_reversed()) == model[::-1]
    assert sum(n.count for n in nodes) == len(model)
    if not lst.quicklist:
        assert len(nodes) == 1
    for i, n in enumerate(nodes):
        if n.rev:
            assert i == 0 and len(nodes) > 1, "only the head node of a quicklist is reversed"
        items = n.items if n.items is not None else unpack(n.blob or b"")
        assert len(items) == n.count
        if lst.quicklist:
            assert n.count > 0
        if n.plain:
            assert n.count == 1 and n.size == len(items[0])
        else:
            assert n.size == LP_EMPTY + sum(entry_size(x) for x in items)
        if i in (0, len(nodes) - 1):
            assert n.items is not None, "end nodes stay unpacked"
        elif not n.plain:
            assert n.items is None, "interior nodes are packed"


@pytest.mark.parametrize("seed", range(12))
def test_engine_matches_a_python_list(seed: int) -> None:
    rng = random.Random(seed)
    fill = rng.choice([-2, -1, 1, 2, 3, 16, 128])
    values = [b"a", b"bb", b"12", b"-7", b"x" * 300, b"y" * 5000, b"z" * 9000, b""]
    lst = List()
    model: list[bytes] = []
    for step in range(1500):
        op = rng.random()
        if op < 0.35:
            x = rng.choice(values) if rng.random() < 0.3 else b"v%d" % rng.randrange(1000)
            lst.before_grow(fill, len(x), 1)
            if rng.random() < 0.5:
                lst.push_head(x)
                model.insert(0, x)
            else:
                lst.push_tail(x)
                model.append(x)
        elif op < 0.5 and model:
            if rng.random() < 0.5:
                assert lst.pop_head() == model.pop(0)
            else:
                assert lst.pop_tail() == model.pop()
        elif op < 0.58 and model:
            n = rng.randrange(1, 40)
            head = rng.random() < 0.5
            got = lst.pop_many(n, head)
            if head:
                want = model[:n]
                del model[:n]
            else:
                want = model[-n:][::-1]
                del model[-n:]
            assert got == want
        elif op < 0.66 and model:
            i = rng.randrange(-len(model), len(model))
            x = rng.choice(values)
            lst.before_grow(fill, len(x), 1)
            assert lst.set(i, x)
            model[i] = x
        elif op < 0.74 and model:
            pivot = rng.choice(model)
            x = rng.choice(values)
            after = rng.random() < 0.5
            lst.before_grow(fill, len(x), 1)
            assert lst.insert(pivot, x, after)
            k = model.index(pivot)
            model.insert(k + 1 if after else k, x)
        elif op < 0.8 and model:
            x = rng.choice(model)
            count = rng.randrange(-3, 4)
            removed = lst.remove(count, x)
            if count >= 0:
                limit = count or len(model)
                kept, n = [], 0
                for e in model:
                    if e == x and n < limit:
                        n += 1
                    else:
                        kept.append(e)
            else:
                kept_rev, n = [], 0
                for e in reversed(model):
                    if e == x and n < -count:
                        n += 1
                    else:
                        kept_rev.append(e)
                kept = kept_rev[::-1]
            assert removed == n
            model = kept
        elif op < 0.85 and model:
            a = rng.randrange(0, len(model) // 4 + 1)
            b = rng.randrange(0, len(model) // 4 + 1)
            a, b = min(a, len(model)), min(b, len(model) - min(a, len(model)))
            lst.trim(a, b)
            model = model[a:len(model) - b]
        elif model:
            start = rng.randrange(len(model))
            count = rng.randrange(0, len(model) - start + 1)
            assert lst.range(start, count) == model[start:start + count]
            end = rng.randrange(len(model))
            count = rng.randrange(0, end + 2)
            assert lst.range(end, count, reverse=True) == model[max(0, end - count + 1):end + 1][::-1]
            i = rng.randrange(-len(model) - 2, len(model) + 2)
            assert lst.get(i) == (model[i] if -len(model) <= i < len(model) else None)
            x = rng.choice(model)
            rank = rng.choice([1, 2, -1, -2])
            maxlen = rng.choice([0, 5, 50])
            found = lst.positions(x, rank, 0, maxlen)
            if rank > 0:
                idx = [k for k, e in enumerate(model[:maxlen or None]) if e == x][rank - 1:]
            else:
                span = range(len(model) - 1, max(-1, len(model) - 1 - maxlen) if maxlen else -1,
                             -1)
                idx = [k for k in span if model[k] == x][-rank - 1:]
            assert found == idx
        if lst.length:
            lst.after_shrink(fill)
        else:
            lst = List()  # the key is deleted when empty
        check(lst, model, full=step % 50 == 0)
    copy = lst.copy()
    assert list(copy) == model
    if model:
        copy.pop_head()
        assert list(lst) == model


@pytest.mark.parametrize("seed", range(6))
def test_reversed_head_node_under_queue_traffic(seed: int) -> None:
    # Mostly pushes and pops at the ends, as a queue gets: the head node is kept reversed, and
    # every other reader still sees the elements in order.
    rng = random.Random(seed)
    fill = rng.choice([-2, -1, 64])
    lst = List()
    model: list[bytes] = []
    reversed_seen = False
    for step in range(6000):
        op = rng.random()
        if op < 0.6 or not model:
            x = b"element-%d" % step
            lst.before_grow(fill, len(x), 1)
            lst.push_head(x)
            model.insert(0, x)
        elif op < 0.78:
            assert lst.pop_tail() == model.pop()
        elif op < 0.93:
            assert lst.pop_head() == model.pop(0)
        elif op < 0.96:
            i = rng.randrange(len(model))
            assert lst.get(i) == model[i]
        elif op < 0.98:
            assert lst.range(0, min(5, len(model))) == model[:5]
        else:
            x = b"v%d" % step
            lst.before_grow(fill, len(x), 1)
            lst.push_tail(x)
            model.append(x)
        if lst.length:
            lst.after_shrink(fill)
        else:
            lst = List()
        reversed_seen = reversed_seen or lst.nodes[0].rev
        check(lst, model, full=step % 500 == 0)
    assert reversed_seen


def test_run_handlers_take_whole_runs(node: Node) -> None:
    from server.commands.lists import lpush_run, rpop_run

    c = node.client
    pushes = [[b"LPUSH", b"q", b"%d" % i] for i in range(10)] + [[b"LLEN", b"q"]]
    assert lpush_run(c, pushes, 0) == 10
    assert b"".join(c.out) == b"".join(b":%d\r\n" % i for i in range(1, 11))
    c.out.clear()
    assert rpop_run(c, [[b"RPOP", b"q"]] * 12, 0) == 10  # the rest: the single path's nil
    assert b"".join(c.out) == b"".join(b"$1\r\n%d\r\n" % i for i in range(10))
    c.out.clear()
    assert c.db.get(b"q") is None
    node.run("SET", "s", "v")
    assert lpush_run(c, [[b"LPUSH", b"s", b"x"]] * 3, 0) == 0  # WRONGTYPE: one by one
    assert rpop_run(c, [[b"RPOP", b"s"]] * 3, 0) == 0
    assert rpop_run(c, [[b"RPOP", b"q", b"1"]] * 3, 0) == 0
