"""Set commands against Rivulet alone: the order of compact sets (intset ascending, listpack in
insertion order as Redis 7.4 keeps it), RESP2/RESP3 reply shapes, random commands' invariants,
SSCAN. The encodings themselves are tested on the engine (tests/test_sets_engine.py)."""

from __future__ import annotations

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import call_raw, encode_command, err, plain, read_reply
from tests.serverproc import RawConnection


def members(r: redis.Redis, key: str) -> list[bytes]:
    return plain(r).execute_command("SMEMBERS", key)


@pytest.fixture
def limits(r: redis.Redis):
    yield r
    r.config_set("set-max-intset-entries", 512)
    r.config_set("set-max-listpack-entries", 128)
    r.config_set("set-max-listpack-value", 64)


# --- commands ------------------------------------------------------------------------------------


def test_sadd_srem_scard_and_key_deletion(r: redis.Redis) -> None:
    assert r.sadd("s", "a", "b", "a") == 2
    assert r.sadd("s", "a") == 0
    assert r.scard("s") == 2 and r.scard("nokey") == 0
    assert r.srem("s", "x") == 0
    assert r.srem("s", "a", "b", "c") == 2
    assert not r.exists("s")
    assert r.srem("nokey", "a") == 0


def test_wrongtype(r: redis.Redis) -> None:
    r.set("str", "v")
    r.sadd("s", 1)
    wrong = "WRONGTYPE Operation against a key holding the wrong kind of value"
    for argv in [("SADD", "str", "a"), ("SREM", "str", "a"), ("SMEMBERS", "str"),
                 ("SISMEMBER", "str", "a"), ("SMISMEMBER", "str", "a"), ("SCARD", "str"),
                 ("SPOP", "str"), ("SPOP", "str", 2), ("SRANDMEMBER", "str"),
                 ("SRANDMEMBER", "str", 2), ("SINTER", "s", "str"), ("SINTER", "nokey", "str"),
                 ("SINTERCARD", 2, "s", "str"), ("SINTERSTORE", "d", "s", "str"),
                 ("SUNION", "s", "str"), ("SDIFF", "nokey", "str"),
                 ("SUNIONSTORE", "d", "s", "str"), ("SDIFFSTORE", "d", "s", "str"),
                 ("SSCAN", "str", 0), ("SMOVE", "str", "s", 1), ("SMOVE", "s", "str", 1)]:
        assert err(r, *argv) == wrong, argv
    # SMOVE from a missing key answers 0 before looking at the destination's type.
    assert r.smove("nokey", "str", "a") == 0
    # SINTERSTORE into a key of another type replaces it.
    assert r.sinterstore("str", "s") == 1 and r.type("str") == b"set"


def test_errors(r: redis.Redis) -> None:
    r.sadd("s", 1, 2, 3)
    assert err(r, "SPOP", "s", -1) == "value is out of range, must be positive"
    assert err(r, "SPOP", "s", "x") == "value is out of range, must be positive"
    assert err(r, "SPOP", "s", 1, 2) == "syntax error"
    assert err(r, "SRANDMEMBER", "s", "x") == "value is not an integer or out of range"
    assert err(r, "SRANDMEMBER", "s", "-9223372036854775808") == (
        "value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    assert err(r, "SRANDMEMBER", "s", 1, 2) == "syntax error"
    assert err(r, "SINTERCARD", 0, "s") == "numkeys should be greater than 0"
    assert err(r, "SINTERCARD", "x", "s") == "numkeys should be greater than 0"
    assert err(r, "SINTERCARD", 2, "s") == "Number of keys can't be greater than number of args"
    assert err(r, "SINTERCARD", 1, "s", "LIMIT", -1) == "LIMIT can't be negative"
    assert err(r, "SINTERCARD", 1, "s", "LIMIT") == "syntax error"
    assert err(r, "SINTERCARD", 1, "s", "FOO", 1) == "syntax error"
    assert err(r, "SSCAN", "s", "x") == "invalid cursor"
    # Redis 7.4's string2ull refuses a negative cursor; 7.0 read -1 as 2**64-1.
    assert err(r, "SSCAN", "s", "-1") == "invalid cursor"
    assert err(r, "SSCAN", "s", 0, "COUNT", 0) == "syntax error"
    assert err(r, "SSCAN", "s", 0, "COUNT", "x") == "value is not an integer or out of range"
    # HSCAN's NOVALUES came with Redis 7.4, and with it this error; 7.0 says "syntax error".
    assert err(r, "SSCAN", "s", 0, "NOVALUES") == "NOVALUES option can only be used in HSCAN"
    assert err(r, "SSCAN", "s", 0, "TYPE", "set") == "syntax error"
    assert err(r, "SSCAN", "s", 0, "MATCH") == "syntax error"
    # A missing key answers an empty scan before the options are read.
    assert r.sscan("nokey", 0, count=0) == (0, [])


def test_smove(r: redis.Redis) -> None:
    r.sadd("a", "x", "y")
    assert r.smove("a", "b", "x") == 1
    assert r.smembers("b") == {b"x"} and r.smembers("a") == {b"y"}
    assert r.smove("a", "b", "nope") == 0
    assert r.smove("a", "a", "y") == 1 and r.smove("a", "a", "q") == 0
    assert r.smove("a", "b", "y") == 1
    assert not r.exists("a")
    r.sadd("c", "x")
    assert r.smove("c", "b", "x") == 1  # already in b: still 1
    assert r.smembers("b") == {b"x", b"y"}
    r.sadd("b", 5)
    assert r.smove("b", "i", "5") == 1
    r.sadd("i", 3)
    assert members(r, "i") == [b"3", b"5"]  # created as an intset for an integer member


def test_smismember_and_sismember(r: redis.Redis) -> None:
    r.sadd("s", "a", 1)
    assert r.smismember("s", ["a", "b", "1"]) == [1, 0, 1]
    assert r.smismember("nokey", ["a", "b"]) == [0, 0]
    assert r.sismember("nokey", "a") == 0


def test_sinter_sunion_sdiff(r: redis.Redis) -> None:
    r.sadd("a", 1, 2, 3, 4)
    r.sadd("b", 2, 3, 5)
    r.sadd("c", 3, 4)
    p = plain(r)
    assert p.execute_command("SINTER", "a", "b") == [b"2", b"3"]
    assert p.execute_command("SINTER", "a", "b", "c") == [b"3"]
    assert p.execute_command("SINTER", "a", "nokey") == []
    assert p.execute_command("SUNION", "a", "b", "nokey") == [b"1", b"2", b"3", b"4", b"5"]
    assert p.execute_command("SDIFF", "a", "b") == [b"1", b"4"]
    assert p.execute_command("SDIFF", "a", "a") == []
    assert p.execute_command("SDIFF", "nokey", "a") == []
    assert r.sintercard(2, ["a", "b"]) == 2
    assert r.sintercard(2, ["a", "b"], limit=1) == 1
    assert r.sintercard(2, ["a", "nokey"]) == 0
    assert r.sintercard(1, ["a"], limit=0) == 4
    r.set("d", "v")
    r.expire("d", 100)
    assert r.sinterstore("d", "a", "b") == 2
    assert r.ttl("d") == -1
    assert r.sinterstore("d", "a", "nokey") == 0 and not r.exists("d")
    assert r.sunionstore("d", "nokey") == 0 and not r.exists("d")


def test_sinter_order_follows_the_smallest_set(r: redis.Redis) -> None:
    r.sadd("big", "d", "c", "b", "a", "x", "y")
    r.sadd("small", "b", "d", "a")
    p = plain(r)
    assert p.execute_command("SINTER", "big", "small") == [b"b", b"d", b"a"]
    r.sadd("same", "a", "b", "c")
    r.sadd("same2", "c", "b", "a")
    # Equal sizes keep the argument order.
    assert p.execute_command("SINTER", "same", "same2") == [b"a", b"b", b"c"]
    assert p.execute_command("SINTER", "same2", "same") == [b"c", b"b", b"a"]


def test_spop_and_srandmember(r: redis.Redis) -> None:
    r.sadd("s", *range(20))
    all_members = r.smembers("s")
    got = r.spop("s")
    assert got in all_members and r.scard("s") == 19
    popped = r.spop("s", 5)
    assert len(set(popped)) == 5 and set(popped) <= all_members and r.scard("s") == 14
    rest = r.smembers("s")
    assert not rest & set(popped)
    assert r.spop("s", 0) == []
    many = r.srandmember("s", -30)
    assert len(many) == 30 and set(many) <= rest
    distinct = r.srandmember("s", 10)
    assert len(set(distinct)) == 10 and set(distinct) <= rest
    assert r.srandmember("s", 0) == []
    assert r.srandmember("s") in rest
    assert r.srandmember("nokey") is None and r.srandmember("nokey", 5) == []
    assert r.spop("nokey") is None and r.spop("nokey", 3) == []
    assert set(r.spop("s", 100)) == rest and not r.exists("s")


def test_spop_listpack_keeps_order_of_the_rest(r: redis.Redis) -> None:
    names = [f"m{i}" for i in range(30)]
    r.sadd("s", *names)
    r.spop("s", 3)
    rest = [m.decode() for m in members(r, "s")]
    assert rest == [n for n in names if n in rest]  # the remaining ones keep their order
    r.spop("s", 25)  # most of the set: the members that stay are drawn into a new listpack
    rest = [m.decode() for m in members(r, "s")]
    assert len(rest) == 2 and rest == [n for n in names if n in rest]


def test_sscan_hashtable_returns_every_member_once(r: redis.Redis) -> None:
    names = {f"member:{i}".encode() for i in range(1000)}
    r.sadd("s", *names)
    seen: list[bytes] = []
    cursor = 0
    calls = 0
    while True:
        cursor, batch = r.sscan("s", cursor, count=50)
        seen += batch
        calls += 1
        if calls == 3:
            r.sadd("s", "added-later")
            r.srem("s", "member:0")
        if cursor == 0:
            break
    assert calls > 5
    found = set(seen)
    assert len(seen) == len(found)  # nothing twice
    assert names - {b"member:0"} <= found
    cursor, batch = r.sscan("s", 0, match="member:99*", count=5000)
    assert cursor == 0 and set(batch) == {b"member:99", *{f"member:99{i}".encode() for i in range(10)}}


def test_sscan_compact_sets_return_all_at_once(r: redis.Redis) -> None:
    r.sadd("s", *range(100))
    assert r.sscan("s", 17, count=1) == (0, [str(i).encode() for i in range(100)])
    assert r.sscan("s", 0, match="9*") == (0, [b"9", *[f"9{i}".encode() for i in range(10)]])


# --- RESP3 and raw ---------------------------------------------------------------------------------


def test_resp3_set_replies(server) -> None:
    conn = RawConnection(server.port)
    try:
        call_raw(conn, "HELLO", "3")
        call_raw(conn, "FLUSHALL")
        assert call_raw(conn, "SADD", "s", "2", "1") == b":2\r\n"
        assert call_raw(conn, "SMEMBERS", "s") == b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"
        assert call_raw(conn, "SMEMBERS", "nokey") == b"~0\r\n"
        assert call_raw(conn, "SINTER", "s", "s") == b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"
        assert call_raw(conn, "SINTER", "s", "nokey") == b"~0\r\n"
        assert call_raw(conn, "SUNION", "s") == b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"
        assert call_raw(conn, "SDIFF", "s", "nokey") == b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"
        assert call_raw(conn, "SRANDMEMBER", "s", "5") == b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n"
        assert call_raw(conn, "SRANDMEMBER", "nokey", "5") == b"*0\r\n"
        assert call_raw(conn, "SRANDMEMBER", "nokey") == b"_\r\n"
        assert call_raw(conn, "SPOP", "nokey") == b"_\r\n"
        assert call_raw(conn, "SPOP", "nokey", "2") == b"~0\r\n"
        assert call_raw(conn, "SPOP", "s", "0") == b"~0\r\n"
        assert call_raw(conn, "SMISMEMBER", "s", "1", "3") == b"*2\r\n:1\r\n:0\r\n"
        assert call_raw(conn, "SSCAN", "s", "0") == b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\n1\r\n$1\r\n2\r\n"
        assert call_raw(conn, "SPOP", "s", "5") == b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"
    finally:
        conn.close()


def test_resp2_raw_replies(raw: RawConnection) -> None:
    call_raw(raw, "FLUSHALL")
    call_raw(raw, "SADD", "s", "b", "a")
    assert call_raw(raw, "SMEMBERS", "s") == b"*2\r\n$1\r\nb\r\n$1\r\na\r\n"
    assert call_raw(raw, "SMEMBERS", "nokey") == b"*0\r\n"
    assert call_raw(raw, "SPOP", "nokey") == b"$-1\r\n"
    assert call_raw(raw, "SRANDMEMBER", "nokey") == b"$-1\r\n"
    assert call_raw(raw, "SPOP", "nokey", "1") == b"*0\r\n"
    assert call_raw(raw, "SSCAN", "nokey", "0") == b"*2\r\n$1\r\n0\r\n*0\r\n"


def test_resp3_client(r3: redis.Redis) -> None:
    r3.sadd("s", "a", "b")
    assert r3.smembers("s") == {b"a", b"b"}
    assert r3.sinter("s", "s") == {b"a", b"b"}


# --- keyspace signals and configuration --------------------------------------------------------------


def test_watch_sees_set_writes_but_not_no_ops(server, r: redis.Redis) -> None:
    r.sadd("s", "a")
    other = redis.Redis(port=server.port)
    try:
        for change, aborted in [(lambda: other.sadd("s", "a"), False),
                                (lambda: other.srem("s", "zz"), False),
                                (lambda: other.sadd("s", "c"), True),
                                (lambda: other.spop("s"), True),
                                (lambda: other.smove("s", "t", "a"), True)]:
            other.delete("s")
            other.sadd("s", "a", "b")
            pipe = r.pipeline()
            pipe.watch("s")
            change()
            pipe.multi()
            pipe.scard("s")
            try:
                pipe.execute()
                assert not aborted
            except redis.WatchError:
                assert aborted
    finally:
        other.close()


def test_multi_exec(r: redis.Redis) -> None:
    pipe = r.pipeline()
    pipe.sadd("s", 1, 2, 3).spop("s", 3).exists("s").sadd("s", "x").smembers("s")
    result = pipe.execute()
    assert result[0] == 3 and sorted(result[1]) == [b"1", b"2", b"3"]
    assert result[2:] == [0, 1, {b"x"}]


def test_config_set_changes_the_limits(limits: redis.Redis) -> None:
    r = limits
    assert r.config_get("set-max-intset-entries") == {"set-max-intset-entries": "512"}
    r.config_set("set-max-intset-entries", 10)
    # More than 10 members: a listpack (insertion order) instead of an intset (ascending).
    r.sadd("s", *range(29, -1, -1))
    assert members(r, "s") == [str(i).encode() for i in range(29, -1, -1)]
    r.config_set("set-max-intset-entries", 512)
    r.sadd("t", *range(29, -1, -1))
    assert members(r, "t") == [str(i).encode() for i in range(30)]
    r.config_set("set-max-listpack-entries", 3)
    r.sadd("u", *[f"m{i}" for i in range(30)])
    assert members(r, "u") != [f"m{i}".encode() for i in range(30)]
    r.config_set("set-max-listpack-entries", 128)
    r.sadd("v", *[f"m{i}" for i in range(30)])
    assert members(r, "v") == [f"m{i}".encode() for i in range(30)]


def test_generic_key_commands_on_sets(r: redis.Redis) -> None:
    r.sadd("s", "b", "a")
    r.sadd("i", 2, 1)
    r.set("str", "v")
    assert r.type("s") == b"set" and r.type("i") == b"set"
    assert sorted(r.scan(0, _type="set", count=100)[1]) == [b"i", b"s"]
    assert r.copy("s", "t") == 1
    r.sadd("t", "c")
    assert members(r, "s") == [b"b", b"a"] and members(r, "t") == [b"b", b"a", b"c"]
    assert r.rename("i", "j") and members(r, "j") == [b"1", b"2"]
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert members(r, "s") == [b"b", b"a"] and members(r, "j") == [b"1", b"2"]
    r.expire("s", 100)
    r.sadd("s", "z")
    assert r.ttl("s") > 0  # an in-place change keeps the TTL


# --- member order against a model of Redis 7.4's compact encodings --------------------------------

_MODEL_MEMBERS = [b"1", b"2", b"10", b"-5", b"a", b"b", b"c", b"07", b"x" * 65]


def _as_int(m: bytes) -> int | None:
    try:
        v = int(m)
    except ValueError:
        return None
    return v if str(v).encode() == m else None


class _Model:
    """Redis 7.4's order of a small set: an intset ascending; a listpack in insertion order
    (an intset turning into one lists its integers first, ascending); a hashtable in no order."""

    def __init__(self, first: bytes) -> None:
        self.enc = "intset" if _as_int(first) is not None else "listpack"
        self.members: list[bytes] = []

    def add(self, m: bytes) -> None:
        if m in self.members:
            return
        if self.enc == "intset" and _as_int(m) is None:
            self.members.sort(key=int)
            self.enc = "listpack" if len(self.members) < 128 and len(m) <= 64 else "hashtable"
        elif self.enc == "listpack" and len(m) > 64:
            self.enc = "hashtable"
        self.members.append(m)
        if self.enc == "intset":
            self.members.sort(key=int)

    def expected(self) -> list[bytes]:
        return self.members if self.enc != "hashtable" else sorted(self.members)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=st.lists(st.tuples(
    st.sampled_from(["SADD", "SREM", "SMOVE"]), st.sampled_from(["k1", "k2"]),
    st.sampled_from(["k1", "k2"]),
    st.lists(st.sampled_from(_MODEL_MEMBERS), min_size=1, max_size=4)), max_size=25))
def test_compact_order_follows_the_model(r: redis.Redis, script) -> None:
    p = plain(r)
    p.flushall()
    model: dict[str, _Model] = {}
    for name, key, other, args in script:
        if name == "SADD":
            p.execute_command("SADD", key, *args)
            if key not in model:
                model[key] = _Model(args[0])
            for m in args:
                model[key].add(m)
        elif name == "SREM":
            p.execute_command("SREM", key, *args)
            if key in model:
                for m in args:
                    if m in model[key].members:
                        model[key].members.remove(m)
                if not model[key].members:
                    del model[key]
        else:
            m = args[0]
            moved = p.execute_command("SMOVE", key, other, m)
            src = model.get(key)
            assert moved == (1 if src is not None and m in src.members else 0)
            if moved and key != other:
                src.members.remove(m)
                if not src.members:
                    del model[key]
                if other not in model:
                    model[other] = _Model(m)
                model[other].add(m)
        for k in ("k1", "k2"):
            got = p.execute_command("SMEMBERS", k)
            want = model[k].expected() if k in model else []
            assert (sorted(got) if k in model and model[k].enc == "hashtable" else got) == want


# --- pipelined SADDs to one set (one lookup and change signal per run) ----------------------------


def _pipelined_sadd_replies(port: int, script: list[tuple]) -> list[bytes]:
    conn = RawConnection(port)
    try:
        call_raw(conn, "FLUSHALL")
        conn.send(b"".join(encode_command(*cmd) for cmd in script))
        return [read_reply(conn) for _ in script]
    finally:
        conn.close()


def test_pipelined_sadds_match_redis(server, real_redis) -> None:
    # Runs convert intset -> listpack -> hashtable mid-way, as one call at a time does.
    script: list[tuple] = [("SADD", "s", 1)]
    for i in range(700):
        script.append(("SADD", "s", i % 600, i % 7))
        if i == 300:
            script += [("OBJECT", "ENCODING", "s"), ("SADD", "s", "text"), ("OBJECT", "ENCODING", "s")]
        if i % 111 == 0:
            script += [("sadd", "s", "x"), ("SADD", "other", 1), ("SCARD", "s")]
    script += [("SCARD", "s"), ("OBJECT", "ENCODING", "s"), ("SISMEMBER", "s", 599),
               ("SMISMEMBER", "s", "text", "x", 600)]
    script += [("SADD", "t", f"m{i}") for i in range(200)]  # listpack -> hashtable past 128
    script += [("SCARD", "t"), ("OBJECT", "ENCODING", "t")]
    ours = _pipelined_sadd_replies(server.port, script)
    theirs = _pipelined_sadd_replies(real_redis.port, script)
    for cmd, mine, ref in zip(script, ours, theirs, strict=True):
        assert mine == ref, f"{cmd!r}: rivulet {mine!r} != redis {ref!r}"


def test_sadd_counts_one_change_per_member_added_as_redis(server, real_redis) -> None:
    script = [("SADD", "s", 1, 2, 3), ("SADD", "s", 3, 4), ("SADD", "s", 4), ("SADD", "s", 5, 6)]
    changes = []
    for port in (server.port, real_redis.port):
        r = redis.Redis(port=port)
        r.flushall()
        before = r.info("persistence")["rdb_changes_since_last_save"]
        conn = RawConnection(port)
        try:
            conn.send(b"".join(encode_command(*cmd) for cmd in script))
            assert [read_reply(conn) for _ in script] == [b":3\r\n", b":1\r\n", b":0\r\n", b":2\r\n"]
        finally:
            conn.close()
        r.sadd("s", 7, 8)
        changes.append(r.info("persistence")["rdb_changes_since_last_save"] - before)
    assert changes[0] == changes[1] == 8
