"""Entry storage: the Python counterpart of Redis's radix tree of listpack macro nodes.

Entries live in nodes of at most `node_max_entries` entries / `node_max_bytes` bytes. A node
keeps no per-entry Python object, only packed buffers:

* `msd`  array of millisecond deltas from the node's master ID (typecode 'I', widened to 'Q'
         when a delta does not fit), so the IDs of a node are found with C-level bisect;
* `seq`  array of sequence numbers ('I', widened to 'Q');
* `offs` array of each entry's offset into `data` ('H', widened to 'I');
* `data` the encoded fields: a varint field count, 0 meaning "same field names as the master
         entry" (then only length-prefixed values follow, as Redis's SAMEFIELDS flag), else
         length-prefixed field/value pairs. It is a bytearray while the node is the tail, and
         is frozen to exact-size `bytes` when a new node is started (arrays are shrunk too);
* `dead` a bitmap of deleted entries (tombstones), allocated only on the first deletion.

The stream keeps two parallel lists, node master IDs (`keys`, bisected to find a node) and the
nodes themselves. Like Redis, XDEL only flags entries and frees a node when its last live entry
goes; trimming drops whole nodes from the head and, when exact, flags entries of one node.

Nodes are this module's own business. Readers of many entries get `Run`s (`EntryStore.runs`,
`runs_from`): consecutive live entries of one node with the packed form documented there, so
that the RESP encoder reads that form without knowing how nodes grow, widen or get sealed.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import count as _count
from typing import Final

# Redis refuses listpacks over 1 GiB; a node_max_bytes of 0 means "up to that size".
MAX_NODE_SIZE: Final = 1 << 30
_U32: Final = (1 << 32) - 1
_U64: Final = (1 << 64) - 1
# Node serial numbers: never reused within a process, so a reader may key data it derives from
# a node's entries by it (see Run.key).
_SERIALS: Final = _count(1)


def fields_size(fields: Sequence[bytes]) -> int:
    """The bytes of an entry's fields and values, as streamAppendItem counts them."""
    # A loop, not sum(map(len, ...)): compiled code looks those builtins up on every call.
    size = 0
    for f in fields:
        size += len(f)
    return size


def _put_len(buf: bytearray, n: int) -> None:
    # LEB128 varint: lengths under 128 (the common case) take one byte.
    while n >= 0x80:
        buf.append((n & 0x7F) | 0x80)
        n >>= 7
    buf.append(n)


def _put_entry(data: bytearray, fields: Sequence[bytes], names: tuple[bytes, ...]) -> None:
    # An entry with its node's field names (the master entry's) stores 0 and its values only.
    # Index loops, not slices: compiled, a slice of a Sequence is a new list (and tuple) to
    # compare, where indexing is one call per name.
    count = len(fields)
    same = count == 2 * len(names)
    if same:
        for i in range(0, count, 2):
            if fields[i] != names[i >> 1]:
                same = False
                break
    if same:
        data.append(0)
        for i in range(1, count, 2):
            v = fields[i]
            n = len(v)
            if n < 0x80:
                data.append(n)
            else:
                _put_len(data, n)
            data += v
    else:
        _put_len(data, count // 2)
        for x in fields:
            _put_len(data, len(x))
            data += x


# One-byte lengths as ready-made bytes, for encoders that gather pieces (Node.fill).
_LEN_BYTES: Final = tuple(bytes((i,)) for i in range(0x80))
# 0, 1, 2, ...: the sequence numbers of a run of XADD * in one millisecond are a slice of it.
_COUNTED_LEN: Final = 1 << 16
_COUNTED: Final = array("I", range(_COUNTED_LEN))
_ZERO: Final = b"\x00"


def _len_bytes(n: int) -> bytes:
    """`_put_len`'s encoding of n as bytes."""
    if n < 0x80:
        return _LEN_BYTES[n]
    buf = bytearray()
    _put_len(buf, n)
    return bytes(buf)


def read_len(data: bytes | bytearray, p: int) -> tuple[int, int]:
    """The length stored at data[p] (LEB128, one byte under 0x80) and the position after it:
    how a node's packed values are read by anything outside this module (the RESP encoder)."""
    n = 0
    shift = 0
    while True:
        b = data[p]
        p += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, p
        shift += 7


class Node:
    """One macro node. Entry `i` has ID ((ms0 + msd[i]) << 64) | seq[i]."""

    __slots__ = ("ms0", "fields", "msd", "seq", "offs", "data", "dead", "live", "fbytes", "per", "serial")

    def __init__(self, ms0: int, fields: tuple[bytes, ...]) -> None:
        self.ms0 = ms0
        self.fields = fields  # master field names (the first entry's)
        self.msd = array("I")
        self.seq = array("I")
        self.offs = array("H")
        self.data: bytes | bytearray = bytearray()
        self.dead: bytearray | None = None
        self.live = 0
        self.fbytes = sum(len(f) + 1 for f in fields) + 4  # rough master-entry size
        # Array bytes per entry (msd + seq + offs item sizes), kept as the arrays widen: XADD's
        # node-size test reads it on every entry, and an array's itemsize is a generic lookup.
        self.per = 10
        self.serial: int = next(_SERIALS)

    def __len__(self) -> int:
        """Entries in the node, tombstones included (what node_max_entries counts)."""
        return len(self.msd)

    def copy(self) -> Node:
        """An independent copy."""
        new = Node(self.ms0, self.fields)
        new.msd = self.msd[:]
        new.seq = self.seq[:]
        new.offs = self.offs[:]
        new.data = bytearray(self.data) if type(self.data) is bytearray else self.data
        new.dead = None if self.dead is None else bytearray(self.dead)
        new.live = self.live
        new.fbytes = self.fbytes
        new.per = self.per
        return new

    def nbytes(self) -> int:
        """Approximate encoded size, compared with node_max_bytes like Redis's lpBytes()."""
        return (
            len(self.data)
            + self.fbytes
            + len(self.msd) * self.per
        )

    # --- building ---------------------------------------------------------------------------

    def append(self, eid: int, fields: Sequence[bytes]) -> None:
        d = (eid >> 64) - self.ms0
        seq = eid & _U64
        data = self.data
        off = len(data)
        if d > _U32 or seq > _U32 or off > 0xFFFF or type(data) is not bytearray:
            data = self._make_room(d, seq, off)
        self.msd.append(d)
        self.seq.append(seq)
        self.offs.append(off)
        _put_entry(data, fields, self.fields)
        if self.dead is not None and len(self.dead) * 8 < len(self.msd):
            self.dead.append(0)
        self.live += 1

    def _make_room(self, d: int, seq: int, off: int) -> bytearray:
        """Widen the arrays a value does not fit, and reopen sealed data; the data to append to."""
        if d > _U32 and self.msd.typecode == "I":
            self.msd = array("Q", self.msd)
            self.per += 4
        if seq > _U32 and self.seq.typecode == "I":
            self.seq = array("Q", self.seq)
            self.per += 4
        if off > 0xFFFF and self.offs.typecode == "H":
            self.offs = array("I", self.offs)
            self.per += 2
        data = self.data
        if type(data) is not bytearray:
            # A sealed node became the tail again (the tail node was freed by XDEL) and the
            # limits now allow more entries in it: reopen it, as Redis appends to that listpack.
            data = self.data = bytearray(data)
        return data

    def fill(
        self, first: int, eids: list[int] | None, entries: list[list[bytes]], at: int,
        start: int, total: int, max_entries: int, max_bytes: int,
    ) -> int:
        """`append` entries[start:total] while the node has room (EntryStore.append's test) and
        they take its common path (no widening, no tombstone bitmap); how many were appended.

        Entry j's fields are entries[j][at:] (a run of XADDs passes their argvs, fields from
        index 3, rather than a copy of each one's fields). Its ID is eids[j], or with eids None
        first + (j - start), the IDs of one millisecond. An entry over MAX_NODE_SIZE stops the
        fill.

        The entries' encodings are gathered as pieces and joined onto the node's data once, and
        the arrays are extended once: appending each length byte and value to the bytearray in
        turn, or each number to an array (a method call each), was most of the cost of a
        pipelined XADD.
        """
        data = self.data
        if self.dead is not None or type(data) is not bytearray or start >= total:
            return 0
        msd = self.msd
        seq = self.seq
        offs = self.offs
        per = self.per
        max_d = _U32 if msd.typecode == "I" else _U64
        max_seq = _U32 if seq.typecode == "I" else _U64
        max_off = 0xFFFF if offs.typecode == "H" else _U32
        ms0 = self.ms0
        fbytes = self.fbytes
        names = self.fields
        width = 2 * len(names)
        n = len(msd)
        j = start
        # Consecutive IDs in one millisecond (what XADD * makes) are counted on in small ints.
        if eids is not None:
            first = eids[start]
            step = eids[total - 1] - first == total - 1 - start and eids[total - 1] >> 64 == first >> 64
        else:
            step = True
        d = (first >> 64) - ms0
        s = (first & _U64) - 1
        if step and d > max_d:
            return 0
        new_msd: list[int] = []
        new_seq: list[int] = []
        new_offs: list[int] = []
        parts: list[bytes] = []
        off = len(data)  # where the next entry starts, pieces gathered so far included
        while j < total:
            fields = entries[j]
            stop = len(fields)
            size = 0
            for i in range(at, stop):
                size += len(fields[i])
            if (max_entries and n >= max_entries) or off + fbytes + n * per + size >= max_bytes:
                break
            if size > MAX_NODE_SIZE:
                break
            if step:
                s += 1
            else:
                assert eids is not None
                eid = eids[j]
                d = (eid >> 64) - ms0
                s = eid & _U64
            if d > max_d or s > max_seq or off > max_off:
                break
            if not step:
                new_msd.append(d)
                new_seq.append(s)
            new_offs.append(off)
            count = stop - at
            same = count == width
            if same:
                for i in range(0, count, 2):
                    if fields[at + i] != names[i >> 1]:
                        same = False
                        break
            if same:
                # The node's field names (the master entry's): 0, then the values only.
                parts.append(_ZERO)
                off += 1
                for i in range(at + 1, stop, 2):
                    v = fields[i]
                    size = len(v)
                    head = _LEN_BYTES[size] if size < 0x80 else _len_bytes(size)
                    parts.append(head)
                    parts.append(v)
                    off += len(head) + size
            else:
                head = _len_bytes(count >> 1)
                parts.append(head)
                off += len(head)
                for i in range(at, stop):
                    x = fields[i]
                    size = len(x)
                    head = _LEN_BYTES[size] if size < 0x80 else _len_bytes(size)
                    parts.append(head)
                    parts.append(x)
                    off += len(head) + size
            n += 1
            j += 1
        done = j - start
        if done:
            data += b"".join(parts)
            # The arrays take the new numbers in bulk: array.extend converts a list item by
            # item through an iterator (10-25 ns each, the 'H' offsets through PyArg_Parse),
            # fromlist in one pass (3-11 ns), and an array of one millisecond repeated, or a
            # slice of counted sequence numbers, is copied as memory.
            if step:
                s = first & _U64
                msd.extend(array(msd.typecode, (d,)) * done)
                if s + done <= _COUNTED_LEN and seq.typecode == "I":
                    seq.extend(_COUNTED[s:s + done])
                else:
                    seq.extend(range(s, s + done))
            else:
                msd.fromlist(new_msd)
                seq.fromlist(new_seq)
            offs.fromlist(new_offs)
            self.live += done
        return done

    def seal(self) -> None:
        """Freeze a node that will receive no more entries: exact-size buffers, immutable data."""
        self.data = bytes(self.data)
        self.msd = array(self.msd.typecode, self.msd)
        self.seq = array(self.seq.typecode, self.seq)
        self.offs = array(self.offs.typecode, self.offs)

    # --- reading ----------------------------------------------------------------------------

    def id_at(self, i: int) -> int:
        return (self.ms0 + self.msd[i]) << 64 | self.seq[i]

    def ids(self, i: int, j: int) -> list[int]:
        """The IDs of entries i..j-1."""
        ms0 = self.ms0
        msd = self.msd
        seq = self.seq
        if j - i > 1:
            # Entries of one millisecond with consecutive sequence numbers (what XADD * and a
            # pipelined run make): the IDs are consecutive integers, each one addition away from
            # the one before, where building a 128-bit ID from its parts costs a few big-integer
            # operations (and range() over big integers multiplies for each item).
            d = msd[i]
            s = seq[i]
            if msd[j - 1] == d and seq[j - 1] - s == j - 1 - i:
                x = (ms0 + d) << 64 | s
                out = [x]
                for _ in range(j - i - 1):
                    x += 1
                    out.append(x)
                return out
        return [(ms0 + msd[k]) << 64 | seq[k] for k in range(i, j)]

    def is_dead(self, i: int) -> bool:
        dead = self.dead
        return dead is not None and bool(dead[i >> 3] & (1 << (i & 7)))

    def kill(self, i: int) -> None:
        """Flag entry i as deleted (the caller checked it is live)."""
        if self.dead is None:
            self.dead = bytearray((len(self.msd) + 7) >> 3)
        self.dead[i >> 3] |= 1 << (i & 7)
        self.live -= 1

    def first_live(self) -> int:
        """Index of the first live entry (the node must have one).

        Skips whole bytes of the bitmap: entries are mostly deleted from the front (XACKDEL,
        XDEL in delivery order), and each such deletion asks for the new first entry.
        """
        dead = self.dead
        if dead is None:
            return 0
        i = 0
        while dead[i] == 0xFF:
            i += 1
        b = dead[i]
        j = 0
        while b & (1 << j):
            j += 1
        return (i << 3) + j

    def index_ge(self, eid: int) -> int:
        """Index of the first entry with ID >= eid (len(self) if none)."""
        d = (eid >> 64) - self.ms0
        if d < 0:
            return 0
        msd = self.msd
        lo = bisect_left(msd, d)
        n = len(msd)
        if lo == n or msd[lo] != d:
            return lo
        if lo + 1 == n or msd[lo + 1] != d:
            # An entry alone in its millisecond: no second search.
            return lo if self.seq[lo] >= eid & _U64 else lo + 1
        hi = bisect_right(msd, d, lo)
        return bisect_left(self.seq, eid & _U64, lo, hi)

    def index_le(self, eid: int) -> int:
        """Index of the last entry with ID <= eid (-1 if none)."""
        d = (eid >> 64) - self.ms0
        if d < 0:
            return -1
        msd = self.msd
        hi = bisect_right(msd, d)
        if hi == 0 or msd[hi - 1] != d:
            return hi - 1
        if hi == 1 or msd[hi - 2] != d:
            # An entry alone in its millisecond: no second search.
            return hi - 1 if self.seq[hi - 1] <= eid & _U64 else hi - 2
        lo = bisect_left(msd, d, 0, hi)
        return bisect_right(self.seq, eid & _U64, lo, hi) - 1

    def fields_at(self, i: int) -> list[bytes]:
        """Decode entry i's flat [field, value, ...] list (copies, never views)."""
        data = self.data
        p = self.offs[i]
        k = data[p]
        p += 1
        out: list[bytes] = []
        if k == 0:  # the node's field names, then only the values are stored
            for name in self.fields:
                n = data[p]
                p += 1
                if n >= 0x80:
                    n, p = read_len(data, p - 1)
                out.append(name)
                out.append(bytes(data[p:p + n]))
                p += n
            return out
        if k >= 0x80:
            k, p = read_len(data, p - 1)
        for _ in range(2 * k):
            n = data[p]
            p += 1
            if n >= 0x80:
                n, p = read_len(data, p - 1)
            out.append(bytes(data[p:p + n]))
            p += n
        return out


class Run:
    """Consecutive live entries lo..hi-1 of one node, as storage keeps them: what bulk readers
    (the RESP encoder of protocol/stream_resp.py, consumer-group delivery) read instead of
    decoding entry by entry.

    Entry k (lo <= k < hi) has the ID ((ms0 + msd[k]) << 64) | seq[k]; its fields start at
    data[offs[k] - base]: a field count, then either (count 0) one value per name of `names`, or
    `count` pairs of field and value. Counts and lengths are LEB128 varints (a byte under 0x80 is
    the whole number), each string its length then its bytes. `data` is always immutable bytes:
    the node's own once it is sealed, else a copy of the run's stretch of it (`base` is then the
    offset that stretch starts at). A run is only valid until the stream is next written.

    `key` names the node: no other node of the process ever has it, and entry k of that node
    never changes (deleting or trimming hides entries, appending adds entries after the others,
    a copied node gets a key of its own). So what a reader derives from entry k of the node with
    key K stays true for as long as the reader keeps it.
    """

    __slots__ = ("names", "ms0", "msd", "seq", "offs", "data", "base", "lo", "hi", "key", "_node")

    def __init__(self, node: Node, lo: int, hi: int) -> None:
        self._node = node
        self.key = node.serial
        self.names = node.fields
        self.ms0 = node.ms0
        self.msd = node.msd
        self.seq = node.seq
        offs = self.offs = node.offs
        self.lo = lo
        self.hi = hi
        data = node.data
        if type(data) is bytes:
            self.data: bytes = data
            self.base = 0
        else:
            # The open tail node: its buffer grows in place, so the reader gets a snapshot of
            # just the entries it reads (a copy of what the reply copies anyway).
            base = offs[lo]
            end = offs[hi] if hi < len(offs) else len(data)
            self.data = bytes(memoryview(data)[base:end])
            self.base = base

    def __len__(self) -> int:
        return self.hi - self.lo

    def __repr__(self) -> str:
        return f"Run({self.lo}, {self.hi}, ids={self.ids()})"

    def ids(self) -> list[int]:
        """The IDs of the run's entries, ascending."""
        return self._node.ids(self.lo, self.hi)

    def entries(self) -> list[tuple[int, list[bytes]]]:
        """The run's entries decoded: (ID, [field, value, ...]), ascending."""
        node = self._node
        return [(node.id_at(k), node.fields_at(k)) for k in range(self.lo, self.hi)]

    def span(self, lo: int, hi: int) -> Run:
        """Entries lo..hi-1 of the same node, deleted ones included: for a reader that keeps
        what it derives from a node's entries and extends it over the entries between runs."""
        return Run(self._node, lo, hi)


def _never(eid: int) -> bool:
    return False


class EntryStore:
    """Ordered entries of one stream, packed in nodes. IDs must be appended in increasing order."""

    __slots__ = ("keys", "nodes", "length", "node_max_entries", "node_max_bytes",
                 "next_start", "next_node", "next_ni", "next_lo")

    def __init__(self, node_max_entries: int = 100, node_max_bytes: int = 4096) -> None:
        self.keys: list[int] = []  # master ID of each node, ascending
        self.nodes: list[Node] = []
        self.length = 0  # live entries
        # Where the last `runs_from` stopped: the ID after its last entry, and the slot (node,
        # its index, the entry index in it) that ID would be looked up at. Consumer groups read
        # on from where they stopped, so the next read mostly starts there and skips both
        # searches. Entries of a node never move (appends go after, deletions only flag), and
        # nodes are only appended or dropped: the slot holds while nodes[next_ni] is next_node.
        self.next_start = -1
        self.next_node: Node | None = None
        self.next_ni = 0
        self.next_lo = 0
        # Settable at run time (CONFIG SET stream-node-max-*); they only decide when the next
        # node is started, as in Redis. 0 means no limit.
        self.node_max_entries = node_max_entries
        self.node_max_bytes = node_max_bytes

    def __len__(self) -> int:
        return self.length

    def copy(self) -> EntryStore:
        """An independent copy: later writes to either do not show in the other."""
        new = EntryStore(self.node_max_entries, self.node_max_bytes)
        new.keys = self.keys[:]
        new.nodes = [node.copy() for node in self.nodes]
        new.length = self.length
        return new

    # --- writes ----------------------------------------------------------------------------

    def append(self, eid: int, fields: Sequence[bytes], size: int = -1) -> None:
        """Add an entry whose ID is greater than every ID ever stored (the caller checks).

        `size` is fields_size(fields) when the caller has it already.
        """
        nodes = self.nodes
        node = nodes[-1] if nodes else None
        if node is not None:
            max_bytes = self.node_max_bytes
            if max_bytes <= 0 or max_bytes > MAX_NODE_SIZE:
                max_bytes = MAX_NODE_SIZE
            if size < 0:
                size = fields_size(fields)
            # Same test as streamAppendItem: current size plus the new elements' lengths, and
            # the entry count including tombstones. (Node.nbytes() and len(node), inlined: this
            # runs for every XADD.)
            msd = node.msd
            n = len(msd)
            max_entries = self.node_max_entries
            if (max_entries and n >= max_entries) or (
                len(node.data) + node.fbytes + n * node.per + size >= max_bytes
            ):
                node.seal()
                node = None
        if node is None:
            names = tuple(fields[0::2])
            if nodes and nodes[-1].fields == names:
                names = nodes[-1].fields  # share one tuple between nodes with the same schema
            node = Node(eid >> 64, names)
            nodes.append(node)
            self.keys.append(eid)
        node.append(eid, fields)
        self.length += 1

    def extend(self, first: int, eids: list[int] | None, entries: list[list[bytes]],
               at: int, start: int, total: int) -> int:
        """`append` entries[start:total] in turn, entry j's fields being entries[j][at:] and its
        ID eids[j], or with eids None first + (j - start) (IDs of one millisecond); IDs ascend
        past every ID stored. How many were appended: the first entry over MAX_NODE_SIZE stops
        it.

        `append` takes the entries that start a node or widen one; `Node.fill` the rest.
        """
        i = start
        nodes = self.nodes
        while i < total:
            if nodes:
                max_bytes = self.node_max_bytes
                if max_bytes <= 0 or max_bytes > MAX_NODE_SIZE:
                    max_bytes = MAX_NODE_SIZE
                done = nodes[-1].fill(first + (i - start), eids, entries, at, i, total,
                                      self.node_max_entries, max_bytes)
                self.length += done
                i += done
                if i >= total:
                    break
            fields = entries[i][at:] if at else entries[i]
            size = fields_size(fields)
            if size > MAX_NODE_SIZE:
                break
            self.append(first + (i - start) if eids is None else eids[i], fields, size)
            i += 1
        return i - start

    def load_node(
        self, master_id: int, names: tuple[bytes, ...], msd: list[int], seq: list[int],
        offs: list[int], data: bytes, dead: bytearray | None,
    ) -> None:
        """Add a whole node in its packed form (`Node`'s documentation), after every node held:
        how a stream is restored from a serialized copy without re-adding entry by entry.

        `master_id` is the node's key (its first entry's ID, deleted or not); entry i has the
        ID ((master_id >> 64) + msd[i]) << 64 | seq[i] and its fields at data[offs[i]:];
        `dead` is the tombstone bitmap (None: no entry deleted). The caller guarantees the IDs
        ascend and follow every ID stored, and that the data is well formed.
        """
        node = Node(master_id >> 64, names)
        if self.nodes and self.nodes[-1].fields == names:
            node.fields = self.nodes[-1].fields
        n = len(msd)
        if n and msd[-1] > _U32:  # the deltas ascend with the IDs
            node.msd = array("Q", msd)
            node.per += 4
        else:
            node.msd = array("I", msd)
        if n and max(seq) > _U32:
            node.seq = array("Q", seq)
            node.per += 4
        else:
            node.seq = array("I", seq)
        if n and offs[-1] > 0xFFFF:
            node.offs = array("I", offs)
            node.per += 2
        else:
            node.offs = array("H", offs)
        node.data = data
        live = n
        if dead is not None:
            live -= bin(int.from_bytes(dead, "little")).count("1")
        node.dead = dead
        node.live = live
        self.nodes.append(node)
        self.keys.append(master_id)
        self.length += live

    def delete(self, eid: int) -> bool:
        """XDEL one ID: flag it deleted, freeing its node if no live entry remains."""
        ni = bisect_right(self.keys, eid) - 1
        if ni < 0:
            return False
        node = self.nodes[ni]
        i = node.index_ge(eid)
        if i >= len(node) or node.id_at(i) != eid or node.is_dead(i):
            return False
        if node.live == 1:
            del self.nodes[ni]
            del self.keys[ni]
        else:
            node.kill(i)
        self.length -= 1
        return True

    def delete_many(self, eids: Iterable[int]) -> list[int]:
        """`delete` each ID in turn; the IDs that were live entries, in the order given.

        IDs that follow each other in one node (what a consumer acknowledges and deletes) are
        found by one comparison each, without searching the node again.
        """
        gone: list[int] = []
        keys = self.keys
        nodes = self.nodes
        node: Node | None = None
        ni = -1
        nxt = 0
        for eid in eids:
            if node is not None and nxt < len(node) and node.id_at(nxt) == eid:
                i = nxt
            else:
                ni = bisect_right(keys, eid) - 1
                if ni < 0:
                    node = None
                    continue
                node = nodes[ni]
                i = node.index_ge(eid)
                nxt = i
                if i >= len(node) or node.id_at(i) != eid:
                    continue
            nxt = i + 1
            if node.is_dead(i):
                continue
            if node.live == 1:
                del nodes[ni]
                del keys[ni]
                node = None
            else:
                node.kill(i)
            self.length -= 1
            gone.append(eid)
        return gone

    def trim(self, maxlen: int | None, minid: int | None, approx: bool, limit: int) -> int:
        """streamTrim: remove head entries until length <= maxlen (or no ID < minid remains).

        Exactly one of maxlen / minid is given. Whole nodes go first; with `approx` the trim
        stops at the first node that cannot be dropped whole, otherwise entries of that node
        are flagged deleted. `limit` (0 = none) caps the entries removed, counted per node, and
        stops before a node that would exceed it. Returns the number of entries removed.
        """
        deleted = 0
        drop = 0  # whole nodes dropped from the head
        nodes = self.nodes
        floor = 0 if minid is None else minid  # only read when maxlen is None, i.e. minid given
        for node in nodes:
            if maxlen is not None and self.length <= maxlen:
                break
            entries = node.live
            if limit and deleted + entries > limit:
                break
            if maxlen is not None:
                whole = self.length - entries >= maxlen
            else:
                whole = node.id_at(len(node) - 1) < floor  # last ID, tombstone or not
            if whole:
                self.length -= entries
                deleted += entries
                drop += 1
                continue
            if approx:
                break
            # Flag entries of this node; as in Redis the node stays even if it empties.
            for i in range(len(node)):
                if maxlen is not None:
                    if self.length <= maxlen:
                        break
                elif node.id_at(i) >= floor:
                    break
                if not node.is_dead(i):
                    node.kill(i)
                    self.length -= 1
                    deleted += 1
            break
        if drop:
            del nodes[:drop]
            del self.keys[:drop]
        return deleted

    def trim_refs(
        self,
        maxlen: int | None,
        minid: int | None,
        approx: bool,
        limit: int,
        referenced: Callable[[int], bool] | None,
        unread_after: int,
        gone: list[int] | None,
    ) -> int:
        """`trim` for the DELREF and ACKED policies. Returns the number of entries removed.

        ACKED (`referenced` given) keeps every entry `referenced` is true for, and every entry
        past `unread_after` (some group has not read those: the walk ends there). A node that
        `trim` would drop whole is walked entry by entry instead, and `~` still stops at the
        first node that is not droppable; without `~` the walk goes on past the entries kept,
        until the threshold is met, so the entries removed are always the oldest unreferenced
        ones (what a replayed `MAXLEN = <length> ACKED` removes again).
        DELREF (`gone` given) removes what `trim` removes, and appends to `gone` every ID the
        trim passes over, tombstones included, for the caller to drop from every PEL.
        Nodes the trim empties are freed.
        """
        deleted = 0
        nodes = self.nodes
        acked = referenced is not None
        is_ref: Callable[[int], bool] = _never if referenced is None else referenced
        floor = 0 if minid is None else minid
        emptied: list[int] = []
        done = False
        for ni, node in enumerate(nodes):
            if maxlen is not None and self.length <= maxlen:
                break
            entries = node.live
            if limit and deleted + entries > limit:
                break
            n = len(node)
            if maxlen is not None:
                whole = self.length - entries >= maxlen
            else:
                whole = node.id_at(n - 1) < floor
            if not whole and approx:
                break
            if acked and node.id_at(0) > unread_after:
                break
            if whole and not acked:
                if gone is not None:
                    gone += node.ids(0, n)
                self.length -= entries
                deleted += entries
                emptied.append(ni)
                continue
            before = node.live
            for i in range(n):
                eid = node.id_at(i)
                if maxlen is not None:
                    if self.length <= maxlen:
                        done = True
                        break
                elif eid >= floor:
                    done = True
                    break
                if acked:
                    if eid > unread_after:
                        done = True
                        break
                    if node.is_dead(i) or is_ref(eid):
                        continue
                else:
                    if gone is not None:
                        gone.append(eid)
                    if node.is_dead(i):
                        continue
                node.kill(i)
                self.length -= 1
                deleted += 1
            if not node.live and before:
                emptied.append(ni)
            if done or not (whole or acked):
                break
        if emptied:
            if emptied[-1] == len(emptied) - 1:  # the usual case: a run of head nodes
                del nodes[:len(emptied)]
                del self.keys[:len(emptied)]
            else:
                drop = set(emptied)
                self.keys = [k for i, k in enumerate(self.keys) if i not in drop]
                self.nodes = [nd for i, nd in enumerate(nodes) if i not in drop]
        return deleted

    # --- reads -----------------------------------------------------------------------------

    def node_count(self) -> int:
        return len(self.nodes)

    def _locate(self, eid: int) -> tuple[Node, int] | None:
        ni = bisect_right(self.keys, eid) - 1
        if ni < 0:
            return None
        node = self.nodes[ni]
        i = node.index_ge(eid)
        if i >= len(node) or node.id_at(i) != eid or node.is_dead(i):
            return None
        return node, i

    def contains(self, eid: int) -> bool:
        """Is eid a live entry? (streamEntryExists)"""
        return self._locate(eid) is not None

    def get(self, eid: int) -> list[bytes] | None:
        """The fields of live entry eid, or None."""
        found = self._locate(eid)
        return None if found is None else found[0].fields_at(found[1])

    def edge_id(self, first: bool, skip_tombstones: bool) -> int | None:
        """streamGetEdgeID: first or last ID, optionally ignoring tombstones; None if none."""
        nodes = self.nodes if first else reversed(self.nodes)
        for node in nodes:
            n = len(node)
            if not skip_tombstones:
                return node.id_at(0 if first else n - 1)
            if not node.live:
                continue
            if first:
                return node.id_at(node.first_live())
            rng = range(n - 1, -1, -1)
            for i in rng:
                if not node.is_dead(i):
                    return node.id_at(i)
        return None

    def iter_range(
        self, start: int, end: int, reverse: bool = False
    ) -> Iterator[tuple[int, list[bytes]]]:
        """Live entries with start <= ID <= end, ascending (or descending if reverse).

        Each is (id, fields).
        The store must not be modified while the iterator is in use.
        """
        if start > end:
            return
        keys = self.keys
        nodes = self.nodes
        if not reverse:
            ni = bisect_right(keys, start) - 1
            if ni < 0:
                ni = 0
            nn = len(nodes)
            while ni < nn:
                if keys[ni] > end:
                    return
                node = nodes[ni]
                n = len(node)
                i = node.index_ge(start) if keys[ni] < start else 0
                if node.live:
                    dead = node.dead
                    ms0 = node.ms0
                    msd = node.msd
                    seq = node.seq
                    while i < n:
                        eid = (ms0 + msd[i]) << 64 | seq[i]
                        if eid > end:
                            return
                        if dead is None or not dead[i >> 3] & (1 << (i & 7)):
                            yield eid, node.fields_at(i)
                        i += 1
                ni += 1
        else:
            ni = bisect_right(keys, end) - 1
            while ni >= 0:
                node = nodes[ni]
                i = node.index_le(end)
                if node.live:
                    dead = node.dead
                    ms0 = node.ms0
                    msd = node.msd
                    seq = node.seq
                    while i >= 0:
                        eid = (ms0 + msd[i]) << 64 | seq[i]
                        if eid < start:
                            return
                        if dead is None or not dead[i >> 3] & (1 << (i & 7)):
                            yield eid, node.fields_at(i)
                        i -= 1
                if keys[ni] <= start:
                    return
                ni -= 1

    def runs(
        self, start: int, end: int, reverse: bool = False, count: int | None = None
    ) -> list[Run]:
        """The live entries of `iter_range` (at most `count`; None or 0 = all), as runs.

        A `Run` is consecutive live entries of one node; in reverse the runs come last-first and
        each is read from its last entry down to its first.
        """
        out: list[Run] = []
        if start > end:
            return out
        left = count if count else -1  # -1: no limit (never reaches 0)
        keys = self.keys
        nodes = self.nodes
        if not reverse:
            ni = max(bisect_right(keys, start) - 1, 0)
            nn = len(nodes)
            while ni < nn and left:
                if keys[ni] > end:
                    break
                node = nodes[ni]
                n = len(node)
                lo = node.index_ge(start) if keys[ni] < start else 0
                hi = n if node.id_at(n - 1) <= end else node.index_le(end) + 1
                if node.live and lo < hi:
                    left = _live_runs(node, lo, hi, left, False, out)
                if hi < n:
                    break
                ni += 1
        else:
            ni = bisect_right(keys, end) - 1
            while ni >= 0 and left:
                node = nodes[ni]
                hi = node.index_le(end) + 1
                lo = 0 if keys[ni] >= start else node.index_ge(start)
                if node.live and lo < hi:
                    left = _live_runs(node, lo, hi, left, True, out)
                if keys[ni] <= start:
                    break
                ni -= 1
        return out

    def runs_from(self, start: int, count: int | None = None) -> list[Run]:
        """`runs(start, MAX_ID, False, count)`: what XREADGROUP `>` and XREAD serve, the live
        entries from start to the end of the stream, with no end bound to check."""
        out: list[Run] = []
        left = count if count else -1
        keys = self.keys
        nodes = self.nodes
        nn = len(nodes)
        ni = self.next_ni
        if start == self.next_start and ni < nn and nodes[ni] is self.next_node:
            lo = self.next_lo  # where the last read stopped (see __init__)
        else:
            ni = bisect_right(keys, start) - 1
            if ni < 0:
                ni = 0
            lo = -1
        at = -1  # the index of the node of the last run served
        while ni < nn:
            node = nodes[ni]
            n = len(node.msd)
            if lo < 0:
                lo = node.index_ge(start) if keys[ni] < start else 0
            if node.live and lo < n:
                if node.dead is not None:
                    served = len(out)
                    left = _live_runs(node, lo, n, left, False, out)
                    if len(out) > served:
                        at = ni
                    if not left:
                        break
                elif left < 0 or n - lo < left:
                    out.append(Run(node, lo, n))
                    at = ni
                    if left > 0:
                        left -= n - lo
                else:
                    out.append(Run(node, lo, lo + left))
                    at = ni
                    break
            ni += 1
            lo = -1
        if at >= 0:
            # The next read starts after the last entry served: remember its slot.
            last = out[-1]
            k = last.hi - 1
            node = nodes[at]
            self.next_start = ((node.ms0 + node.msd[k]) << 64 | node.seq[k]) + 1
            self.next_node = node
            self.next_ni = at
            self.next_lo = last.hi
        return out


def _live_runs(node: Node, lo: int, hi: int, left: int, reverse: bool,
               out: list[Run]) -> int:
    """Append to `out` the runs of live entries among node's entries lo..hi-1, taking at most
    `left` entries (-1: all) from the low end, or the high end in reverse; returns what is left."""
    dead = node.dead
    if dead is None:
        if left < 0 or hi - lo <= left:
            out.append(Run(node, lo, hi))
            return left if left < 0 else left - (hi - lo)
        if reverse:
            out.append(Run(node, hi - left, hi))
        else:
            out.append(Run(node, lo, lo + left))
        return 0
    k = hi - 1 if reverse else lo
    step = -1 if reverse else 1
    while lo <= k < hi and left:
        if dead[k >> 3] & (1 << (k & 7)):
            k += step
            continue
        first = k
        while lo <= k < hi and left and not dead[k >> 3] & (1 << (k & 7)):
            k += step
            left -= 1
        out.append(Run(node, k + 1, first + 1) if reverse else Run(node, first, k))
    return left
