"""The few Redis calls the source and sink make, over redis-py.

Runs on the driver and on executors, so it needs nothing but redis-py. Responses are requested as
str (decode_responses) because every field lands in Spark as STRING anyway; invalid UTF-8 is
replaced rather than failing a whole task (spark/endpoint.py makes the connections).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import redis

from spark import endpoint as _endpoint
from spark.endpoint import Endpoint
from spark.offsets import ZERO, StreamId


def connect(endpoint: Endpoint | str, replica: bool = False, follow_failover: bool = True) -> redis.Redis:
    """A client for the endpoint's master (or, with `replica`, one of its replicas): see
    spark/endpoint.py for the urls and for what a failover does to the calls."""
    return _endpoint.connect(endpoint, replica=replica, follow_failover=follow_failover)


@dataclass(frozen=True)
class StreamState:
    """What XINFO STREAM says about a stream, reduced to the IDs the source reasons with."""

    length: int
    first_entry: StreamId | None
    last_entry: StreamId | None
    last_generated: StreamId
    max_deleted: StreamId | None  # None on servers older than Redis 7.0 (no such field)
    entries_added: int | None  # entries ever added (Redis 7.0+); trimming does not lower it

    @property
    def removed(self) -> int | None:
        """Entries ever removed (trimmed or XDELed)."""
        return None if self.entries_added is None else self.entries_added - self.length

    def count_up_to_head(self) -> int | None:
        """Entries ever added with an ID <= the last entry (exact when nothing after it was XDELed)."""
        if self.entries_added is None or self.last_entry != self.last_generated:
            return None
        return self.entries_added


def stream_state(r: redis.Redis, key: str) -> StreamState | None:
    """XINFO STREAM, or None when the key does not exist (or is not a stream)."""
    try:
        info = r.xinfo_stream(key)
    except redis.ResponseError as exc:
        if "no such key" in str(exc).lower() or "wrongtype" in str(exc).lower():
            return None
        raise

    def entry_id(entry: object) -> StreamId | None:
        if not entry:
            return None
        first = entry[0] if isinstance(entry, (list, tuple)) else entry
        return StreamId.parse(first)

    max_deleted = info.get("max-deleted-entry-id")
    return StreamState(
        length=int(info.get("length", 0)),
        first_entry=entry_id(info.get("first-entry")),
        last_entry=entry_id(info.get("last-entry")),
        last_generated=StreamId.parse(info.get("last-generated-id") or "0-0"),
        max_deleted=StreamId.parse(max_deleted) if max_deleted else None,
        entries_added=int(info["entries-added"]) if info.get("entries-added") is not None else None,
    )


def last_entry_id(r: redis.Redis, key: str) -> StreamId | None:
    """The newest entry's ID (XREVRANGE + - COUNT 1): the head a batch may read up to."""
    try:
        entries = r.xrevrange(key, "+", "-", count=1)
    except redis.ResponseError as exc:
        if "wrongtype" in str(exc).lower():
            return None
        raise
    return StreamId.parse(entries[0][0]) if entries else None


# A position in a stream: the last ID covered, and how many entries were ever added up to it
# (None when unknown). The count is what detects trimming: XTRIM leaves no other trace in XINFO.
Position = tuple[StreamId, int | None]


def earliest_position(r: redis.Redis, key: str) -> Position:
    """The exclusive start that reads a stream from its oldest entry.

    Resolved to "just before the first entry" rather than 0-0 so that entries trimmed *before*
    the query started are not later mistaken for data loss.
    """
    state = stream_state(r, key)
    if state is None:
        return ZERO, 0
    if state.first_entry is not None:
        return state.first_entry.predecessor(), state.removed
    # An empty stream: every future entry gets an ID above last-generated-id.
    return state.last_generated, state.entries_added


def latest_position(r: redis.Redis, key: str) -> Position:
    """The exclusive start that reads only entries added from now on."""
    state = stream_state(r, key)
    if state is None:
        return ZERO, 0
    return state.last_generated, state.entries_added


def discover_streams(r: redis.Redis, pattern: str) -> list[str]:
    """Stream keys matching a glob (SCAN MATCH pattern TYPE stream), sorted for stable plans."""
    return sorted(set(r.scan_iter(match=pattern, count=1000, _type="stream")))


def xrange_pages(
    r: redis.Redis, key: str, start: StreamId, end: StreamId, batch: int
) -> Iterator[list[tuple[str, dict[str, str]]]]:
    """Entries with start < ID <= end, `batch` per XRANGE call, oldest first."""
    cursor = start.successor()
    while cursor <= end:
        page = r.xrange(key, str(cursor), str(end), count=batch)
        if not page:
            return
        yield page
        if len(page) < batch:
            return
        cursor = StreamId.parse(page[-1][0]).successor()


def xrange_ids(r: redis.Redis, key: str, start: StreamId, end: StreamId | str, count: int) -> list[StreamId]:
    """IDs of up to `count` entries after `start` (used to place maxEntriesPerTrigger's cut)."""
    page = r.xrange(key, str(start.successor()), str(end), count=count)
    return [StreamId.parse(entry_id) for entry_id, _ in page]
