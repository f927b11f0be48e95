"""A list as Redis 7.4 stores it: one listpack while small, a quicklist of nodes beyond.

The elements live in a sequence of nodes. The two end nodes hold their elements as a Python list,
so that pushes and pops at either end are cheap; every interior node is packed into one `bytes`
blob (each element preceded by its length as a varint), which is what keeps a long list compact.
A node that becomes an end is unpacked, one that stops being an end is packed again.

The nodes follow Redis's quicklist rules (quicklist.c) so that the encoding OBJECT ENCODING
reports changes when Redis's does: each node tracks the size its listpack would have in Redis
(`size`, as lpBytes), a push goes into the end node while that node stays within the
`list-max-listpack-size` limit and starts a new node otherwise, and an element too large for any
node sits alone in a "plain" node. While the list is in the listpack encoding it is one node.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

# Final: compiled, each is a C constant, where a plain module global is a dictionary lookup at
# every use (and these are read on every push).
LP_EMPTY: Final = 7  # an empty listpack: 6-byte header + end marker
SIZE_SAFETY_LIMIT: Final = 8192  # most bytes of a node under a positive (count) fill
SIZE_ESTIMATE_OVERHEAD: Final = 8  # what Redis adds to an element's length when checking a node's room
_FILL_MAX: Final = 32767  # a quicklist's fill is a 16-bit field
_UINT_MAX: Final = 4294967295
_NO_SIZE_LIMIT: Final = 1 << 64

_PREFIX: Final = [bytes([n]) for n in range(128)]
_REVERSE_FROM: Final = 16  # a head node this long is kept reversed rather than shifted on each push


# --- sizes and limits, as Redis computes them --------------------------------------------------


def _int_value(x: bytes) -> int | None:
    """The 64-bit integer a listpack would store x as (Redis's lpStringToInt64), or None."""
    n = len(x)
    if n == 0 or n > 20:
        return None
    c = x[0]
    if c == 48:  # '0'
        return 0 if n == 1 else None
    body = x
    if c == 45:  # '-'
        body = x[1:]
        if not body:
            return None
    if not (49 <= body[0] <= 57) or not body.isdigit():
        return None
    v = int(x)
    if v < -(1 << 63) or v >= (1 << 63):
        return None
    return v


def entry_size(x: bytes) -> int:
    """The bytes the element takes in a Redis listpack (encoding, data and back-length)."""
    n = len(x)
    if 0 < n <= 20 and (x[0] == 45 or 48 <= x[0] <= 57):
        v = _int_value(x)
        if v is not None:
            if 0 <= v <= 127:
                return 2
            if -4096 <= v <= 4095:
                return 3
            if -32768 <= v <= 32767:
                return 4
            if -8388608 <= v <= 8388607:
                return 5
            if -2147483648 <= v <= 2147483647:
                return 6
            return 10
    if n < 64:
        return n + 2
    total = n + (2 if n < 4096 else 5)
    if total <= 127:
        return total + 1
    if total < 16383:
        return total + 2
    if total < 2097151:
        return total + 3
    if total < 268435455:
        return total + 4
    return total + 5


def size_limit(fill: int) -> int:
    """The most bytes of a node under `fill`, which is also the length beyond which an element
    gets a plain node of its own: 4096 .. 65536 for the negative fills -1 .. -5 (and below),
    SIZE_SAFETY_LIMIT for a count fill."""
    if fill >= 0:
        return SIZE_SAFETY_LIMIT
    if fill == -1:
        return 4096
    if fill == -2:
        return 8192
    if fill == -3:
        return 16384
    if fill == -4:
        return 32768
    return 65536


def node_limits(fill: int) -> tuple[int, int]:
    """(bytes, entries) a node may hold under `fill` (quicklistNodeLimit); the unused one is
    unbounded."""
    if fill >= 0:
        return _NO_SIZE_LIMIT, fill if fill else 1
    return size_limit(fill), _UINT_MAX


def exceeds_limit(fill: int, size: int, count: int) -> bool:
    """Whether a node (or a listpack) of `size` bytes and `count` entries is over the limit."""
    if fill >= 0:
        return size > SIZE_SAFETY_LIMIT or count > (fill if fill else 1)
    return size > size_limit(fill)


def is_large(n: int, fill: int) -> bool:
    """Whether an element of n bytes gets a plain node of its own."""
    return n > size_limit(fill)


def _clamp_fill(fill: int) -> int:
    if fill > _FILL_MAX:
        return _FILL_MAX
    if fill < -5:
        return -5
    return fill


# --- packed nodes ------------------------------------------------------------------------------


def pack(items: list[bytes]) -> bytes:
    # Each element preceded by its length: the elements go in with one slice assignment, and
    # the lengths of short ones (nearly all) are shared one-byte objects.
    parts: list[bytes] = [b""] * (2 * len(items))
    parts[1::2] = items
    j = 0
    for x in items:
        n = len(x)
        if n < 128:
            parts[j] = _PREFIX[n]
        else:
            head = bytearray()
            while n >= 128:
                head.append((n & 127) | 128)
                n >>= 7
            head.append(n)
            parts[j] = bytes(head)
        j += 2
    return b"".join(parts)


def unpack(blob: bytes) -> list[bytes]:
    out: list[bytes] = []
    i = 0
    end = len(blob)
    while i < end:
        n = blob[i]
        i += 1
        if n >= 128:
            n &= 127
            shift = 7
            while True:
                b = blob[i]
                i += 1
                n |= (b & 127) << shift
                shift += 7
                if b < 128:
                    break
        out.append(blob[i:i + n])
        i += n
    return out


class Node:
    """A run of consecutive elements: `items` when unpacked, else `blob`.

    The head node of a quicklist may hold its items in reverse order (`rev`), so that pushes
    and pops at the head are appends and pops at the end of the Python list rather than moves
    of the whole node; any other access puts them back in order first (see List.push_head).
    """

    __slots__ = ("items", "blob", "count", "size", "plain", "rev")

    def __init__(self, items: list[bytes], size: int, plain: bool = False) -> None:
        self.items: list[bytes] | None = items
        self.blob: bytes | None = None
        self.count = len(items)
        self.size = size  # lpBytes of Redis's listpack for this node; the element's length if plain
        self.plain = plain
        self.rev = False

    def elements(self) -> list[bytes]:
        """The elements in order, unpacking the node (for changes)."""
        items = self.items
        if items is None:
            blob = self.blob
            assert blob is not None
            items = unpack(blob)
            self.items = items
            self.blob = None
        elif self.rev:
            items.reverse()
            self.rev = False
        return items

    def read(self) -> list[bytes]:
        """The elements in order, leaving the node packed if it is (do not change the list
        returned)."""
        items = self.items
        if items is not None:
            if self.rev:
                items.reverse()
                self.rev = False
            return items
        blob = self.blob
        assert blob is not None
        return unpack(blob)

    def pack(self) -> None:
        items = self.items
        if items is not None and not self.plain:
            if self.rev:
                items.reverse()
                self.rev = False
            self.blob = pack(items)
            self.items = None

    def recount(self) -> None:
        """Recompute count and size after the elements changed in bulk."""
        items = self.elements()
        self.count = len(items)
        if self.plain:
            self.size = len(items[0]) if items else 0
        else:
            size = LP_EMPTY
            for x in items:
                size += entry_size(x)
            self.size = size

    def copy(self) -> Node:
        node = Node([], self.size, self.plain)
        node.count = self.count
        self.read()
        if self.items is not None:
            node.items = list(self.items)
        else:
            node.items = None
            node.blob = self.blob
        return node

    def nbytes(self) -> int:
        if self.items is not None:
            return 120 + 8 * len(self.items) + sum(33 + len(x) for x in self.items)
        blob = self.blob
        return 120 + (len(blob) if blob is not None else 0)


def _new_node(x: bytes, fill: int) -> Node:
    if is_large(len(x), fill):
        return Node([x], len(x), True)
    return Node([x], LP_EMPTY + entry_size(x))


# --- the list ----------------------------------------------------------------------------------


class List:
    """A Redis list. `quicklist` tells the encoding; `fill` is the node limit a quicklist took
    when it was made (as Redis's quicklist keeps its own)."""

    __slots__ = ("nodes", "length", "quicklist", "fill", "lru")

    def __init__(self) -> None:
        # OBJECT IDLETIME / FREQ's access data, Redis's robj.lru (see server/keyspace.py).
        self.lru = 0
        self.nodes: list[Node] = [Node([], LP_EMPTY)]
        self.length = 0
        self.quicklist = False
        self.fill = -2

    def __len__(self) -> int:
        return self.length

    # --- encoding conversions (t_list.c listTypeTryConversion*) ----------------------------

    def before_grow(self, fill: int, add_bytes: int, add_count: int) -> None:
        """Before adding elements of add_bytes bytes in all: a listpack that would go over the
        limit becomes a quicklist (whose first node is the listpack)."""
        if self.quicklist:
            return
        node = self.nodes[0]
        if exceeds_limit(fill, node.size + add_bytes, node.count + add_count):
            self.quicklist = True
            self.fill = _clamp_fill(fill)
            if node.count == 0:
                self.nodes = []

    def after_shrink(self, fill: int) -> None:
        """After removing elements: a quicklist down to one packed node of at most half the
        limit becomes a listpack again (half, so that a list at the limit does not flip)."""
        if not self.quicklist:
            return
        nodes = self.nodes
        if len(nodes) != 1:
            return
        node = nodes[0]
        if node.plain:
            return
        size_limit, count_limit = node_limits(fill)
        if node.size > size_limit // 2 or node.count > count_limit // 2:
            return
        node.elements()
        self.quicklist = False

    def encoding(self) -> bytes:
        return b"quicklist" if self.quicklist else b"listpack"

    # --- ends ----------------------------------------------------------------------------------

    def push_head(self, x: bytes) -> None:
        self.length += 1
        nodes = self.nodes
        if self.quicklist:
            fill = self.fill
            n = len(x)
            if nodes:
                head = nodes[0]
                # (An element too large for a node of its own also exceeds the limit here.)
                if not head.plain and not exceeds_limit(
                        fill, head.size + n + SIZE_ESTIMATE_OVERHEAD, head.count + 1):
                    items = head.items
                    assert items is not None
                    if head.rev:
                        items.append(x)
                    elif head.count < _REVERSE_FROM or len(nodes) == 1:
                        items.insert(0, x)
                    else:
                        # A head node with a tail node after it: only the head end of it moves
                        # from now on, so it is kept reversed.
                        items.reverse()
                        head.rev = True
                        items.append(x)
                    head.count += 1
                    head.size += entry_size(x)
                    return
            nodes.insert(0, _new_node(x, fill))
            if len(nodes) >= 3:
                nodes[1].pack()
            elif len(nodes) == 2:
                nodes[1].elements()  # now the tail: in order
            return
        node = nodes[0]
        items = node.items
        assert items is not None
        items.insert(0, x)
        node.count += 1
        node.size += entry_size(x)

    def push_tail(self, x: bytes) -> None:
        self.length += 1
        nodes = self.nodes
        if self.quicklist:
            fill = self.fill
            n = len(x)
            if nodes:
                tail = nodes[-1]
                if not tail.plain and not exceeds_limit(
                        fill, tail.size + n + SIZE_ESTIMATE_OVERHEAD, tail.count + 1):
                    items = tail.items
                    assert items is not None
                    items.append(x)
                    tail.count += 1
                    tail.size += entry_size(x)
                    return
            nodes.append(_new_node(x, fill))
            if len(nodes) >= 3:
                nodes[-2].pack()
            return
        node = nodes[0]
        items = node.items
        assert items is not None
        items.append(x)
        node.count += 1
        node.size += entry_size(x)

    def pop_head(self) -> bytes:
        """Remove and return the first element (the list must not be empty)."""
        nodes = self.nodes
        node = nodes[0]
        items = node.items
        assert items is not None
        if node.rev:
            x = items.pop()
        elif node.count < _REVERSE_FROM or len(nodes) == 1:
            x = items.pop(0)
        else:
            items.reverse()
            node.rev = True
            x = items.pop()
        self.length -= 1
        node.count -= 1
        if node.count == 0 and self.quicklist:
            del nodes[0]
            if nodes:
                nodes[0].elements()
        elif not node.plain:
            node.size -= entry_size(x)
        return x

    def pop_tail(self) -> bytes:
        """Remove and return the last element (the list must not be empty)."""
        nodes = self.nodes
        node = nodes[-1]
        items = node.items
        assert items is not None
        x = items.pop(0) if node.rev else items.pop()
        self.length -= 1
        node.count -= 1
        if node.count == 0 and self.quicklist:
            nodes.pop()
            if nodes:
                nodes[-1].elements()
        elif not node.plain:
            node.size -= entry_size(x)
        return x

    def pop_many(self, count: int, head: bool) -> list[bytes]:
        """Remove up to count elements from one end; returned in the order they were popped."""
        out: list[bytes] = []
        nodes = self.nodes
        while count > 0 and self.length > 0:
            node = nodes[0] if head else nodes[-1]
            items = node.elements()
            if count >= node.count:
                taken = node.count
                if head:
                    out.extend(items)
                else:
                    out.extend(reversed(items))
                if self.quicklist:
                    if head:
                        del nodes[0]
                        if nodes:
                            nodes[0].elements()
                    else:
                        nodes.pop()
                        if nodes:
                            nodes[-1].elements()
                else:
                    items.clear()
                    node.count = 0
                    node.size = LP_EMPTY
            else:
                taken = count
                if head:
                    out.extend(items[:count])
                    del items[:count]
                else:
                    part = items[-count:]
                    part.reverse()
                    out.extend(part)
                    del items[-count:]
                node.recount()
            self.length -= taken
            count -= taken
        return out

    # --- positions -----------------------------------------------------------------------------

    def _locate(self, index: int) -> tuple[int, int]:
        """(node number, offset in it) of element `index` (0 <= index < length), skipping whole
        nodes from the nearer end."""
        nodes = self.nodes
        if index <= self.length // 2:
            i = 0
            while index >= nodes[i].count:
                index -= nodes[i].count
                i += 1
            return i, index
        back = self.length - 1 - index
        i = len(nodes) - 1
        while back >= nodes[i].count:
            back -= nodes[i].count
            i -= 1
        return i, nodes[i].count - 1 - back

    def get(self, index: int) -> bytes | None:
        """Element `index`, negative from the end (LINDEX); None out of range."""
        if index < 0:
            index += self.length
        if index < 0 or index >= self.length:
            return None
        i, k = self._locate(index)
        return self.nodes[i].read()[k]

    def range(self, start: int, count: int, reverse: bool = False) -> list[bytes]:
        """count elements from index start (0 <= start, start + count <= length); reverse: from
        index start backwards."""
        out: list[bytes] = []
        if count <= 0:
            return out
        nodes = self.nodes
        i, k = self._locate(start)
        if not reverse:
            while count > 0:
                items = nodes[i].read()
                part = items[k:k + count]
                out.extend(part)
                count -= len(part)
                i += 1
                k = 0
        else:
            while count > 0:
                items = nodes[i].read()
                lo = k + 1 - count
                if lo < 0:
                    lo = 0
                part = items[lo:k + 1]
                part.reverse()
                out.extend(part)
                count -= len(part)
                i -= 1
                if i >= 0:
                    k = nodes[i].count - 1
        return out

    def __iter__(self) -> Iterator[bytes]:
        for node in self.nodes:
            yield from node.read()

    def iter_reversed(self) -> Iterator[bytes]:
        for i in range(len(self.nodes) - 1, -1, -1):
            yield from reversed(self.nodes[i].read())

    # --- changes inside ------------------------------------------------------------------------

    def _settle(self, lo: int, hi: int) -> None:
        """Nodes lo..hi-1 were changed: the end nodes stay unpacked, interior ones get packed."""
        nodes = self.nodes
        last = len(nodes) - 1
        for i in range(max(lo, 0), min(hi, last + 1)):
            if i == 0 or i == last:
                nodes[i].elements()
            else:
                nodes[i].pack()
        if nodes:
            nodes[0].elements()
            nodes[-1].elements()

    def _refit(self, i: int) -> int:
        """Quicklist node i (unpacked) may be over the limit or hold a large element among
        others: split it into nodes that fit. Returns how many nodes replace it."""
        node = self.nodes[i]
        fill = self.fill
        items = node.elements()
        if node.plain:
            if len(items) == 1 and is_large(len(items[0]), fill):
                return 1
        elif not exceeds_limit(fill, node.size, node.count) and not any(
                is_large(len(x), fill) for x in items):
            return 1
        parts: list[Node] = []
        current: Node | None = None
        for x in items:
            n = len(x)
            if is_large(n, fill):
                parts.append(Node([x], n, True))
                current = None
                continue
            if current is None or exceeds_limit(
                    fill, current.size + n + SIZE_ESTIMATE_OVERHEAD, current.count + 1):
                current = Node([], LP_EMPTY)
                parts.append(current)
            cur_items = current.items
            assert cur_items is not None
            cur_items.append(x)
            current.count += 1
            current.size += entry_size(x)
        self.nodes[i:i + 1] = parts
        return len(parts)

    def set(self, index: int, x: bytes) -> bool:
        """LSET: replace element `index` (negative from the end); False when out of range."""
        if index < 0:
            index += self.length
        if index < 0 or index >= self.length:
            return False
        i, k = self._locate(index)
        node = self.nodes[i]
        items = node.elements()
        old = items[k]
        items[k] = x
        if node.plain:
            node.size = len(x)
        else:
            node.size += entry_size(x) - entry_size(old)
        n = 1
        if self.quicklist:
            n = self._refit(i)
        self._settle(i, i + n)
        return True

    def insert(self, pivot: bytes, x: bytes, after: bool) -> bool:
        """LINSERT: x before or after the first element equal to pivot; False when none is."""
        nodes = self.nodes
        for i in range(len(nodes)):
            node = nodes[i]
            items = node.read()
            try:
                k = items.index(pivot)
            except ValueError:
                continue
            items = node.elements()
            if after:
                k += 1
            fill = self.fill
            if self.quicklist and node.plain and not is_large(len(x), fill):
                # Beside a plain node, the element joins the neighbouring node when it has
                # room, else starts its own.
                j = i + 1 if after else i - 1
                if 0 <= j < len(nodes) and not nodes[j].plain and not exceeds_limit(
                        fill, nodes[j].size + len(x) + SIZE_ESTIMATE_OVERHEAD,
                        nodes[j].count + 1):
                    other = nodes[j].elements()
                    if after:
                        other.insert(0, x)
                    else:
                        other.append(x)
                    nodes[j].count += 1
                    nodes[j].size += entry_size(x)
                    self._settle(j, j + 1)
                else:
                    nodes.insert(i + 1 if after else i, _new_node(x, fill))
                    self._settle(i - 1, i + 3)
                self.length += 1
                return True
            items.insert(k, x)
            node.count += 1
            node.size += entry_size(x)
            self.length += 1
            n = 1
            if self.quicklist:
                n = self._refit(i)
            self._settle(i, i + n)
            return True
        return False

    def remove(self, count: int, x: bytes) -> int:
        """LREM: remove up to count (0: all) elements equal to x, from the tail when count < 0.
        Returns how many were removed."""
        limit = -count if count < 0 else count
        removed = 0
        nodes = self.nodes
        order = range(len(nodes) - 1, -1, -1) if count < 0 else range(len(nodes))
        for i in order:
            node = nodes[i]
            if x not in node.read():
                continue
            items = node.elements()
            budget = limit - removed if limit else len(items)
            if count < 0:
                kept_rev: list[bytes] = []
                for e in reversed(items):
                    if budget and e == x:
                        budget -= 1
                        removed += 1
                    else:
                        kept_rev.append(e)
                kept_rev.reverse()
                items[:] = kept_rev
            else:
                kept: list[bytes] = []
                for e in items:
                    if budget and e == x:
                        budget -= 1
                        removed += 1
                    else:
                        kept.append(e)
                items[:] = kept
            node.recount()
            if limit and removed >= limit:
                break
        self.length -= removed
        if removed:
            self._drop_empty()
        return removed

    def _drop_empty(self) -> None:
        if self.quicklist:
            self.nodes = [node for node in self.nodes if node.count]
        self._settle(0, len(self.nodes))

    def trim(self, ltrim: int, rtrim: int) -> None:
        """LTRIM: drop ltrim elements from the head and rtrim from the tail."""
        if ltrim:
            self.pop_many(ltrim, True)
        if rtrim:
            self.pop_many(rtrim, False)

    def positions(self, x: bytes, rank: int, count: int, maxlen: int) -> list[int]:
        """LPOS: indexes of the matches of x, skipping the first rank-1 (from the tail when
        rank < 0), at most count of them (0: all), looking at maxlen elements (0: all)."""
        out: list[int] = []
        forward = rank > 0
        skip = (rank if forward else -rank) - 1
        length = self.length
        scanned = 0
        nodes = self.nodes
        base = 0 if forward else length
        order = range(len(nodes)) if forward else range(len(nodes) - 1, -1, -1)
        for i in order:
            if maxlen and scanned >= maxlen:
                break
            node = nodes[i]
            items = node.read()
            if not forward:
                base -= node.count
            span = node.count
            if maxlen and scanned + span > maxlen:
                span = maxlen - scanned
            if x in items:
                if forward:
                    k = 0
                    while True:
                        try:
                            k = items.index(x, k, span)
                        except ValueError:
                            break
                        if skip:
                            skip -= 1
                        else:
                            out.append(base + k)
                            if count and len(out) >= count:
                                return out
                        k += 1
                else:
                    lo = node.count - span
                    for k in range(node.count - 1, lo - 1, -1):
                        if items[k] == x:
                            if skip:
                                skip -= 1
                            else:
                                out.append(base + k)
                                if count and len(out) >= count:
                                    return out
            scanned += span
            if forward:
                base += node.count
        return out

    # --- whole values --------------------------------------------------------------------------

    def copy(self) -> List:
        other = List()
        other.nodes = [node.copy() for node in self.nodes]
        other.length = self.length
        other.quicklist = self.quicklist
        other.fill = self.fill
        return other

    def nbytes(self) -> int:
        return 64 + 8 * len(self.nodes) + sum(node.nbytes() for node in self.nodes)
