"""Sorted-set commands: ZADD and ZINCRBY, removals, counts, scores, ranks, the ZRANGE family and
ZRANGESTORE, pops and ZRANDMEMBER, ZSCAN. Set algebra is in zsets_store.py, the blocking pops in
zsets_blocking.py; the value type (zsets.ZSet) registers itself here."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from protocol.encoder import format_double
from protocol.floats import parse_c_double, parse_double
from protocol.numbers import parse_int, plain_decimal
from protocol.reply import NULL_ARRAY, ErrorReply, Raw
from server import scan_order, value_types
from server.command_table import command, run_of
from server.commands.keys import parse_cursor
from server.commands.mpop_args import mpop_keys
from server.commands.mpop_args import parse_mpop as parse_mpop_args
from server.commands.runs import announce_calls, run_end
from server.commands.zsets_meta import META
from server.glob import compile_glob
from server.notify import NOTIFY_GENERIC, NOTIFY_ZSET, notify_keyspace_event
from zsets import INF, LexBound, ZSet, parse_lex_bound

if TYPE_CHECKING:
    from server.config import Config
    from server.connection import Client
    from server.keyspace import Database

SYNTAX_ERROR = ErrorReply("ERR syntax error")
NOT_FLOAT = ErrorReply("ERR value is not a valid float")
NAN_ERROR = ErrorReply("ERR resulting score is not a number (NaN)")
RANGE_NOT_FLOAT = ErrorReply("ERR min or max is not a float")
LEX_NOT_VALID = ErrorReply("ERR min or max not valid string range item")
MUST_BE_POSITIVE = ErrorReply("ERR value is out of range, must be positive")
LONG_MAX = 2**63 - 1


def zcommand(name: str, keys: tuple[int, int, int] = (1, 1, 1),
             key_finder: Callable[[list[bytes]], list[int]] | None = None) -> Callable:
    """Register a handler with what Redis's command table says about the command."""
    meta = META[name]
    return command(name, meta["arity"], meta["flags"], keys=keys, group="sorted_set",
                   since=meta["since"], summary=meta["summary"], complexity=meta["complexity"],
                   arguments=meta["arguments"], key_specs=meta["key_specs"],
                   history=meta["history"], tips=meta["tips"],
                   doc_flags=meta.get("doc_flags", ()), key_finder=key_finder)


# --- the value type -------------------------------------------------------------------------------

_BATCH = 64  # AOF_REWRITE_ITEMS_PER_CMD


def _rewrite(key: bytes, zs: ZSet) -> Iterator[list[bytes]]:
    cmd: list[bytes] = [b"ZADD", key]
    for score, member in zs:
        cmd.append(format_double(score))
        cmd.append(member)
        if len(cmd) == 2 + 2 * _BATCH:
            yield cmd
            cmd = [b"ZADD", key]
    if len(cmd) > 2:
        yield cmd


def _encoding(zs: ZSet, _config: Config) -> bytes:
    return b"listpack" if zs.listpack else b"skiplist"


def _memory(zs: ZSet, _samples: int) -> int:
    n = len(zs)
    if zs.listpack:
        return 16 + sum(len(m) + 11 for m in zs.scores)
    return 200 + n * 64 + sum(sys.getsizeof(m) for m in zs.scores)


value_types.register(value_types.ValueType(ZSet, b"zset", _rewrite, ZSet.copy, _encoding, _memory))


# --- shared helpers -------------------------------------------------------------------------------


def get_zset(db: Database, key: bytes) -> ZSet | None:
    zs: ZSet | None = db.get_typed(key, ZSet)
    return zs


def read_zset(db: Database, key: bytes) -> ZSet | None:
    """get_zset for a read command (Redis's lookupKeyRead): a miss publishes `keymiss`."""
    zs: ZSet | None = db.read_typed(key, ZSet)
    return zs


def new_zset(client: Client, size_hint: int, value_len_hint: int) -> ZSet:
    """zsetTypeCreate: a listpack unless the expected size or first member exceeds the limits."""
    cfg = client.server.config
    return ZSet(size_hint <= cfg["zset-max-listpack-entries"]
                and value_len_hint <= cfg["zset-max-listpack-value"])


def add_new_member(client: Client, zs: ZSet, member: bytes, score: float) -> None:
    """Insert an absent member, leaving the listpack encoding where Redis would."""
    if zs.listpack:
        cfg = client.server.config
        if (len(zs) + 1 > cfg["zset-max-listpack-entries"]
                or len(member) > cfg["zset-max-listpack-value"]):
            zs.listpack = False
    zs.insert(member, score)


def shrink_to_listpack_if_fits(client: Client, zs: ZSet) -> None:
    """zsetConvertToListpackIfNeeded, for the results the STORE commands build."""
    cfg = client.server.config
    if (not zs.listpack and len(zs) <= cfg["zset-max-listpack-entries"]
            and zs.max_member_len() <= cfg["zset-max-listpack-value"]):
        zs.to_listpack()


def after_removal(client: Client, key: bytes, zs: ZSet, event: bytes) -> None:
    """A sorted set that lost members: announced as `event`, deleted when empty, as Redis does."""
    db = client.db
    notify_keyspace_event(client, NOTIFY_ZSET, event, key, db.index)
    if len(zs) == 0:
        db.delete(key)
        notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
    else:
        db.signal_modified(key)


_SCORE_TEXT: dict[float, bytes] = {}  # printed scores, reused: printing a double is costly


def score_text(score: float) -> bytes:
    text = _SCORE_TEXT.get(score)
    if text is None:
        if len(_SCORE_TEXT) >= 65536:
            _SCORE_TEXT.clear()
        text = format_double(score)
        if score != 0:  # 0.0 == -0.0: they share a key but not a text
            _SCORE_TEXT[score] = text
    return text


def pairs_reply(client: Client, items: Iterable[tuple[float, bytes]], withscores: bool) -> Any:
    """Members, or with scores: a flat array in RESP2, [member, score] pairs in RESP3; encoded
    here in one pass, each score printed once."""
    if not withscores:
        return [member for _score, member in items]
    parts: list[bytes] = []
    append = parts.append
    count = 0
    if client.resp3:
        for score, member in items:
            append(b"*2\r\n$%d\r\n%b\r\n,%b\r\n" % (len(member), member, score_text(score)))
            count += 1
        return Raw(b"*%d\r\n%b" % (count, b"".join(parts)))
    for score, member in items:
        text = score_text(score)
        append(b"$%d\r\n%b\r\n$%d\r\n%b\r\n" % (len(member), member, len(text), text))
        count += 2
    return Raw(b"*%d\r\n%b" % (count, b"".join(parts)))


def parse_score_range(lo_arg: bytes, hi_arg: bytes) -> tuple[float, bool, float, bool]:
    """zslParseRange: "(" opens an end; strtod over the rest; NaN refused."""
    lo, lo_ex = _parse_score_bound(lo_arg)
    hi, hi_ex = _parse_score_bound(hi_arg)
    return lo, lo_ex, hi, hi_ex


def _parse_score_bound(arg: bytes) -> tuple[float, bool]:
    exclusive = arg[:1] == b"("
    value = parse_c_double(arg[1:] if exclusive else arg)
    if value is None:
        raise RANGE_NOT_FLOAT
    return value, exclusive


def parse_lex_range(lo_arg: bytes, hi_arg: bytes) -> tuple[LexBound, LexBound]:
    lo = parse_lex_bound(lo_arg)
    hi = parse_lex_bound(hi_arg)
    if lo is None or hi is None:
        raise LEX_NOT_VALID
    return lo, hi


# --- ZADD / ZINCRBY ------------------------------------------------------------------------------


def _score_arg(arg: bytes) -> float:
    plain = plain_decimal(arg)
    return plain if plain is not None else parse_double(arg)


def _zadd_generic(client: Client, argv: list[bytes], incr: bool) -> Any:
    key = argv[1]
    nx = xx = gt = lt = ch = False
    i = 2
    n = len(argv)
    while i < n:
        arg = argv[i]
        # A score (digits, sign, point): no option starts so, and it needs no lower-casing.
        if not arg or arg[0] < 0x41:
            break
        opt = arg.lower()
        if opt == b"nx":
            nx = True
        elif opt == b"xx":
            xx = True
        elif opt == b"ch":
            ch = True
        elif opt == b"incr":
            incr = True
        elif opt == b"gt":
            gt = True
        elif opt == b"lt":
            lt = True
        else:
            break
        i += 1
    elements = n - i
    if elements % 2 or not elements:
        raise SYNTAX_ERROR
    elements //= 2
    if nx and xx:
        raise ErrorReply("ERR XX and NX options at the same time are not compatible")
    if (gt and nx) or (lt and nx) or (gt and lt):
        raise ErrorReply("ERR GT, LT, and/or NX options at the same time are not compatible")
    if incr and elements > 1:
        raise ErrorReply("ERR INCR option supports a single increment-element pair")
    scores = [_score_arg(argv[i + 2 * j]) for j in range(elements)]
    db = client.db
    zs = get_zset(db, key)
    added = updated = processed = 0
    score = 0.0
    created = zs is None
    if zs is None:
        if xx:
            return None if incr else 0
        zs = new_zset(client, elements, len(argv[i + 1]))
        db.add(key, zs)  # counts one change
    elif zs.listpack and elements > client.server.config["zset-max-listpack-entries"]:
        zs.listpack = False
    current = zs.scores
    try:
        for j in range(elements):
            score = scores[j]
            member = argv[i + 1 + 2 * j]
            cur = current.get(member)
            if cur is not None:
                if nx:
                    continue
                if incr:
                    score += cur
                    if score != score:
                        raise NAN_ERROR
                if (lt and score >= cur) or (gt and score <= cur):
                    continue
                processed += 1
                if score != cur:
                    zs.set_score(member, cur, score)
                    updated += 1
            elif not xx:
                add_new_member(client, zs, member, score)
                added += 1
                processed += 1
    finally:
        if added or updated:
            if not created:
                db.signal_modified(key)
            client.keyspace.dirty += added + updated - 1  # one change per member, as Redis counts
            notify_keyspace_event(client, NOTIFY_ZSET, b"zincr" if incr else b"zadd", key,
                                  db.index)
            client.propagate(argv)
    if incr:
        return score if processed else None
    return added + updated if ch else added


@zcommand("zadd")
def zadd(client: Client, argv: list[bytes]) -> Any:
    return _zadd_generic(client, argv, False)


_ADDED_REPLY = (b":0\r\n", b":1\r\n")  # what one-member calls answer, not formatted each time


@run_of("zadd")
def zadd_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    """Consecutive `ZADD key score member [score member ...]` without options to one key, as a
    client pipelines score updates: one lookup, the encoding limits read once, one change
    signal, the replies encoded together. Each call converts, adds, answers, is announced and
    logged as it would alone; another command, key or spelling, an option, an odd argument
    count or a score that does not parse ends the run (the single path answers it), and a key
    of another type leaves every call to the single path."""
    last = run_end(commands, start, 4, even_argc=True)
    # Every call's scores first: a call whose score does not parse ends the run before it, as
    # the single path fails it before changing anything.
    parsed: list[list[float]] = []
    end = start
    while end < last:
        argv = commands[end]
        scores: list[float] = []
        try:
            for j in range(2, len(argv), 2):
                scores.append(_score_arg(argv[j]))
        except ErrorReply:
            break
        parsed.append(scores)
        end += 1
    done = end - start
    if done < 2:
        return 0
    first = commands[start]
    key = first[1]
    db = client.db
    value = db.get(key)
    zs: ZSet
    created = value is None
    if value is None:
        zs = new_zset(client, len(parsed[0]), len(first[3]))
        db.add(key, zs)  # counts one change
    elif type(value) is ZSet:
        zs = value
    else:
        return 0  # WRONGTYPE, from the single path
    cfg = client.server.config
    max_entries: int = cfg["zset-max-listpack-entries"]
    max_value: int = cfg["zset-max-listpack-value"]
    current = zs.scores
    replies: list[bytes] = []
    changing: list[list[bytes]] = []  # the calls that added or moved a member
    changes = 0
    for i in range(done):
        argv = commands[start + i]
        scores = parsed[i]
        elements = len(scores)
        if zs.listpack and elements > max_entries:
            zs.listpack = False
        added = updated = 0
        for j in range(elements):
            score = scores[j]
            member = argv[3 + 2 * j]
            cur = current.get(member)
            if cur is None:
                if zs.listpack and (len(current) + 1 > max_entries or len(member) > max_value):
                    zs.listpack = False
                zs.insert(member, score)
                added += 1
            elif score != cur:
                zs.set_score(member, cur, score)
                updated += 1
        replies.append(_ADDED_REPLY[added] if added < 2 else b":%d\r\n" % added)
        if added or updated:
            changing.append(argv)
            changes += added + updated
    if changing:
        if not created:
            db.signal_modified(key)
        client.keyspace.dirty += changes - 1  # one change per member, as Redis counts
        announce_calls(client, db, key, changing, 0, len(changing), NOTIFY_ZSET, b"zadd")
    client.out.append(b"".join(replies))
    return done


@zcommand("zincrby")
def zincrby(client: Client, argv: list[bytes]) -> Any:
    return _zadd_generic(client, argv, True)


# --- ZREM and the range removals -----------------------------------------------------------------


@zcommand("zrem")
def zrem(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    zs = get_zset(client.db, key)
    if zs is None:
        return 0
    deleted = 0
    for member in argv[2:]:
        if zs.remove(member):
            deleted += 1
            if not len(zs):
                break
    if deleted:
        after_removal(client, key, zs, b"zrem")
        client.propagate(argv)
    return deleted


def _rank_bounds(start: int, end: int, length: int) -> tuple[int, int] | None:
    """Redis's index sanitising: negative from the end; None for an empty range."""
    if start < 0:
        start += length
    if end < 0:
        end += length
    if start < 0:
        start = 0
    if start > end or start >= length:
        return None
    if end >= length:
        end = length - 1
    return start, end


def _zremrange(client: Client, argv: list[bytes], kind: str) -> Any:
    key = argv[1]
    if kind == "rank":
        start = parse_int(argv[2])
        end = parse_int(argv[3])
    elif kind == "score":
        srange = parse_score_range(argv[2], argv[3])
    else:
        lrange = parse_lex_range(argv[2], argv[3])
    zs = get_zset(client.db, key)
    if zs is None:
        return 0
    if kind == "rank":
        bounds = _rank_bounds(start, end, len(zs))
        if bounds is None:
            return 0
        lo, hi = bounds[0], bounds[1] + 1
    elif kind == "score":
        lo, hi = zs.score_bounds(*srange)
    else:
        lo, hi = zs.lex_bounds(*lrange)
    deleted = zs.delete_index_range(lo, hi)
    if deleted:
        after_removal(client, key, zs, b"zremrangeby" + kind.encode())
        client.propagate(argv)
    return deleted


@zcommand("zremrangebyrank")
def zremrangebyrank(client: Client, argv: list[bytes]) -> Any:
    return _zremrange(client, argv, "rank")


@zcommand("zremrangebyscore")
def zremrangebyscore(client: Client, argv: list[bytes]) -> Any:
    return _zremrange(client, argv, "score")


@zcommand("zremrangebylex")
def zremrangebylex(client: Client, argv: list[bytes]) -> Any:
    return _zremrange(client, argv, "lex")


# --- reads ---------------------------------------------------------------------------------------


@zcommand("zcard")
def zcard(client: Client, argv: list[bytes]) -> Any:
    zs = read_zset(client.db, argv[1])
    return 0 if zs is None else len(zs)


@zcommand("zcount")
def zcount(client: Client, argv: list[bytes]) -> Any:
    srange = parse_score_range(argv[2], argv[3])
    zs = read_zset(client.db, argv[1])
    if zs is None:
        return 0
    lo, hi = zs.score_bounds(*srange)
    return hi - lo


@zcommand("zlexcount")
def zlexcount(client: Client, argv: list[bytes]) -> Any:
    lrange = parse_lex_range(argv[2], argv[3])
    zs = read_zset(client.db, argv[1])
    if zs is None:
        return 0
    lo, hi = zs.lex_bounds(*lrange)
    return hi - lo


@zcommand("zscore")
def zscore(client: Client, argv: list[bytes]) -> Any:
    zs = read_zset(client.db, argv[1])
    if zs is None:
        return None
    return zs.scores.get(argv[2])


@zcommand("zmscore")
def zmscore(client: Client, argv: list[bytes]) -> Any:
    zs = read_zset(client.db, argv[1])
    if zs is None:
        return [None] * (len(argv) - 2)
    get = zs.scores.get
    return [get(member) for member in argv[2:]]


def _zrank(client: Client, argv: list[bytes], reverse: bool) -> Any:
    if len(argv) > 4:
        name = argv[0].decode("utf-8", "replace").lower()
        raise ErrorReply(f"ERR wrong number of arguments for '{name}' command")
    withscore = False
    if len(argv) > 3:
        if argv[3].lower() != b"withscore":
            raise SYNTAX_ERROR
        withscore = True
    zs = read_zset(client.db, argv[1])
    missing = NULL_ARRAY if withscore else None
    if zs is None:
        return missing
    rank = zs.rank(argv[2])
    if rank is None:
        return missing
    if reverse:
        rank = len(zs) - 1 - rank
    if withscore:
        return [rank, zs.scores[argv[2]]]
    return rank


@zcommand("zrank")
def zrank(client: Client, argv: list[bytes]) -> Any:
    return _zrank(client, argv, False)


@zcommand("zrevrank")
def zrevrank(client: Client, argv: list[bytes]) -> Any:
    return _zrank(client, argv, True)


# --- ZRANGE and its variants ---------------------------------------------------------------------

RANK, SCORE, LEX = 1, 2, 3


def _zrange_generic(client: Client, argv: list[bytes], at: int, store: bool, rangetype: int,
                    reverse: bool | None) -> Any:
    """ZRANGE, ZRANGESTORE and the Z[REV]RANGEBY* commands: `at` is the index of the source key;
    rangetype 0 and reverse None leave BYSCORE/BYLEX and REV to the options."""
    key = argv[at]
    withscores = False
    offset, limit = 0, -1
    j = at + 3
    n = len(argv)
    while j < n:
        opt = argv[j].lower()
        left = n - j - 1
        if not store and opt == b"withscores":
            withscores = True
        elif opt == b"limit" and left >= 2:
            offset = parse_int(argv[j + 1])
            limit = parse_int(argv[j + 2])
            j += 2
        elif reverse is None and opt == b"rev":
            reverse = True
        elif rangetype == 0 and opt == b"bylex":
            rangetype = LEX
        elif rangetype == 0 and opt == b"byscore":
            rangetype = SCORE
        else:
            raise SYNTAX_ERROR
        j += 1
    reverse = bool(reverse)
    if rangetype == 0:
        rangetype = RANK
    if limit != -1 and rangetype == RANK:
        raise ErrorReply("ERR syntax error, LIMIT is only supported in combination with either "
                         "BYSCORE or BYLEX")
    if withscores and rangetype == LEX:
        raise ErrorReply("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
    min_arg, max_arg = argv[at + 1], argv[at + 2]
    if reverse and rangetype != RANK:
        min_arg, max_arg = max_arg, min_arg
    if rangetype == RANK:
        start = parse_int(min_arg)
        end = parse_int(max_arg)
    elif rangetype == SCORE:
        srange = parse_score_range(min_arg, max_arg)
    else:
        lrange = parse_lex_range(min_arg, max_arg)
    zs = read_zset(client.db, key)
    if zs is None:
        return _store_range(client, argv, None) if store else []
    n = len(zs)
    if rangetype == RANK:
        bounds = _rank_bounds(start, end, n)
        if bounds is None:
            items: Iterable[tuple[float, bytes]] = ()
        elif reverse:
            items = zs.items(n - 1 - bounds[1], n - bounds[0], reverse=True)
        else:
            items = zs.items(bounds[0], bounds[1] + 1)
    else:
        if rangetype == SCORE:
            lo, hi = zs.score_bounds(*srange)
        else:
            lo, hi = zs.lex_bounds(*lrange, reverse)
        if offset < 0 or (offset > 0 and offset >= n):
            items = ()
        elif reverse:
            stop = hi - offset
            start_ = lo if limit < 0 else max(lo, stop - limit)
            items = zs.items(start_, stop, reverse=True) if start_ < stop else ()
        else:
            first = lo + offset
            last = hi if limit < 0 else min(hi, first + limit)
            items = zs.items(first, last) if first < last else ()
    if store:
        size_hint = 0
        if rangetype == RANK and bounds is not None:
            size_hint = bounds[1] - bounds[0] + 1
        return _store_range(client, argv, items, size_hint)
    return pairs_reply(client, items, withscores)


def _store_range(client: Client, argv: list[bytes], items: Iterable[tuple[float, bytes]] | None,
                 size_hint: int = 0) -> int:
    """ZRANGESTORE's result replaces dst (of any type), or deletes it when empty."""
    db = client.db
    dst = argv[1]
    result = new_zset(client, size_hint, 0)
    if items is not None:
        for score, member in items:
            add_new_member(client, result, member, score)
    if len(result):
        db.set(dst, result)
        db.keyspace.signal_ready(db.index, dst)
        notify_keyspace_event(client, NOTIFY_ZSET, b"zrangestore", dst, db.index)
        client.propagate(argv)
        return len(result)
    if db.delete(dst):
        notify_keyspace_event(client, NOTIFY_GENERIC, b"del", dst, db.index)
        client.propagate(argv)
    return 0


@zcommand("zrange")
def zrange(client: Client, argv: list[bytes]) -> Any:
    return _zrange_generic(client, argv, 1, False, 0, None)


@zcommand("zrangestore", keys=(1, 2, 1))
def zrangestore(client: Client, argv: list[bytes]) -> Any:
    return _zrange_generic(client, argv, 2, True, 0, None)


@zcommand("zrevrange")
def zrevrange(client: Client, argv: list[bytes]) -> Any:
    return _zrange_generic(client, argv, 1, False, RANK, True)


@zcommand("zrangebyscore")
def zrangebyscore(client: Client, argv: list[bytes]) -> Any:
    return _zrange_generic(client, argv, 1, False, SCORE, False)


@zcommand("zrevrangebyscore")
def zrevrangebyscore(client: Client, argv: list[bytes]) -> Any:
    return _zrange_generic(client, argv, 1, False, SCORE, True)


@zcommand("zrangebylex")
def zrangebylex(client: Client, argv: list[bytes]) -> Any:
    return _zrange_generic(client, argv, 1, False, LEX, False)


@zcommand("zrevrangebylex")
def zrevrangebylex(client: Client, argv: list[bytes]) -> Any:
    return _zrange_generic(client, argv, 1, False, LEX, True)


# --- pops ----------------------------------------------------------------------------------------


def pop_reply(client: Client, db: Database, key: bytes, zs: ZSet, from_max: bool, count: int,
              nested: bool) -> list:
    """Pop up to count members (ZPOP*, BZPOP*, ZMPOP): [member, score] pairs when nested, a flat
    member, score, ... list otherwise. Deletes the key when emptied."""
    out: list[Any] = []
    if count and len(zs):
        notify_keyspace_event(client, NOTIFY_ZSET, b"zpopmax" if from_max else b"zpopmin", key,
                              db.index)
    for _ in range(min(count, len(zs))):
        member, score = zs.pop(from_max)
        if nested:
            out.append([member, score])
        else:
            out.append(member)
            out.append(score)
    if not len(zs):
        db.delete(key)
        notify_keyspace_event(client, NOTIFY_GENERIC, b"del", key, db.index)
    else:
        db.signal_modified(key)
    return out


def _zpop(client: Client, argv: list[bytes], from_max: bool) -> Any:
    if len(argv) > 3:
        raise SYNTAX_ERROR
    count = -1
    if len(argv) == 3:
        count = parse_int(argv[2], MUST_BE_POSITIVE)
        if count < 0:
            raise MUST_BE_POSITIVE
    nested = client.resp3 and count != -1
    db = client.db
    zs = get_zset(db, argv[1])
    if zs is None or count == 0:
        return []
    out = pop_reply(client, db, argv[1], zs, from_max, 1 if count == -1 else count, nested)
    client.propagate(argv)
    return out


@zcommand("zpopmin")
def zpopmin(client: Client, argv: list[bytes]) -> Any:
    return _zpop(client, argv, False)


@zcommand("zpopmax")
def zpopmax(client: Client, argv: list[bytes]) -> Any:
    return _zpop(client, argv, True)


def parse_mpop(argv: list[bytes], numkeys_at: int) -> tuple[list[bytes], bool, int]:
    """ZMPOP / BZMPOP arguments after the numkeys: (keys, from_max, count)."""
    return parse_mpop_args(argv, numkeys_at, b"max", b"min")


def mpop_from(client: Client, keys: list[bytes], from_max: bool, count: int) -> Any:
    """Pop from the first non-empty key: [key, [[member, score], ...]], or None when all are
    empty. Logged as ZPOPMIN/ZPOPMAX key count, as Redis propagates it."""
    db = client.db
    for key in keys:
        zs = get_zset(db, key)
        if zs is None:
            continue
        popped = min(count, len(zs))
        out = pop_reply(client, db, key, zs, from_max, count, True)
        client.propagate([b"ZPOPMAX" if from_max else b"ZPOPMIN", key, b"%d" % popped])
        return [key, out]
    return None


@zcommand("zmpop", keys=(0, 0, 0), key_finder=lambda argv: mpop_keys(argv, 1))
def zmpop(client: Client, argv: list[bytes]) -> Any:
    keys, from_max, count = parse_mpop(argv, 1)
    reply = mpop_from(client, keys, from_max, count)
    return NULL_ARRAY if reply is None else reply


# --- ZRANDMEMBER ---------------------------------------------------------------------------------


@zcommand("zrandmember")
def zrandmember(client: Client, argv: list[bytes]) -> Any:
    if len(argv) >= 3:
        count = parse_int(argv[2])
        if count < -LONG_MAX:
            raise ErrorReply(f"ERR value is out of range, value must between {-LONG_MAX} and "
                             f"{LONG_MAX}")
        withscores = False
        if len(argv) > 4 or (len(argv) == 4 and argv[3].lower() != b"withscores"):
            raise SYNTAX_ERROR
        if len(argv) == 4:
            withscores = True
            if count < -(LONG_MAX // 2) or count > LONG_MAX // 2:
                raise ErrorReply("ERR value is out of range")
        zs = read_zset(client.db, argv[1])
        if zs is None or count == 0:
            return []
        size = len(zs)
        if count < 0:
            items: list[tuple[float, bytes]] = [zs.random_member() for _ in range(-count)]
        elif count >= size:
            items = list(zs)
        else:
            picked = sorted(random.sample(range(size), count))
            items = [zs.at(i) for i in picked]
            random.shuffle(items)
        return pairs_reply(client, items, withscores)
    zs = read_zset(client.db, argv[1])
    if zs is None:
        return None
    return zs.random_member()[1]


# --- ZSCAN ---------------------------------------------------------------------------------------
#
# A listpack-encoded set is returned whole with cursor 0, as Redis does. A larger one is walked as
# the keyspace SCAN walks keys: a cursor is a position in the fixed order of member hashes, so a
# member present for the whole iteration is returned once whatever changes meanwhile. The members
# sorted by position are kept on the set until it changes.

class _ScanSnapshot:
    __slots__ = ("members", "positions")

    def __init__(self, zs: ZSet) -> None:
        self.positions, self.members = scan_order.ordered(zs.scores)


@zcommand("zscan")
def zscan(client: Client, argv: list[bytes]) -> Any:
    cursor = parse_cursor(argv[2])
    # As Redis: a missing key answers the empty scan (a wrong type WRONGTYPE) before the
    # options are read (zscanCommand, then scanGenericCommand).
    zs = read_zset(client.db, argv[1])
    if zs is None:
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
                raise SYNTAX_ERROR
            i += 2
        elif option == b"match" and has_value:
            pattern = None if argv[i + 1] == b"*" else argv[i + 1]
            i += 2
        elif option == b"novalues":
            raise ErrorReply("ERR NOVALUES option can only be used in HSCAN")
        else:
            raise SYNTAX_ERROR
    scores = zs.scores
    if zs.listpack:
        found = [member for _score, member in zs]
        next_cursor = 0
    else:
        snap = zs.scan_snapshot
        if snap is None:
            snap = zs.scan_snapshot = _ScanSnapshot(zs)
        next_cursor, found = scan_order.walk(snap.positions, snap.members, scores, cursor,
                                             count)
    if pattern is not None:
        match = compile_glob(pattern).match
        found = [m for m in found if match(m) is not None]
    # A listpack holds scores as d2string wrote them; a skiplist's are printed with %.17Lg.
    fmt = format_double if zs.listpack else _g17
    out: list[Any] = []
    for m in found:
        out.append(m)
        out.append(fmt(scores[m]))
    return [str(next_cursor).encode(), out]


def _g17(value: float) -> bytes:
    if value != value:
        return b"nan"
    if value in (INF, -INF):
        return b"inf" if value > 0 else b"-inf"
    return b"%.17g" % value


__all__ = ["INF", "ZSet", "get_zset", "new_zset", "add_new_member", "pairs_reply",
           "shrink_to_listpack_if_fits", "after_removal", "pop_reply", "mpop_from", "parse_mpop",
           "mpop_keys", "zcommand"]
