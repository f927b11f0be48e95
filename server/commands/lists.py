"""List commands (t_list.c): pushes, pops, LRANGE, LINDEX, LSET, LINSERT, LREM, LTRIM, LPOS,
LMOVE, RPOPLPUSH, LMPOP. The blocking variants are in lists_blocking.py and share the pops here.

Every write propagates what Redis propagates: the command as sent, except LMPOP, which goes out as
the LPOP/RPOP with a count that it amounted to. A write that changed nothing propagates nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from lists import List
from protocol.numbers import NOT_INTEGER, string2ll
from protocol.reply import NULL_ARRAY, OK, ErrorReply
from server import value_types
from server.command_table import command, key_spec, on_server_start, run_of
from server.commands.mpop_args import mpop_keys
from server.commands.mpop_args import parse_mpop as parse_mpop_args
from server.commands.runs import announce_calls, run_end
from server.keyspace import WRONGTYPE, Database
from server.notify import NOTIFY_GENERIC, NOTIFY_LIST, notify, notify_keyspace_event

if TYPE_CHECKING:
    from server.config import Config
    from server.connection import Client
    from server.server import Server

SYNTAX_ERROR = ErrorReply("ERR syntax error")
NO_SUCH_KEY = ErrorReply("ERR no such key")
INDEX_OUT_OF_RANGE = ErrorReply("ERR index out of range")
LONG_MAX = (1 << 63) - 1
_REWRITE_BATCH = 64  # AOF_REWRITE_ITEMS_PER_CMD


# --- the value type ----------------------------------------------------------------------------


def _rewrite(key: bytes, lst: List) -> Iterable[list[bytes]]:
    batch = [b"RPUSH", key]
    for x in lst:
        batch.append(x)
        if len(batch) == _REWRITE_BATCH + 2:
            yield batch
            batch = [b"RPUSH", key]
    if len(batch) > 2:
        yield batch


def _encoding(lst: List, _config: Config) -> bytes:
    return lst.encoding()


value_types.register(value_types.ValueType(
    List, b"list", _rewrite, List.copy, _encoding, lambda lst, _samples: lst.nbytes()))


# --- shared helpers ----------------------------------------------------------------------------


def range_long(arg: bytes, lo: int, hi: int, msg: str | None = None) -> int:
    """Redis's getRangeLongFromObjectOrReply: `msg` (when given) answers both a non-integer
    and a value outside lo..hi."""
    v = string2ll(arg)
    if v is None:
        raise NOT_INTEGER if msg is None else ErrorReply(msg)
    if v < lo or v > hi:
        if msg is None:
            raise ErrorReply(f"ERR value is out of range, value must between {lo} and {hi}")
        raise ErrorReply(msg)
    return v


def positive_long(arg: bytes) -> int:
    return range_long(arg, 0, LONG_MAX, "ERR value is out of range, must be positive")


def list_position(arg: bytes) -> bool:
    """LEFT -> True (head), RIGHT -> False (tail)."""
    low = arg.lower()
    if low == b"right":
        return False
    if low == b"left":
        return True
    raise SYNTAX_ERROR


def get_list(db: Database, key: bytes) -> List | None:
    return db.get_typed(key, List)


def read_list(db: Database, key: bytes) -> List | None:
    """get_list for a read command (Redis's lookupKeyRead): a miss publishes `keymiss`."""
    return db.read_typed(key, List)


class _Settings:
    """list-max-listpack-size, kept current by CONFIG SET (see _follow_fill): every push reads
    it, cheaper here than through the configuration's lookup."""

    def __init__(self) -> None:
        self.fill = -2


_SETTINGS: Final = _Settings()


@on_server_start
def _follow_fill(server: Server) -> None:
    config = server.config

    def apply(_value: object) -> None:
        _SETTINGS.fill = config["list-max-listpack-size"]

    apply(None)
    config.on_change("list-max-listpack-size", apply)


def fill_of(client: Client) -> int:
    return _SETTINGS.fill


def removed_from(client: Client, key: bytes, lst: List, event: bytes) -> None:
    """After elements left key's list: announce `event`, delete it when empty, else maybe back
    to a listpack (listElementsRemoved)."""
    db = client.db
    # The flags are tested here, on the typed keyspace: every pop (and every woken blocked pop)
    # comes here, and the generic call costs more than the test when no event is wanted.
    ks = client.keyspace
    if ks.notify_flags & NOTIFY_LIST:
        notify(ks, NOTIFY_LIST, event, key, db.index)
    if lst.length == 0:
        db.delete(key)
        if ks.notify_flags & NOTIFY_GENERIC:
            notify(ks, NOTIFY_GENERIC, b"del", key, db.index)
    else:
        lst.after_shrink(fill_of(client))
        db.signal_modified(key)


def push_one(client: Client, key: bytes, lst: List | None, x: bytes, head: bool) -> None:
    """Push x to key's list (created when lst is None), as lmoveHandlePush does."""
    db = client.db
    if lst is None:
        lst = List()
        db.add(key, lst)
    else:
        db.signal_modified(key)
    lst.before_grow(fill_of(client), len(x), 1)
    if head:
        lst.push_head(x)
    else:
        lst.push_tail(x)
    notify_keyspace_event(client, NOTIFY_LIST, b"lpush" if head else b"rpush", key, db.index)


def pop_range_with_key(client: Client, key: bytes, lst: List, head: bool, count: int) -> Any:
    """[key, elements] of up to count elements popped from one end, and its propagation as
    LPOP/RPOP key n (LMPOP, BLMPOP)."""
    n = count if count < lst.length else lst.length
    elements = lst.pop_many(n, head)
    removed_from(client, key, lst, b"lpop" if head else b"rpop")
    client.propagate([b"LPOP" if head else b"RPOP", key, b"%d" % n])
    return [key, elements]


def move(client: Client, src: bytes, dst: bytes, from_head: bool, to_head: bool,
         propagate: list[bytes]) -> Any:
    """LMOVE and its kin: the element moved, None when src is missing."""
    db = client.db
    slist = get_list(db, src)
    if slist is None:
        return None
    dlist = get_list(db, dst)
    x = slist.pop_head() if from_head else slist.pop_tail()
    push_one(client, dst, dlist, x, to_head)
    removed_from(client, src, slist, b"lpop" if from_head else b"rpop")
    client.propagate(propagate)
    return x


def parse_mpop(argv: list[bytes], numkeys_at: int) -> tuple[list[bytes], bool, int]:
    """(keys, from head, count) of LMPOP / BLMPOP."""
    return parse_mpop_args(argv, numkeys_at, b"left", b"right")


def mpop(client: Client, keys: list[bytes], head: bool, count: int) -> Any:
    """Pop from the first non-empty list among keys: [key, elements], None when all are empty."""
    db = client.db
    for key in keys:
        lst = get_list(db, key)
        if lst is not None and lst.length:
            return pop_range_with_key(client, key, lst, head, count)
    return None


_KEY = {"name": "key", "type": "key", "key_spec_index": 0}
_KEYS = {"name": "key", "type": "key", "key_spec_index": 0, "multiple": True}
_ELEMENTS = {"name": "element", "type": "string", "multiple": True}
_WHERE = ({"name": "left", "type": "pure-token", "token": "LEFT"},
          {"name": "right", "type": "pure-token", "token": "RIGHT"})
WHEREFROM = {"name": "wherefrom", "type": "oneof", "arguments": _WHERE}
WHERETO = {"name": "whereto", "type": "oneof", "arguments": _WHERE}
WHERE = {"name": "where", "type": "oneof", "arguments": _WHERE}
MOVE_KEY_SPECS = (key_spec(("RW", "ACCESS", "DELETE"))
                  + key_spec(("RW", "INSERT"), pos=2))
SRC_DST = ({"name": "source", "type": "key", "key_spec_index": 0},
           {"name": "destination", "type": "key", "key_spec_index": 1})
MPOP_COMPLEXITY = ("O(N+M) where N is the number of provided keys and M is the number of "
                   "elements returned.")
_PUSH_COMPLEXITY = ("O(1) for each element added, so O(N) to add N elements when the command is "
                    "called with multiple arguments.")
_INSERT_SPEC = key_spec(("RW", "INSERT"))
_POP_SPEC = key_spec(("RW", "ACCESS", "DELETE"))
_RO_SPEC = key_spec(("RO", "ACCESS"))


# --- pushes ------------------------------------------------------------------------------------


def _push(client: Client, argv: list[bytes], head: bool, xx: bool) -> Any:
    db = client.db
    key = argv[1]
    lst = db.get(key)
    if lst is None:
        if xx:
            return 0
        lst = List()
        db.add(key, lst)
    elif type(lst) is not List:
        raise WRONGTYPE
    else:
        db.signal_modified(key)
    argc = len(argv)
    if argc == 3:
        x = argv[2]
        lst.before_grow(_SETTINGS.fill, len(x), 1)
        if head:
            lst.push_head(x)
        else:
            lst.push_tail(x)
    else:
        add = 0
        for j in range(2, argc):
            add += len(argv[j])
        lst.before_grow(_SETTINGS.fill, add, argc - 2)
        for j in range(2, argc):
            if head:
                lst.push_head(argv[j])
            else:
                lst.push_tail(argv[j])
    ks = client.keyspace
    if ks.notify_flags & NOTIFY_LIST:  # tested here, as in removed_from
        notify(ks, NOTIFY_LIST, b"lpush" if head else b"rpush", key, db.index)
    client.propagate(argv)
    return lst.length


@command("lpush", -3, "write denyoom fast", keys=(1, 1, 1), group="list", since="1.0.0",
         summary="Prepends one or more elements to a list. Creates the key if it doesn't exist.",
         complexity=_PUSH_COMPLEXITY, key_specs=_INSERT_SPEC, arguments=(_KEY, _ELEMENTS),
         history=(("2.4.0", "Accepts multiple `element` arguments."),))
def lpush(client: Client, argv: list[bytes]) -> Any:
    return _push(client, argv, True, False)


@command("rpush", -3, "write denyoom fast", keys=(1, 1, 1), group="list", since="1.0.0",
         summary="Appends one or more elements to a list. Creates the key if it doesn't exist.",
         complexity=_PUSH_COMPLEXITY, key_specs=_INSERT_SPEC, arguments=(_KEY, _ELEMENTS),
         history=(("2.4.0", "Accepts multiple `element` arguments."),))
def rpush(client: Client, argv: list[bytes]) -> Any:
    return _push(client, argv, False, False)


@command("lpushx", -3, "write denyoom fast", keys=(1, 1, 1), group="list", since="2.2.0",
         summary="Prepends one or more elements to a list only when the list exists.",
         complexity=_PUSH_COMPLEXITY, key_specs=_INSERT_SPEC, arguments=(_KEY, _ELEMENTS),
         history=(("4.0.0", "Accepts multiple `element` arguments."),))
def lpushx(client: Client, argv: list[bytes]) -> Any:
    return _push(client, argv, True, True)


@command("rpushx", -3, "write denyoom fast", keys=(1, 1, 1), group="list", since="2.2.0",
         summary="Appends an element to a list only when the list exists.",
         complexity=_PUSH_COMPLEXITY, key_specs=_INSERT_SPEC, arguments=(_KEY, _ELEMENTS),
         history=(("4.0.0", "Accepts multiple `element` arguments."),))
def rpushx(client: Client, argv: list[bytes]) -> Any:
    return _push(client, argv, False, True)


def _push_run(client: Client, commands: list[list[bytes]], start: int, head: bool) -> int:
    """Consecutive `LPUSH key element...` (or RPUSH) to one key, as a producer pipelines them:
    one lookup and one change signal, the replies encoded together. Each call converts, pushes,
    answers and is logged as it would be alone; another command, key or spelling ends the run,
    and a key of another type leaves every call to the single path."""
    end = run_end(commands, start, 3)
    done = end - start
    if done < 2:
        return 0
    key = commands[start][1]
    db = client.db
    lst = db.get(key)
    created = lst is None
    if lst is None:
        lst = List()
    elif type(lst) is not List:
        return 0
    fill = _SETTINGS.fill
    # The replies are the lengths after each call, joined into their RESP at the end: one str
    # per call costs about half of formatting each reply on its own.
    lengths: list[str] = []
    for i in range(start, end):
        argv = commands[i]
        argc = len(argv)
        if argc == 3 and lst.quicklist:
            # One element to a list past the listpack encoding: nothing to convert.
            if head:
                lst.push_head(argv[2])
            else:
                lst.push_tail(argv[2])
            lengths.append(str(lst.length))
            continue
        add = 0
        for j in range(2, argc):
            add += len(argv[j])
        lst.before_grow(fill, add, argc - 2)
        for j in range(2, argc):
            if head:
                lst.push_head(argv[j])
            else:
                lst.push_tail(argv[j])
        lengths.append(str(lst.length))
    if created:
        db.add(key, lst)
    else:
        db.signal_modified(key)
    client.keyspace.dirty += done - 1  # one change per call, as one by one
    announce_calls(client, db, key, commands, start, end, NOTIFY_LIST,
                   b"lpush" if head else b"rpush")
    client.out.append((":" + "\r\n:".join(lengths) + "\r\n").encode())
    return done


@run_of("lpush")
def lpush_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    return _push_run(client, commands, start, True)


@run_of("rpush")
def rpush_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    return _push_run(client, commands, start, False)


# --- pops --------------------------------------------------------------------------------------


def _pop(client: Client, argv: list[bytes], head: bool) -> Any:
    argc = len(argv)
    if argc > 3:
        raise ErrorReply(f"ERR wrong number of arguments for '{'lpop' if head else 'rpop'}' "
                         "command")
    key = argv[1]
    count = 0
    if argc == 3:
        count = positive_long(argv[2])
    db = client.db
    lst = db.get(key)
    if lst is None:
        return NULL_ARRAY if argc == 3 else None
    if type(lst) is not List:
        raise WRONGTYPE
    if argc == 3:
        if count == 0:
            return []
        elements = lst.pop_many(count, head)
        reply: Any = elements
    else:
        reply = lst.pop_head() if head else lst.pop_tail()
    removed_from(client, key, lst, b"lpop" if head else b"rpop")
    client.propagate(argv)
    return reply


def _pop_run(client: Client, commands: list[list[bytes]], start: int, head: bool) -> int:
    """Consecutive `LPOP key` (or RPOP, without a count) to one key, as a consumer pipelines
    them, while the list has elements for each: one lookup, one conversion check and one change
    signal at the end (a list that shrinks only ever converts towards a listpack, so checking
    once at the end gives what checking after each pop gives). Calls past the last element
    are left to the single path."""
    end = run_end(commands, start, 2, 2)
    if end - start < 2:
        return 0
    key = commands[start][1]
    db = client.db
    lst = db.get(key)
    if lst is None or type(lst) is not List:
        return 0
    end = min(end, start + lst.length)
    done = end - start
    if done < 2:
        return 0
    parts: list[bytes] = []
    for _ in range(done):
        x = lst.pop_head() if head else lst.pop_tail()
        parts.append(b"$%d\r\n" % len(x))
        parts.append(x)
        parts.append(b"\r\n")
    announce_calls(client, db, key, commands, start, end, NOTIFY_LIST,
                   b"lpop" if head else b"rpop")
    ks = client.keyspace
    if lst.length == 0:
        db.delete(key)
        if ks.notify_flags & NOTIFY_GENERIC:
            notify(ks, NOTIFY_GENERIC, b"del", key, db.index)
    else:
        lst.after_shrink(_SETTINGS.fill)
        db.signal_modified(key)
    ks.dirty += done - 1
    client.out.append(b"".join(parts))
    return done


_POP_ARGS = (_KEY, {"name": "count", "type": "integer", "optional": True, "since": "6.2.0"})


@command("lpop", -2, "write fast", keys=(1, 1, 1), group="list", since="1.0.0",
         summary="Returns the first elements in a list after removing it. Deletes the list if "
         "the last element was popped.",
         complexity="O(N) where N is the number of elements returned", key_specs=_POP_SPEC,
         arguments=_POP_ARGS, history=(("6.2.0", "Added the `count` argument."),))
def lpop(client: Client, argv: list[bytes]) -> Any:
    return _pop(client, argv, True)


@command("rpop", -2, "write fast", keys=(1, 1, 1), group="list", since="1.0.0",
         summary="Returns and removes the last elements of a list. Deletes the list if the last "
         "element was popped.",
         complexity="O(N) where N is the number of elements returned", key_specs=_POP_SPEC,
         arguments=_POP_ARGS, history=(("6.2.0", "Added the `count` argument."),))
def rpop(client: Client, argv: list[bytes]) -> Any:
    return _pop(client, argv, False)


@run_of("lpop")
def lpop_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    return _pop_run(client, commands, start, True)


@run_of("rpop")
def rpop_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    return _pop_run(client, commands, start, False)


@command("lmpop", -4, "write", group="list", since="7.0.0",
         summary="Returns multiple elements from a list after removing them. Deletes the list if "
         "the last element was popped.",
         complexity=MPOP_COMPLEXITY, key_finder=lambda argv: mpop_keys(argv, 1),
         key_specs=({"flags": ("RW", "ACCESS", "DELETE"), "begin_search": {"index": {"pos": 1}},
                     "find_keys": {"keynum": {"keynumidx": 0, "firstkey": 1, "step": 1}}},),
         arguments=({"name": "numkeys", "type": "integer"}, _KEYS, WHERE,
                    {"token": "COUNT", "name": "count", "type": "integer", "optional": True}))
def lmpop(client: Client, argv: list[bytes]) -> Any:
    keys, head, count = parse_mpop(argv, 1)
    reply = mpop(client, keys, head, count)
    return NULL_ARRAY if reply is None else reply


# --- reads -------------------------------------------------------------------------------------


@command("llen", 2, "readonly fast", keys=(1, 1, 1), group="list", since="1.0.0",
         summary="Returns the length of a list.", key_specs=key_spec(("RO",)),
         arguments=(_KEY,))
def llen(client: Client, argv: list[bytes]) -> Any:
    lst = read_list(client.db, argv[1])
    return 0 if lst is None else lst.length


def normalize_range(start: int, end: int, length: int) -> tuple[int, int]:
    """(first index, count) of LRANGE start end over a list of length; count 0 when empty."""
    if start < 0:
        start += length
    if end < 0:
        end += length
    if start < 0:
        start = 0
    if start > end or start >= length:
        return 0, 0
    if end >= length:
        end = length - 1
    return start, end - start + 1


@command("lrange", 4, "readonly", keys=(1, 1, 1), group="list", since="1.0.0",
         summary="Returns a range of elements from a list.",
         complexity="O(S+N) where S is the distance of start offset from HEAD for small lists, "
         "from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in "
         "the specified range.", key_specs=_RO_SPEC,
         arguments=(_KEY, {"name": "start", "type": "integer"},
                    {"name": "stop", "type": "integer"}))
def lrange(client: Client, argv: list[bytes]) -> Any:
    start = string2ll(argv[2])
    end = string2ll(argv[3])
    if start is None or end is None:
        raise NOT_INTEGER
    lst = read_list(client.db, argv[1])
    if lst is None:
        return []
    first, count = normalize_range(start, end, lst.length)
    return lst.range(first, count)


@command("lindex", 3, "readonly", keys=(1, 1, 1), group="list", since="1.0.0",
         summary="Returns an element from a list by its index.",
         complexity="O(N) where N is the number of elements to traverse to get to the element at "
         "index. This makes asking for the first or the last element of the list O(1).",
         key_specs=_RO_SPEC, arguments=(_KEY, {"name": "index", "type": "integer"}))
def lindex(client: Client, argv: list[bytes]) -> Any:
    lst = read_list(client.db, argv[1])
    if lst is None:
        return None
    index = string2ll(argv[2])
    if index is None:
        raise NOT_INTEGER
    return lst.get(index)


_RANK_ZERO = ErrorReply("ERR RANK can't be zero: use 1 to start from the first match, 2 from the "
                        "second ... or use negative to start from the end of the list")


@command("lpos", -3, "readonly", keys=(1, 1, 1), group="list", since="6.0.6",
         summary="Returns the index of matching elements in a list.",
         complexity="O(N) where N is the number of elements in the list, for the average case. "
         "When searching for elements near the head or the tail of the list, or when the MAXLEN "
         "option is provided, the command may run in constant time.", key_specs=_RO_SPEC,
         arguments=(_KEY, {"name": "element", "type": "string"},
                    {"token": "RANK", "name": "rank", "type": "integer", "optional": True},
                    {"token": "COUNT", "name": "num-matches", "type": "integer",
                     "optional": True},
                    {"token": "MAXLEN", "name": "len", "type": "integer", "optional": True}))
def lpos(client: Client, argv: list[bytes]) -> Any:
    rank = 1
    count = -1
    maxlen = 0
    argc = len(argv)
    j = 3
    while j < argc:
        opt = argv[j].lower()
        more = j + 1 < argc
        if opt == b"rank" and more:
            rank = range_long(argv[j + 1], -LONG_MAX, LONG_MAX)
            if rank == 0:
                raise _RANK_ZERO
        elif opt == b"count" and more:
            count = range_long(argv[j + 1], 0, LONG_MAX, "ERR COUNT can't be negative")
        elif opt == b"maxlen" and more:
            maxlen = range_long(argv[j + 1], 0, LONG_MAX, "ERR MAXLEN can't be negative")
        else:
            raise SYNTAX_ERROR
        j += 2
    lst = read_list(client.db, argv[1])
    if lst is None:
        return [] if count != -1 else None
    found = lst.positions(argv[2], rank, 1 if count == -1 else count, maxlen)
    if count != -1:
        return found
    return found[0] if found else None


# --- changes inside ----------------------------------------------------------------------------


@command("lset", 4, "write denyoom", keys=(1, 1, 1), group="list", since="1.0.0",
         summary="Sets the value of an element in a list by its index.",
         complexity="O(N) where N is the length of the list. Setting either the first or the "
         "last element of the list is O(1).", key_specs=key_spec(("RW", "UPDATE")),
         arguments=(_KEY, {"name": "index", "type": "integer"},
                    {"name": "element", "type": "string"}))
def lset(client: Client, argv: list[bytes]) -> Any:
    db = client.db
    lst = get_list(db, argv[1])
    if lst is None:
        raise NO_SUCH_KEY
    index = string2ll(argv[2])
    if index is None:
        raise NOT_INTEGER
    x = argv[3]
    fill = fill_of(client)
    lst.before_grow(fill, len(x), 1)
    if not lst.set(index, x):
        raise INDEX_OUT_OF_RANGE
    lst.after_shrink(fill)
    db.signal_modified(argv[1])
    notify_keyspace_event(client, NOTIFY_LIST, b"lset", argv[1], db.index)
    client.propagate(argv)
    return OK


@command("linsert", 5, "write denyoom", keys=(1, 1, 1), group="list", since="2.2.0",
         summary="Inserts an element before or after another element in a list.",
         complexity="O(N) where N is the number of elements to traverse before seeing the value "
         "pivot. This means that inserting somewhere on the left end on the list (head) can be "
         "considered O(1) and inserting somewhere on the right end (tail) is O(N).",
         key_specs=_INSERT_SPEC,
         arguments=(_KEY, {"name": "where", "type": "oneof", "arguments": (
             {"name": "before", "type": "pure-token", "token": "BEFORE"},
             {"name": "after", "type": "pure-token", "token": "AFTER"})},
             {"name": "pivot", "type": "string"}, {"name": "element", "type": "string"}))
def linsert(client: Client, argv: list[bytes]) -> Any:
    where = argv[2].lower()
    if where == b"after":
        after = True
    elif where == b"before":
        after = False
    else:
        raise SYNTAX_ERROR
    db = client.db
    lst = get_list(db, argv[1])
    if lst is None:
        return 0
    x = argv[4]
    # Converted before the pivot is looked for, found or not, as Redis does.
    lst.before_grow(fill_of(client), len(x), 1)
    if not lst.insert(argv[3], x, after):
        return -1
    db.signal_modified(argv[1])
    notify_keyspace_event(client, NOTIFY_LIST, b"linsert", argv[1], db.index)
    client.propagate(argv)
    return lst.length


@command("lrem", 4, "write", keys=(1, 1, 1), group="list", since="1.0.0",
         summary="Removes elements from a list. Deletes the list if the last element was removed.",
         complexity="O(N+M) where N is the length of the list and M is the number of elements "
         "removed.", key_specs=key_spec(("RW", "DELETE")),
         arguments=(_KEY, {"name": "count", "type": "integer"},
                    {"name": "element", "type": "string"}))
def lrem(client: Client, argv: list[bytes]) -> Any:
    count = range_long(argv[2], -LONG_MAX, LONG_MAX)
    key = argv[1]
    lst = get_list(client.db, key)
    if lst is None:
        return 0
    removed = lst.remove(count, argv[3])
    if removed:
        removed_from(client, key, lst, b"lrem")
        client.propagate(argv)
    return removed


@command("ltrim", 4, "write", keys=(1, 1, 1), group="list", since="1.0.0",
         summary="Removes elements from both ends a list. Deletes the list if all elements were "
         "trimmed.",
         complexity="O(N) where N is the number of elements to be removed by the operation.",
         key_specs=key_spec(("RW", "DELETE")),
         arguments=(_KEY, {"name": "start", "type": "integer"},
                    {"name": "stop", "type": "integer"}))
def ltrim(client: Client, argv: list[bytes]) -> Any:
    start = string2ll(argv[2])
    end = string2ll(argv[3])
    if start is None or end is None:
        raise NOT_INTEGER
    key = argv[1]
    db = client.db
    lst = get_list(db, key)
    if lst is None:
        return OK
    length = lst.length
    first, count = normalize_range(start, end, length)
    if count == 0:
        ltrim_n, rtrim_n = length, 0
    else:
        ltrim_n, rtrim_n = first, length - first - count
    lst.trim(ltrim_n, rtrim_n)
    notify_keyspace_event(client, NOTIFY_LIST, b"ltrim", key, db.index)
    if lst.length == 0:
        db.delete(key)
        notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
    else:
        lst.after_shrink(fill_of(client))
        db.signal_modified(key)
    if ltrim_n + rtrim_n:
        client.propagate(argv)
    return OK


# --- moves -------------------------------------------------------------------------------------


@command("lmove", 5, "write denyoom", keys=(1, 2, 1), group="list", since="6.2.0",
         summary="Returns an element after popping it from one list and pushing it to another. "
         "Deletes the list if the last element was moved.",
         key_specs=MOVE_KEY_SPECS, arguments=(*SRC_DST, WHEREFROM, WHERETO))
def lmove(client: Client, argv: list[bytes]) -> Any:
    from_head = list_position(argv[3])
    to_head = list_position(argv[4])
    return move(client, argv[1], argv[2], from_head, to_head, argv)


@command("rpoplpush", 3, "write denyoom", keys=(1, 2, 1), group="list", since="1.2.0",
         summary="Returns the last element of a list after removing and pushing it to another "
         "list. Deletes the list if the last element was popped.",
         key_specs=MOVE_KEY_SPECS, arguments=SRC_DST, doc_flags=("deprecated",))
def rpoplpush(client: Client, argv: list[bytes]) -> Any:
    return move(client, argv[1], argv[2], False, True, argv)
