"""Model-based test: the packed stream engine against a plain sorted list of (id, fields)."""

from __future__ import annotations

import bisect

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from protocol.stream_resp import entries_reply, runs_reply
from streams import MAX_ID, Stream, StreamError, make_id
from streams.errors import XADD_TOO_SMALL

SMALL_MS = st.integers(min_value=0, max_value=40)
SEQ = st.integers(min_value=0, max_value=4)
VALUES = st.binary(max_size=3)
FIELDS = st.one_of(
    st.tuples(VALUES, VALUES).map(lambda t: [b"a", t[0], b"b", t[1]]),  # usually the master schema
    st.lists(st.binary(max_size=200), min_size=1, max_size=3).map(lambda xs: [x for v in xs for x in (b"k", v)]),
)


def shape(runs: list) -> list[tuple[int, int, int]]:
    return [(run.key, run.lo, run.hi) for run in runs]


class StreamModel(RuleBasedStateMachine):
    @initialize(
        nme=st.sampled_from([0, 1, 2, 3, 5, 12, 100]),
        nmb=st.sampled_from([0, 1, 40, 200, 4096]),
    )
    def setup(self, nme: int, nmb: int) -> None:
        if nme == 0 and nmb == 0:
            nmb = 4096
        self.s = Stream(nme, nmb)
        self.model: list[tuple[int, list[bytes]]] = []
        self.last_id = 0
        self.max_deleted = 0
        self.added = 0

    def model_ids(self) -> list[int]:
        return [e[0] for e in self.model]

    def _added(self, new: int, fields: list[bytes]) -> None:
        self.model.append((new, fields))
        self.last_id = new
        self.added += 1

    @rule(now=SMALL_MS, fields=FIELDS)
    def add_auto(self, now: int, fields: list[bytes]) -> None:
        new = self.s.add(fields, now_ms=now)
        expected = make_id(now, 0) if now > self.last_id >> 64 else self.last_id + 1
        assert new == expected
        self._added(new, fields)

    @rule(ms=SMALL_MS, seq=SEQ, fields=FIELDS)
    def add_explicit(self, ms: int, seq: int, fields: list[bytes]) -> None:
        eid = make_id(ms, seq)
        if eid == 0:
            return
        if eid <= self.last_id:
            try:
                self.s.add(fields, now_ms=0, id=eid)
            except StreamError as e:
                assert str(e) == XADD_TOO_SMALL
            else:
                raise AssertionError("accepted a non-increasing ID")
            return
        assert self.s.add(fields, now_ms=0, id=eid) == eid
        self._added(eid, fields)

    @rule(ms=SMALL_MS, fields=FIELDS)
    def add_auto_seq(self, ms: int, fields: list[bytes]) -> None:
        expected = self.last_id + 1 if ms == self.last_id >> 64 else make_id(ms, 0)
        if expected <= self.last_id:
            try:
                self.s.add(fields, now_ms=0, id=make_id(ms, 0), seq_given=False)
            except StreamError:
                return
            raise AssertionError("accepted a smaller ms-*")
        assert self.s.add(fields, now_ms=0, id=make_id(ms, 0), seq_given=False) == expected
        self._added(expected, fields)

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def delete_existing(self, data: st.DataObject) -> None:
        picks = data.draw(st.lists(st.sampled_from(self.model_ids()), min_size=1, max_size=4))
        gone = set(picks)
        assert self.s.delete(picks) == len(gone)
        self.model = [e for e in self.model if e[0] not in gone]
        self.max_deleted = max(self.max_deleted, *gone)

    @rule(ms=SMALL_MS, seq=SEQ)
    def delete_any(self, ms: int, seq: int) -> None:
        eid = make_id(ms, seq)
        present = eid in set(self.model_ids())
        assert self.s.delete([eid]) == int(present)
        if present:
            self.model = [e for e in self.model if e[0] != eid]
            self.max_deleted = max(self.max_deleted, eid)

    @rule(maxlen=st.integers(min_value=0, max_value=30))
    def trim_maxlen_exact(self, maxlen: int) -> None:
        drop = max(len(self.model) - maxlen, 0)
        assert self.s.trim(maxlen=maxlen) == drop
        self.model = self.model[drop:]

    @rule(ms=SMALL_MS, seq=SEQ)
    def trim_minid_exact(self, ms: int, seq: int) -> None:
        minid = make_id(ms, seq)
        drop = bisect.bisect_left(self.model_ids(), minid)
        assert self.s.trim(minid=minid) == drop
        self.model = self.model[drop:]

    @rule(maxlen=st.integers(min_value=0, max_value=30), limit=st.sampled_from([None, 0, 1, 3, 10]))
    def trim_maxlen_approx(self, maxlen: int, limit: int | None) -> None:
        n = self.s.trim(maxlen=maxlen, approx=True, limit=limit)
        assert 0 <= n <= max(len(self.model) - maxlen, 0)
        if limit:
            assert n <= limit
        self.model = self.model[n:]  # whole head nodes: always a prefix

    @rule(ms=SMALL_MS, limit=st.sampled_from([None, 0, 2]))
    def trim_minid_approx(self, ms: int, limit: int | None) -> None:
        minid = make_id(ms, 0)
        n = self.s.trim(minid=minid, approx=True, limit=limit)
        assert n <= bisect.bisect_left(self.model_ids(), minid)
        self.model = self.model[n:]

    @rule(nme=st.sampled_from([1, 2, 4, 100]))
    def change_limits(self, nme: int) -> None:
        self.s.set_node_limits(nme, self.s.store.node_max_bytes)

    @rule(
        a=st.integers(min_value=0, max_value=45), b=st.integers(min_value=0, max_value=45),
        sa=SEQ, sb=SEQ, count=st.sampled_from([None, 1, 2, 5]), reverse=st.booleans(),
    )
    def check_range(self, a: int, b: int, sa: int, sb: int, count: int | None, reverse: bool) -> None:
        start, end = make_id(a, sa), make_id(b, sb)
        want = [e for e in self.model if start <= e[0] <= end]
        if reverse:
            want.reverse()
        if count:
            want = want[:count]
        assert self.s.range(start, end, count, reverse) == want
        # The same entries as runs of live entries, each within one node
        runs = self.s.store.runs(start, end, reverse, count)
        got = []
        for run in runs:
            assert 0 <= run.lo < run.hi
            entries = run.entries()
            assert [eid for eid, _ in entries] == run.ids()
            got += entries[::-1] if reverse else entries  # live entries only: checked against want
        assert got == want
        # The wire encoder reads the runs' packed form; the reply of the decoded entries is the
        # plain encoding of the same thing.
        assert runs_reply(runs, reverse) == entries_reply(want)
        if not reverse:  # runs_from: the same runs, up to the end of the stream
            assert shape(self.s.store.runs_from(start, count)) == shape(
                self.s.store.runs(start, MAX_ID, False, count))

    @rule(ms=SMALL_MS, seq=SEQ)
    def check_lookup(self, ms: int, seq: int) -> None:
        eid = make_id(ms, seq)
        want = dict(self.model).get(eid)
        assert self.s.get(eid) == want
        assert self.s.contains(eid) == (want is not None)
        assert self.s.read_after(eid) == [e for e in self.model if e[0] > eid]

    @invariant()
    def metadata(self) -> None:
        if not hasattr(self, "s"):
            return
        s = self.s
        assert s.length == len(self.model)
        assert s.last_id == self.last_id
        assert s.entries_added == self.added
        assert s.max_deleted_id == self.max_deleted
        assert s.first_id == (self.model[0][0] if self.model else 0)
        assert s.last_valid_id() == (self.model[-1][0] if self.model else 0)
        assert s.range(0, MAX_ID) == self.model
        assert sum(n.live for n in s.store.nodes) == len(self.model)
        assert s.store.keys == sorted(s.store.keys)


StreamModel.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TestStreamModel = StreamModel.TestCase
