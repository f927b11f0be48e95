"""Set commands: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP, SRANDMEMBER, SMOVE,
SINTER, SINTERCARD, SINTERSTORE, SUNION, SUNIONSTORE, SDIFF, SDIFFSTORE, SSCAN (t_set.c)."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int, string2ll
from protocol.reply import ErrorReply, SetReply
from server import scan_order, value_types
from server.command_table import command, key_spec, on_server_start, run_of
from server.commands.keys import parse_cursor
from server.commands.runs import announce_calls, read_run_end, run_end
from server.glob import compile_glob
from server.notify import NOTIFY_GENERIC, NOTIFY_SET, notify_keyspace_event
from sets import (
    HASHTABLE,
    INTSET,
    LISTPACK,
    Limits,
    Set,
    intersection,
    intersection_store,
    pop_many,
    random_distinct,
    union_or_diff,
)
from sets.set import ENCODING_NAMES

if TYPE_CHECKING:
    from server.connection import Client
    from server.keyspace import Database
    from server.server import Server

SYNTAX_ERROR = ErrorReply("ERR syntax error")
_NOT_POSITIVE = ErrorReply("ERR value is out of range, must be positive")
_LONG_MAX = 2**63 - 1
_SREM_BATCH = 1024  # SPOP's SREM effects carry at most this many members each
_REWRITE_BATCH = 64  # AOF_REWRITE_ITEMS_PER_CMD

# The encoding thresholds, kept current by CONFIG SET (see _follow_limits).
LIMITS = Limits()


@on_server_start
def _follow_limits(server: Server) -> None:
    config = server.config

    def apply(_value: object) -> None:
        fresh = Limits(config["set-max-intset-entries"], config["set-max-listpack-entries"],
                       config["set-max-listpack-value"])
        LIMITS.intset_entries = fresh.intset_entries
        LIMITS.listpack_entries = fresh.listpack_entries
        LIMITS.listpack_value = fresh.listpack_value

    apply(None)
    for name in ("set-max-intset-entries", "set-max-listpack-entries", "set-max-listpack-value"):
        config.on_change(name, apply)


# --- value type ---------------------------------------------------------------------------------


def _rewrite(key: bytes, s: Set) -> Iterable[list[bytes]]:
    batch: list[bytes] = []
    for member in s.members():
        batch.append(member)
        if len(batch) == _REWRITE_BATCH:
            yield [b"SADD", key, *batch]
            batch = []
    if batch:
        yield [b"SADD", key, *batch]


def _memory(s: Set, samples: int) -> int:
    data = s.data
    if s.enc == INTSET:
        return 16 + 8 * len(data)
    if s.enc == LISTPACK:
        return 16 + sum(len(m) + 2 for m in data)
    n = len(data)
    if n == 0:
        return sys.getsizeof(data)
    # As Redis's objectComputeSize: the table plus the average sampled member times the size.
    sampled = 0
    total = 0
    for member in data:
        total += sys.getsizeof(member)
        sampled += 1
        if samples and sampled >= samples:
            break
    return sys.getsizeof(data) + total * n // sampled


value_types.register(value_types.ValueType(
    Set, b"set", _rewrite, Set.copy, lambda s, _c: ENCODING_NAMES[s.enc], _memory))


# --- helpers ------------------------------------------------------------------------------------


def get_set(db: Database, key: bytes) -> Set | None:
    """The set at key, None when missing; WRONGTYPE for another type."""
    return db.get_typed(key, Set)


def _changed(db: Database, key: bytes, s: Set) -> None:
    s.scan_state = None
    db.signal_modified(key)


def _lookup_all(db: Database, keys: list[bytes]) -> list[Set | None]:
    """Every key's set, missing ones as None (each a `keymiss`, as the read commands' lookups
    are Redis's lookupKeyRead, STORE variants included); WRONGTYPE if any key holds another
    type."""
    return [db.read_typed(key, Set) for key in keys]


def _store(client: Client, dst: bytes, result: Set, argv: list[bytes], event: bytes) -> int:
    """The *STORE commands' ending: the result replaces dst (its TTL too), an empty one deletes it."""
    db = client.db
    size = len(result)
    if size:
        db.set(dst, result)
        notify_keyspace_event(client, NOTIFY_SET, event, dst, db.index)
        client.propagate(argv)
    elif db.delete(dst):
        notify_keyspace_event(client, NOTIFY_GENERIC, b"del", dst, db.index)
        client.propagate(argv)
    return size


_KEY_ARG = {"name": "key", "type": "key", "key_spec_index": 0}
_KEYS_ARG = {"name": "key", "type": "key", "key_spec_index": 0, "multiple": True}
_MEMBERS_ARG = {"name": "member", "type": "string", "multiple": True}
_STORE_ARGS = ({"name": "destination", "type": "key", "key_spec_index": 0},
               {"name": "key", "type": "key", "key_spec_index": 1, "multiple": True})
_STORE_SPECS = (key_spec(("OW", "UPDATE"))[0], key_spec(("RO", "ACCESS"), 2, last=-1)[0])
_ORDER_TIP = ("nondeterministic_output_order",)


# --- SADD / SREM / SMOVE ------------------------------------------------------------------------


@command("sadd", -3, "write denyoom fast", keys=(1, 1, 1), group="set", since="1.0.0",
         summary="Adds one or more members to a set. Creates the key if it doesn't exist.",
         complexity="O(1) for each element added, so O(N) to add N elements when the command is "
         "called with multiple arguments.",
         key_specs=key_spec(("RW", "INSERT")),
         history=(("2.4.0", "Accepts multiple `member` arguments."),),
         arguments=(_KEY_ARG, _MEMBERS_ARG))
def sadd(client: Client, argv: list[bytes]) -> Any:
    db = client.db
    key = argv[1]
    s = db.get_typed(key, Set)
    limits = LIMITS
    created = s is None
    if s is None:
        s = Set.create(argv[2], len(argv) - 2, limits)
        db.add(key, s)  # counts one change
    else:
        s.maybe_convert(len(argv) - 2, limits)
    added = _add_members(s, argv, limits)
    if added:
        if not created:
            _changed(db, key, s)
        client.keyspace.dirty += added - 1  # one change per member added, as Redis counts
        notify_keyspace_event(client, NOTIFY_SET, b"sadd", key, db.index)
        client.propagate(argv)
    return added


def _add_members(s: Set, argv: list[bytes], limits: Limits) -> int:
    """SADD's members argv[2:] into s, converting as Redis does: how many were new."""
    added = 0
    if s.enc == HASHTABLE:
        data = s.data
        for j in range(2, len(argv)):
            member = argv[j]
            if member not in data:
                data.add(member)
                added += 1
        if added:
            s.pool = None
    else:
        for j in range(2, len(argv)):
            if s.add(argv[j], limits):
                added += 1
    return added


@run_of("sadd")
def sadd_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    """Consecutive `SADD key member...` to one existing set, as a client pipelines them: one
    lookup, one change signal, the replies encoded together. Each call converts, adds, answers,
    counts and is logged as it would alone; another command, key or spelling ends the run, and a
    missing key or one of another type leaves the calls to the single path."""
    end = run_end(commands, start, 3)
    done = end - start
    if done < 2:
        return 0
    key = commands[start][1]
    db = client.db
    s = db.get(key)
    if type(s) is not Set:
        return 0
    limits = LIMITS
    replies: list[bytes] = []
    changing: list[list[bytes]] = []  # the calls that added members: the others change nothing
    total = 0
    for i in range(start, end):
        argv = commands[i]
        s.maybe_convert(len(argv) - 2, limits)
        added = _add_members(s, argv, limits)
        replies.append(b":%d\r\n" % added)
        if added:
            total += added
            changing.append(argv)
    if total:
        _changed(db, key, s)
        client.keyspace.dirty += total - 1
        announce_calls(client, db, key, changing, 0, len(changing), NOTIFY_SET, b"sadd")
    client.out.append(b"".join(replies))
    return done


@command("srem", -3, "write fast", keys=(1, 1, 1), group="set", since="1.0.0",
         summary="Removes one or more members from a set. Deletes the set if the last member was "
         "removed.",
         complexity="O(N) where N is the number of members to be removed.",
         key_specs=key_spec(("RW", "DELETE")),
         history=(("2.4.0", "Accepts multiple `member` arguments."),),
         arguments=(_KEY_ARG, _MEMBERS_ARG))
def srem(client: Client, argv: list[bytes]) -> Any:
    db = client.db
    key = argv[1]
    s = db.get_typed(key, Set)
    if s is None:
        return 0
    deleted = 0
    emptied = False
    for j in range(2, len(argv)):
        if s.remove(argv[j]):
            deleted += 1
            if not len(s):
                emptied = True
                break
    if deleted:
        notify_keyspace_event(client, NOTIFY_SET, b"srem", key, db.index)
        if emptied:
            db.delete(key)
            notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
        else:
            _changed(db, key, s)
        client.propagate(argv)
    return deleted


@command("smove", 4, "write fast", keys=(1, 2, 1), group="set", since="1.0.0",
         summary="Moves a member from one set to another.",
         key_specs=(key_spec(("RW", "ACCESS", "DELETE"))[0], key_spec(("RW", "INSERT"), 2)[0]),
         arguments=({"name": "source", "type": "key", "key_spec_index": 0},
                    {"name": "destination", "type": "key", "key_spec_index": 1},
                    {"name": "member", "type": "string"}))
def smove(client: Client, argv: list[bytes]) -> Any:
    db = client.db
    src_key, dst_key, member = argv[1], argv[2], argv[3]
    src = db.get(src_key)
    dst = db.get(dst_key)
    if src is None:
        return 0  # before any type check, as Redis
    if type(src) is not Set or (dst is not None and type(dst) is not Set):
        db.get_typed(src_key, Set)
        db.get_typed(dst_key, Set)
    if src is dst:
        return 1 if src.contains(member) else 0
    if not src.remove(member):
        return 0
    notify_keyspace_event(client, NOTIFY_SET, b"srem", src_key, db.index)
    if not len(src):
        db.delete(src_key)
        notify_keyspace_event(client, NOTIFY_GENERIC, b"del", src_key, db.index)
    else:
        _changed(db, src_key, src)
    if dst is None:
        dst = Set.create(member, 1, LIMITS)
        db.add(dst_key, dst)
    if dst.add(member, LIMITS):
        _changed(db, dst_key, dst)
        notify_keyspace_event(client, NOTIFY_SET, b"sadd", dst_key, db.index)
    client.propagate(argv)
    return 1


# --- reads --------------------------------------------------------------------------------------


@command("sismember", 3, "readonly fast", keys=(1, 1, 1), group="set", since="1.0.0",
         summary="Determines whether a member belongs to a set.",
         key_specs=key_spec(("RO",)),
         arguments=(_KEY_ARG, {"name": "member", "type": "string"}))
def sismember(client: Client, argv: list[bytes]) -> Any:
    s = client.db.read_typed(argv[1], Set)
    if s is None:
        return 0
    if s.enc == HASHTABLE:
        return 1 if argv[2] in s.data else 0
    return 1 if s.contains(argv[2]) else 0


@run_of("sismember")
def sismember_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    """Consecutive `SISMEMBER key member` calls, whatever their keys, as a client pipelines
    membership tests: the dispatch checks made once for the run. Each call looks its key up
    (hit or miss, access data, lazy expiry, `keymiss`) and answers as it would alone; a key of
    another type ends the run before it (the single path answers WRONGTYPE)."""
    end = read_run_end(commands, start, 3)
    if end - start < 2:
        return 0
    db = client.db
    data = db.data
    answers: list[bytes] = []
    i = start
    while i < end:
        argv = commands[i]
        key = argv[1]
        found = data.get(key)
        if found is not None and type(found) is not Set:
            break
        s = db.read(key)
        if s is None:
            answers.append(b":0\r\n")
        elif s.enc == HASHTABLE:
            answers.append(b":1\r\n" if argv[2] in s.data else b":0\r\n")
        else:
            answers.append(b":1\r\n" if s.contains(argv[2]) else b":0\r\n")
        i += 1
    if answers:
        client.out.append(b"".join(answers))
    return i - start


@command("smismember", -3, "readonly fast", keys=(1, 1, 1), group="set", since="6.2.0",
         summary="Determines whether multiple members belong to a set.",
         complexity="O(N) where N is the number of elements being checked for membership",
         key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG, _MEMBERS_ARG))
def smismember(client: Client, argv: list[bytes]) -> Any:
    s = client.db.read_typed(argv[1], Set)
    if s is None:
        return [0] * (len(argv) - 2)
    return [1 if s.contains(m) else 0 for m in argv[2:]]


@command("scard", 2, "readonly fast", keys=(1, 1, 1), group="set", since="1.0.0",
         summary="Returns the number of members in a set.",
         key_specs=key_spec(("RO",)), arguments=(_KEY_ARG,))
def scard(client: Client, argv: list[bytes]) -> Any:
    s = client.db.read_typed(argv[1], Set)
    return 0 if s is None else len(s)


@command("smembers", 2, "readonly", keys=(1, 1, 1), group="set", since="1.0.0",
         summary="Returns all members of a set.",
         complexity="O(N) where N is the set cardinality.", tips=_ORDER_TIP,
         key_specs=key_spec(("RO", "ACCESS")), arguments=(_KEY_ARG,))
def smembers(client: Client, argv: list[bytes]) -> Any:
    s = client.db.read_typed(argv[1], Set)
    if s is None:
        return SetReply()
    return SetReply(s.members())


# --- SPOP / SRANDMEMBER -------------------------------------------------------------------------


def _propagate_srem(client: Client, key: bytes, members: list[bytes]) -> None:
    for i in range(0, len(members), _SREM_BATCH):
        client.propagate([b"SREM", key, *members[i:i + _SREM_BATCH]])


def _spop_count(client: Client, argv: list[bytes]) -> Any:
    count = string2ll(argv[2])
    if count is None or count < 0:
        raise _NOT_POSITIVE
    db = client.db
    key = argv[1]
    s = db.get_typed(key, Set)
    if s is None or count == 0:
        return SetReply()
    notify_keyspace_event(client, NOTIFY_SET, b"spop", key, db.index)
    if count >= len(s):
        # The whole set, as Redis replies it: through SUNION's temporary set, a hashtable
        # unless the set is an intset.
        popped = list(s.members())
        if s.enc != INTSET:
            popped = list(set(popped))
        db.delete(key)
        notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
        client.propagate([b"DEL", key])
        return SetReply(popped)
    chosen = pop_many(s, count, LIMITS)
    _changed(db, key, s)
    _propagate_srem(client, key, chosen)
    return SetReply(chosen)


@command("spop", -2, "write fast", keys=(1, 1, 1), group="set", since="1.0.0",
         summary="Returns one or more random members from a set after removing them. Deletes the "
         "set if the last member was popped.",
         complexity="Without the count argument O(1), otherwise O(N) where N is the value of the "
         "passed count.",
         tips=("nondeterministic_output",), key_specs=key_spec(("RW", "ACCESS", "DELETE")),
         history=(("3.2.0", "Added the `count` argument."),),
         arguments=(_KEY_ARG, {"name": "count", "type": "integer", "optional": True,
                               "since": "3.2.0"}))
def spop(client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 3:
        return _spop_count(client, argv)
    if len(argv) > 3:
        return SYNTAX_ERROR
    db = client.db
    key = argv[1]
    s = db.get_typed(key, Set)
    if s is None:
        return None
    member = s.pop_random()
    client.propagate([b"SREM", key, member])
    notify_keyspace_event(client, NOTIFY_SET, b"spop", key, db.index)
    if not len(s):
        db.delete(key)
        notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
    else:
        _changed(db, key, s)
    return member


def _srandmember_count(client: Client, argv: list[bytes]) -> Any:
    count = parse_int(argv[2])
    if count < -_LONG_MAX:
        raise ErrorReply(f"ERR value is out of range, value must between {-_LONG_MAX} and "
                         f"{_LONG_MAX}")
    s = client.db.read_typed(argv[1], Set)
    if s is None or count == 0:
        return []
    size = len(s)
    if count < 0 or count == 1:
        n = -count if count < 0 else 1
        if s.enc == HASHTABLE:
            return [s.random_member() for _ in range(n)]
        data = list(s.members())
        return [data[random.randrange(size)] for _ in range(n)]
    if count >= size:
        return list(s.members())
    return random_distinct(s, count)


@command("srandmember", -2, "readonly", keys=(1, 1, 1), group="set", since="1.0.0",
         summary="Get one or multiple random members from a set",
         complexity="Without the count argument O(1), otherwise O(N) where N is the absolute "
         "value of the passed count.",
         tips=("nondeterministic_output",), key_specs=key_spec(("RO", "ACCESS")),
         history=(("2.6.0", "Added the optional `count` argument."),),
         arguments=(_KEY_ARG, {"name": "count", "type": "integer", "optional": True,
                               "since": "2.6.0"}))
def srandmember(client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 3:
        return _srandmember_count(client, argv)
    if len(argv) > 3:
        return SYNTAX_ERROR
    s = client.db.read_typed(argv[1], Set)
    if s is None:
        return None
    return s.random_member()


# --- SINTER family ------------------------------------------------------------------------------


def _inter(client: Client, keys: list[bytes], dst: bytes | None, argv: list[bytes],
           card_only: bool = False, limit: int = 0) -> Any:
    db = client.db
    found = _lookup_all(db, keys)
    sets = [s for s in found if s is not None]
    if len(sets) < len(found):
        # An empty set empties the intersection.
        if dst is not None:
            if db.delete(dst):
                notify_keyspace_event(client, NOTIFY_GENERIC, b"del", dst, db.index)
                client.propagate(argv)
            return 0
        return 0 if card_only else SetReply()
    if card_only:
        return len(intersection(sets, limit))
    if dst is None:
        return SetReply(intersection(sets))
    return _store(client, dst, intersection_store(sets, LIMITS), argv, b"sinterstore")


@command("sinter", -2, "readonly", keys=(1, -1, 1), group="set", since="1.0.0",
         summary="Returns the intersect of multiple sets.",
         complexity="O(N*M) worst case where N is the cardinality of the smallest set and M is "
         "the number of sets.",
         tips=_ORDER_TIP, key_specs=key_spec(("RO", "ACCESS"), last=-1), arguments=(_KEYS_ARG,))
def sinter(client: Client, argv: list[bytes]) -> Any:
    return _inter(client, argv[1:], None, argv)


@command("sinterstore", -3, "write denyoom", keys=(1, -1, 1), group="set", since="1.0.0",
         summary="Stores the intersect of multiple sets in a key.",
         complexity="O(N*M) worst case where N is the cardinality of the smallest set and M is "
         "the number of sets.",
         key_specs=_STORE_SPECS, arguments=_STORE_ARGS)
def sinterstore(client: Client, argv: list[bytes]) -> Any:
    return _inter(client, argv[2:], argv[1], argv)


def _sintercard_keys(argv: list[bytes]) -> list[int]:
    """Key indexes of a SINTERCARD argv (sintercardGetKeys): [] when numkeys is unusable."""
    if len(argv) < 3:
        return []
    numkeys = string2ll(argv[1])
    if numkeys is None or numkeys < 1 or numkeys > len(argv) - 2:
        return []
    return list(range(2, 2 + numkeys))


@command("sintercard", -3, "readonly", group="set", since="7.0.0",
         summary="Returns the number of members of the intersect of multiple sets.",
         complexity="O(N*M) worst case where N is the cardinality of the smallest set and M is "
         "the number of sets.",
         key_finder=_sintercard_keys,
         key_specs=({"flags": ("RO", "ACCESS"), "begin_search": {"index": {"pos": 1}},
                     "find_keys": {"keynum": {"keynumidx": 0, "firstkey": 1, "step": 1}}},),
         arguments=({"name": "numkeys", "type": "integer"}, _KEYS_ARG,
                    {"token": "LIMIT", "name": "limit", "type": "integer", "optional": True}))
def sintercard(client: Client, argv: list[bytes]) -> Any:
    numkeys = string2ll(argv[1])
    if numkeys is None or numkeys < 1:
        return ErrorReply("ERR numkeys should be greater than 0")
    if numkeys > len(argv) - 2:
        return ErrorReply("ERR Number of keys can't be greater than number of args")
    limit = 0
    j = 2 + numkeys
    while j < len(argv):
        if argv[j].lower() == b"limit" and j + 1 < len(argv):
            j += 1
            value = string2ll(argv[j])
            if value is None or value < 0:
                return ErrorReply("ERR LIMIT can't be negative")
            limit = value
        else:
            return SYNTAX_ERROR
        j += 1
    return _inter(client, argv[2:2 + numkeys], None, argv, card_only=True, limit=limit)


# --- SUNION / SDIFF -----------------------------------------------------------------------------


def _union_diff(client: Client, keys: list[bytes], dst: bytes | None, argv: list[bytes],
                diff: bool) -> Any:
    result = union_or_diff(_lookup_all(client.db, keys), diff, dst is not None, LIMITS)
    if dst is None:
        return SetReply(result.members())
    return _store(client, dst, result, argv, b"sdiffstore" if diff else b"sunionstore")


@command("sunion", -2, "readonly", keys=(1, -1, 1), group="set", since="1.0.0",
         summary="Returns the union of multiple sets.",
         complexity="O(N) where N is the total number of elements in all given sets.",
         tips=_ORDER_TIP, key_specs=key_spec(("RO", "ACCESS"), last=-1), arguments=(_KEYS_ARG,))
def sunion(client: Client, argv: list[bytes]) -> Any:
    return _union_diff(client, argv[1:], None, argv, diff=False)


@command("sunionstore", -3, "write denyoom", keys=(1, -1, 1), group="set", since="1.0.0",
         summary="Stores the union of multiple sets in a key.",
         complexity="O(N) where N is the total number of elements in all given sets.",
         key_specs=_STORE_SPECS, arguments=_STORE_ARGS)
def sunionstore(client: Client, argv: list[bytes]) -> Any:
    return _union_diff(client, argv[2:], argv[1], argv, diff=False)


@command("sdiff", -2, "readonly", keys=(1, -1, 1), group="set", since="1.0.0",
         summary="Returns the difference of multiple sets.",
         complexity="O(N) where N is the total number of elements in all given sets.",
         tips=_ORDER_TIP, key_specs=key_spec(("RO", "ACCESS"), last=-1), arguments=(_KEYS_ARG,))
def sdiff(client: Client, argv: list[bytes]) -> Any:
    return _union_diff(client, argv[1:], None, argv, diff=True)


@command("sdiffstore", -3, "write denyoom", keys=(1, -1, 1), group="set", since="1.0.0",
         summary="Stores the difference of multiple sets in a key.",
         complexity="O(N) where N is the total number of elements in all given sets.",
         key_specs=_STORE_SPECS, arguments=_STORE_ARGS)
def sdiffstore(client: Client, argv: list[bytes]) -> Any:
    return _union_diff(client, argv[2:], argv[1], argv, diff=True)


# --- SSCAN --------------------------------------------------------------------------------------
#
# A compact set is returned whole with cursor 0, as Redis does. A hashtable is walked in
# server/scan_order.py's cursor order; the set keeps its members sorted by position until any
# write drops them.


def _scan_hashtable(s: Set, cursor: int, count: int) -> tuple[int, list[bytes]]:
    state = s.scan_state
    if state is None:
        state = s.scan_state = scan_order.ordered(s.data)
    positions, members = state
    return scan_order.walk(positions, members, s.data, cursor, count)


@command("sscan", -3, "readonly", keys=(1, 1, 1), group="set", since="2.8.0",
         summary="Iterates over members of a set.",
         complexity="O(1) for every call. O(N) for a complete iteration, including enough command "
         "calls for the cursor to return back to 0. N is the number of elements inside the "
         "collection.",
         tips=("nondeterministic_output",), key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG, {"name": "cursor", "type": "integer"},
                    {"token": "MATCH", "name": "pattern", "type": "pattern", "optional": True},
                    {"token": "COUNT", "name": "count", "type": "integer", "optional": True}))
def sscan(client: Client, argv: list[bytes]) -> Any:
    cursor = parse_cursor(argv[2])
    s = client.db.read_typed(argv[1], Set)
    if s is None:
        return [b"0", []]
    count = 10
    pattern: bytes | None = None
    i = 3
    while i < len(argv):
        option = argv[i].lower()
        has_value = i + 1 < len(argv)
        if option == b"count" and has_value:
            count = parse_int(argv[i + 1])
            if count < 1:
                return SYNTAX_ERROR
            i += 2
        elif option == b"match" and has_value:
            pattern = None if argv[i + 1] == b"*" else argv[i + 1]
            i += 2
        elif option == b"novalues":
            return ErrorReply("ERR NOVALUES option can only be used in HSCAN")
        else:
            return SYNTAX_ERROR
    if s.enc == HASHTABLE:
        next_cursor, found = _scan_hashtable(s, cursor, count)
    else:
        next_cursor, found = 0, list(s.members())
    if pattern is not None:
        match = compile_glob(pattern).match
        found = [m for m in found if match(m) is not None]
    return [b"%d" % next_cursor, found]
