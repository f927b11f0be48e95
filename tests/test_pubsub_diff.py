"""Pub/Sub, Rivulet against a real Redis (7.0 installed): the same sequences on two connections
each, the raw bytes of every reply and push compared.

Where Redis iterates a hash table (the channels UNSUBSCRIBE without arguments walks, the
patterns a PUBLISH matches, PUBSUB CHANNELS), its order is its hash order, which no other
implementation shares: those sequences use one channel / pattern, or compare sorted.

A difference between 7.0 and 7.4 these tests step around (Rivulet follows 7.4): 7.4 sends a
push to the client whose command caused it after that command's reply (7.0: before);
tests/test_pubsub.py checks the 7.4 order.
"""

from __future__ import annotations

import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import assert_same_as_redis, encode_command, plain, read_reply, run_script
from tests.serverproc import RawConnection

PUBSUB_COMMANDS = ("subscribe", "unsubscribe", "psubscribe", "punsubscribe", "publish",
                   "ssubscribe", "sunsubscribe", "spublish", "pubsub")
PUBSUB_SUBCOMMANDS = ("channels", "numsub", "numpat", "shardchannels", "shardnumsub", "help")


_SYNC = b"@@sync@@"


def _read_until_sync(conn: RawConnection) -> list[bytes]:
    """Send a PING with a marker and read every reply up to the PING's own (excluded)."""
    conn.send(encode_command("PING", _SYNC))
    out = []
    while True:
        reply = read_reply(conn)
        if reply.endswith(b"$8\r\n" + _SYNC + b"\r\n"):
            return out
        out.append(reply)


def run_two(port: int, steps: list[tuple[int, tuple, int]], resp3: tuple[bool, bool] = (False, False)) -> list[bytes]:
    """Run (connection, command, replies to read) steps on two connections; the raw replies.

    A step with no command, (n, (), 0), reads all that connection n was sent until a PING sent
    now answers: the pushes that arrived meanwhile; (n, (), k) reads k replies, sending nothing. HELLO's reply (versions, ids) is left out."""
    conns = [RawConnection(port), RawConnection(port)]
    out: list[bytes] = []
    try:
        conns[0].send(encode_command("FLUSHALL"))
        read_reply(conns[0])
        for conn, proto in zip(conns, resp3, strict=True):
            if proto:
                conn.send(encode_command("HELLO", "3"))
                read_reply(conn)
        for who, cmd, replies in steps:
            if not cmd and not replies:
                out += [b"%d:" % who + reply for reply in _read_until_sync(conns[who])]
                continue
            if not cmd:
                out += [b"%d:" % who + read_reply(conns[who]) for _ in range(replies)]
                continue
            conns[who].send(encode_command(*cmd))
            for _ in range(replies):
                reply = read_reply(conns[who])
                if b"$6\r\nserver\r\n$5\r\nredis\r\n" in reply:
                    reply = b"(HELLO reply)"
                out.append(b"%d:" % who + reply)
        return out
    finally:
        for conn in conns:
            conn.close()


def assert_two_same(server, real_redis, steps, resp3=(False, False)) -> None:
    ours = run_two(server.port, steps, resp3)
    theirs = run_two(real_redis.port, steps, resp3)
    assert ours == theirs


def test_command_info_matches_redis(server, real_redis) -> None:
    # PUBSUB's own entry lists its subcommands in Redis's hash order: compared one by one below.
    assert_same_as_redis(server, real_redis, [("COMMAND", "INFO", name) for name in PUBSUB_COMMANDS
                                              if name != "pubsub"])
    assert_same_as_redis(server, real_redis, [("COMMAND", "INFO", f"pubsub|{sub}")
                                              for sub in PUBSUB_SUBCOMMANDS])
    assert_same_as_redis(server, real_redis, [
        ("COMMAND", "GETKEYS", "SSUBSCRIBE", "a", "b"),
        ("COMMAND", "GETKEYS", "SPUBLISH", "a", "m"),
        ("COMMAND", "GETKEYSANDFLAGS", "SUNSUBSCRIBE", "a", "b"),
        ("COMMAND", "GETKEYS", "PUBLISH", "a", "m"),
    ])


# 7.4 reworded summaries and complexities and added display_text (7.2): compared without.
_NEWER_DOC_FIELDS = (b"summary", b"complexity", b"display_text")


def _without_summaries(doc):
    if isinstance(doc, dict):
        return {k: _without_summaries(v) for k, v in doc.items() if k not in _NEWER_DOC_FIELDS}
    if isinstance(doc, list):
        out = []
        skip = False
        for i, item in enumerate(doc):
            if skip:
                skip = False
                continue
            if i % 2 == 0 and item in _NEWER_DOC_FIELDS:
                skip = True
                continue
            out.append(_without_summaries(item))
        return out
    return doc


def test_command_docs_match_redis(server, real_redis) -> None:
    # 7.4 reworded the summaries ("Listens for messages published to channels." where 7.0 says
    # "Listen for messages published to the given channels") and shows display_text: Rivulet
    # has 7.4's; the rest (arguments, group, since, complexity, subcommands) is compared.
    ours, theirs = (plain(redis.Redis(port=p)) for p in (server.port, real_redis.port))
    try:
        for name in PUBSUB_COMMANDS:
            mine = ours.execute_command("COMMAND", "DOCS", name)
            ref = theirs.execute_command("COMMAND", "DOCS", name)
            if name == "psubscribe":
                # 7.0 wraps the pattern in a block argument; 7.4's psubscribe.json does not.
                assert mine[b"psubscribe"][b"arguments"] == [
                    {b"name": b"pattern", b"type": b"pattern", b"display_text": b"pattern",
                     b"flags": [b"multiple"]}]
                del mine[b"psubscribe"][b"arguments"], ref[b"psubscribe"][b"arguments"]
            assert _without_summaries(mine) == _without_summaries(ref), name
    finally:
        ours.close()
        theirs.close()


def test_errors_and_introspection_match_redis(server, real_redis) -> None:
    assert_same_as_redis(server, real_redis, [
        ("PUBLISH", "c", "m"), ("SPUBLISH", "c", "m"), ("PUBLISH", "c"), ("SUBSCRIBE",),
        ("PSUBSCRIBE",), ("SSUBSCRIBE",), ("SPUBLISH", "c", "m", "x"),
        ("PUBSUB",), ("PUBSUB", "help", "x"), ("PUBSUB", "NUMPAT"),
        ("PUBSUB", "NUMPAT", "x"), ("PUBSUB", "CHANNELS"), ("PUBSUB", "CHANNELS", "*"),
        ("PUBSUB", "channels", "a", "b"), ("PUBSUB", "NUMSUB"), ("PUBSUB", "NUMSUB", "a", "b"),
        ("PUBSUB", "SHARDCHANNELS"), ("PUBSUB", "ShardChannels", "x", "y"),
        ("PUBSUB", "SHARDNUMSUB", "a"), ("PUBSUB", "SHARDNUMSUB"), ("PUBSUB", "nope"),
        ("UNSUBSCRIBE",), ("PUNSUBSCRIBE",), ("SUNSUBSCRIBE",),
    ])


def test_pubsub_help_is_redis_74s(server, real_redis) -> None:
    # Redis 7.4 ends every HELP with "Print this help." where 7.0 says "Prints this help.".
    ours = run_script(server.port, [("PUBSUB", "HELP")])[0]
    theirs = run_script(real_redis.port, [("PUBSUB", "HELP")])[0]
    assert ours == theirs.replace(b"+    Prints this help.", b"+    Print this help.")
    assert ours.endswith(b"+    Print this help.\r\n")


def test_unsubscribe_without_subscriptions_matches_redis(server, real_redis) -> None:
    for proto in (False, True):
        assert_two_same(server, real_redis, [
            (0, ("UNSUBSCRIBE",), 1), (0, ("PUNSUBSCRIBE",), 1), (0, ("SUNSUBSCRIBE",), 1),
            (0, ("UNSUBSCRIBE", "a", "b"), 2), (0, ("PUNSUBSCRIBE", "x"), 1),
            (0, ("SUNSUBSCRIBE", "s"), 1), (0, ("PING",), 1), (0, ("GET", "k"), 1),
        ], (proto, proto))


def test_subscribed_connection_rules_match_redis(server, real_redis) -> None:
    steps = [
        (0, ("SUBSCRIBE", "c1", "c2", "c1"), 3),
        (0, ("PING",), 1), (0, ("PING", "x"), 1), (0, ("GET", "k"), 1), (0, ("SET", "k", "v"), 1),
        (0, ("CLIENT", "ID"), 1), (0, ("HELLO",), 1), (0, ("MULTI",), 1), (0, ("ECHO", "a"), 1),
        (0, ("PUBLISH", "c1", "m"), 1), (0, ("PUBSUB", "NUMSUB", "c1"), 1),
        (0, ("NOSUCHCOMMAND",), 1), (0, ("GET",), 1), (0, ("CLIENT", "nosuch"), 1),
        (0, ("PSUBSCRIBE", "c*"), 1), (1, ("PUBLISH", "c1", "hello"), 1), (0, (), 0),
        (0, ("UNSUBSCRIBE", "c1"), 1), (0, ("UNSUBSCRIBE", "c2"), 1),
        (0, ("GET", "k"), 1), (0, ("PUNSUBSCRIBE", "c*"), 1), (0, ("GET", "k"), 1),
        (0, ("SSUBSCRIBE", "s"), 1), (0, ("GET", "k"), 1), (0, ("PING",), 1),
        (1, ("SPUBLISH", "s", "m"), 1), (0, ("SUNSUBSCRIBE",), 2), (0, ("PING",), 1),
        (0, ("SUBSCRIBE", "z"), 1), (0, ("QUIT",), 1),
    ]
    assert_two_same(server, real_redis, steps)


def test_resp3_subscribed_connection_matches_redis(server, real_redis) -> None:
    steps = [
        (0, ("SUBSCRIBE", "c1"), 1), (0, ("PSUBSCRIBE", "c*"), 1), (0, ("SSUBSCRIBE", "c1"), 1),
        (0, ("SET", "k", "v"), 1), (0, ("GET", "k"), 1), (0, ("PING",), 1), (0, ("PING", "x"), 1),
        (1, ("PUBLISH", "c1", "m1"), 1), (0, ("PING",), 3),
        (1, ("PUBLISH", "c2", "m2"), 1), (0, ("PING",), 2),
        (1, ("SPUBLISH", "c1", "m3"), 1), (0, ("PING",), 2),
        (0, ("UNSUBSCRIBE",), 1), (0, ("PUNSUBSCRIBE",), 1), (0, ("SUNSUBSCRIBE",), 1),
        (0, ("UNSUBSCRIBE",), 1), (1, ("PUBLISH", "c1", "none"), 1), (0, ("PING",), 1),
    ]
    assert_two_same(server, real_redis, steps, (True, False))


def test_mixed_protocols_and_hello_while_subscribed_match_redis(server, real_redis) -> None:
    steps = [
        (0, ("SUBSCRIBE", "c"), 1), (1, ("SUBSCRIBE", "c"), 1),
        (1, ("HELLO", "2"), 1), (0, ("HELLO", "3"), 1),
        (0, ("RESET",), 1), (0, ("SUBSCRIBE", "c"), 1), (0, ("PUBLISH", "c", "x"), 1),
        (0, ("HELLO", "3"), 1), (0, ("PING",), 1),
    ]
    assert_two_same(server, real_redis, steps, (False, True))


def test_subscribe_in_multi_matches_redis(server, real_redis) -> None:
    steps = [
        (0, ("MULTI",), 1), (0, ("SUBSCRIBE", "c"), 1), (0, ("PSUBSCRIBE", "p*"), 1),
        (0, ("SSUBSCRIBE", "s"), 1), (0, ("EXEC",), 1),
        (1, ("PUBLISH", "c", "m"), 1), (1, ("PUBLISH", "pq", "m"), 1), (0, ("PING",), 3),
        (0, ("MULTI",), 1), (0, ("UNSUBSCRIBE",), 1),
        (0, ("RESET",), 1), (0, ("MULTI",), 1), (0, ("UNSUBSCRIBE", "c"), 1),
        (0, ("PUNSUBSCRIBE",), 1), (0, ("PING",), 1), (0, ("EXEC",), 1), (0, ("PING",), 1),
    ]
    assert_two_same(server, real_redis, steps)


def test_pushes_under_client_reply_off_match_redis(server, real_redis) -> None:
    for proto in (False, True):
        assert_two_same(server, real_redis, [
            (0, ("CLIENT", "REPLY", "OFF"), 0), (0, ("SUBSCRIBE", "c", "d"), 2),
            (1, ("PUBLISH", "c", "x"), 1), (0, (), 1), (0, ("PING",), 0),
            (0, ("UNSUBSCRIBE", "d", "c"), 2), (0, ("CLIENT", "REPLY", "ON"), 1), (0, ("PING",), 1),
            (0, ("CLIENT", "REPLY", "SKIP"), 0), (0, ("SUBSCRIBE", "e"), 1),
            (1, ("PUBLISH", "e", "y"), 1), (0, (), 1), (0, ("PING",), 1),
        ], (proto, False))


def test_multi_channel_subscribe_in_exec_matches_redis(server, real_redis) -> None:
    # Redis writes every confirmation where the one EXEC element goes: the EXEC array counts one
    # element and holds several pushes. Clients see the same bytes from Rivulet.
    for proto in (False, True):
        assert_two_same(server, real_redis, [
            (0, ("MULTI",), 1), (0, ("SUBSCRIBE", "a", "b"), 1), (0, ("PSUBSCRIBE", "p"), 1),
            (0, ("EXEC",), 2), (1, ("PUBSUB", "NUMSUB", "a", "b"), 1), (0, ("UNSUBSCRIBE", "b"), 1),
        ], (proto, False))


def test_reset_and_client_list_match_redis(server, real_redis) -> None:
    steps = [
        (0, ("CLIENT", "SETNAME", "x"), 1),
        (0, ("SUBSCRIBE", "a", "b"), 2), (0, ("PSUBSCRIBE", "p1", "p2", "p3"), 3),
        (0, ("SSUBSCRIBE", "s"), 1), (1, ("PUBSUB", "NUMSUB", "a", "b", "c"), 1),
        (1, ("PUBSUB", "NUMPAT"), 1), (1, ("PUBSUB", "SHARDNUMSUB", "s"), 1),
        (0, ("RESET",), 1), (0, ("CLIENT", "GETNAME"), 1), (0, ("PING",), 1),
        (1, ("PUBSUB", "NUMSUB", "a", "b", "c"), 1), (1, ("PUBSUB", "NUMPAT"), 1),
        (1, ("PUBSUB", "SHARDCHANNELS"), 1), (1, ("PUBLISH", "a", "x"), 1),
    ]
    assert_two_same(server, real_redis, steps)


def _client_fields(port: int) -> list[str]:
    conns = [RawConnection(port), RawConnection(port)]
    try:
        for cmd in [("SUBSCRIBE", "a", "b"), ("PSUBSCRIBE", "p"), ("SSUBSCRIBE", "s1", "s2", "s3")]:
            conns[0].send(encode_command(*cmd))
            for _ in cmd[1:]:
                read_reply(conns[0])
        conns[1].send(encode_command("CLIENT", "LIST", "TYPE", "pubsub"))
        listing = read_reply(conns[1]).split(b"\r\n")[1].decode()
        wanted = ("flags", "sub", "psub", "ssub", "multi", "cmd", "resp")
        return [f for f in listing.split() if f.split("=")[0] in wanted]
    finally:
        for conn in conns:
            conn.close()


def test_client_list_fields_match_redis(server, real_redis) -> None:
    assert _client_fields(server.port) == _client_fields(real_redis.port)


channel_names = st.sampled_from([b"a", b"b", b"ab", b"news.1", b"news.2", b"", b"x\x00y"])
pattern_names = st.sampled_from([b"a*", b"*", b"news.?", b"[ab]", b"n*.[0-9]", b"\\a", b"x*"])


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.one_of(
    st.tuples(st.just("SUBSCRIBE"), channel_names),
    st.tuples(st.just("UNSUBSCRIBE"), channel_names),
    st.tuples(st.just("PSUBSCRIBE"), pattern_names),
    st.tuples(st.just("PUNSUBSCRIBE"), pattern_names),
    st.tuples(st.just("SSUBSCRIBE"), channel_names),
    st.tuples(st.just("SUNSUBSCRIBE"), channel_names),
    st.tuples(st.just("PUBLISH"), channel_names),
    st.tuples(st.just("SPUBLISH"), channel_names),
    st.tuples(st.just("NUMSUB"), channel_names),
    st.tuples(st.just("NUMPAT"), st.just(b"")),
), max_size=25), st.booleans())
def test_random_sequences_match_redis(server, real_redis, ops, resp3) -> None:
    # Connection 0 subscribes; connection 1 publishes and asks; after each publish, connection
    # 0 reads what it received. At most one pattern: several matching patterns would be
    # delivered in Redis's hash order.
    steps: list[tuple[int, tuple, int]] = []
    patterns: set[bytes] = set()
    channels: set[bytes] = set()
    for op, name in ops:
        if op == "PSUBSCRIBE":
            if patterns and name not in patterns:
                continue  # keep at most one pattern (delivery order is hash order in Redis)
            patterns.add(name)
        if op == "SUBSCRIBE":
            channels.add(name)
        if op in ("PUBLISH", "SPUBLISH"):
            steps.append((1, (op, name, "msg"), 1))
            steps.append((0, (), 0))
        elif op == "NUMSUB":
            steps.append((1, ("PUBSUB", "NUMSUB", name), 1))
        elif op == "NUMPAT":
            steps.append((1, ("PUBSUB", "NUMPAT"), 1))
        else:
            steps.append((0, (op, name), 1))
    assert run_two(server.port, steps, (resp3, False)) == run_two(real_redis.port, steps, (resp3, False))


def test_pattern_matching_cases_match_redis(server, real_redis) -> None:
    # Glob cases from Redis's pubsub.tcl and stringmatchlen's corners.
    cases = [
        (b"foo.*", [b"foo.bar", b"foo.", b"foo", b"xfoo.bar"]),
        (b"*", [b"a", b"", b"anything"]),
        (b"h?llo", [b"hello", b"hallo", b"hllo", b"heello"]),
        (b"h*llo", [b"hllo", b"heeeello", b"hello!"]),
        (b"h[ae]llo", [b"hello", b"hallo", b"hillo"]),
        (b"h[^e]llo", [b"hallo", b"hello"]),
        (b"h[a-b]llo", [b"hallo", b"hbllo", b"hcllo"]),
        (b"h[b-a]llo", [b"hallo", b"hbllo"]),
        (b"\\*", [b"*", b"a"]),
        (b"a[", [b"a[", b"a"]),
        (b"[", [b"[", b""]),
        (b"a\\", [b"a\\", b"a"]),
    ]
    for pattern, channels in cases:
        steps: list[tuple[int, tuple, int]] = [(0, ("PSUBSCRIBE", pattern), 1)]
        for channel in channels:
            steps.append((1, ("PUBLISH", channel, b"m"), 1))
            steps.append((0, (), 0))
        steps.append((1, ("PUBSUB", "NUMPAT"), 1))
        assert_two_same(server, real_redis, steps)


def test_pubsub_channels_pattern_matches_redis(server, real_redis) -> None:
    def channels(port: int) -> list[list[bytes]]:
        c0, c1 = RawConnection(port), RawConnection(port)
        try:
            names = [b"news.%d" % i for i in range(20)] + [b"sport", b"n", b"[x]"]
            c0.send(encode_command("SUBSCRIBE", *names) + encode_command("SSUBSCRIBE", *names[:5]))
            for _ in range(len(names) + 5):
                read_reply(c0)
            out = []
            for pattern in (b"*", b"news.1*", b"?", b"\\[x\\]", b"[sn]*", b"none"):
                for sub in (b"CHANNELS", b"SHARDCHANNELS"):
                    c1.send(encode_command("PUBSUB", sub, pattern))
                    raw = read_reply(c1)
                    items = raw.split(b"\r\n")
                    out.append([items[0], *sorted(items[2:-1:2])])
            return out
        finally:
            c0.close()
            c1.close()
    assert channels(server.port) == channels(real_redis.port)


def test_run_script_info_counts_match_redis(server, real_redis) -> None:
    def counts(port: int) -> list[bytes]:
        conn = RawConnection(port)
        try:
            for cmd in [("SUBSCRIBE", "a", "b"), ("PSUBSCRIBE", "p"), ("SSUBSCRIBE", "s")]:
                conn.send(encode_command(*cmd))
                for _ in cmd[1:]:
                    read_reply(conn)
            info = run_script(port, [("INFO", "stats")])[0].decode()
            clients = run_script(port, [("INFO", "clients")])[0].decode()
            return [line for line in (info + clients).split("\r\n")
                    if line.startswith(("pubsub_", "pubsubshard_"))]
        finally:
            conn.close()
    ours, theirs = counts(server.port), counts(real_redis.port)
    # INFO clients' pubsub_clients appeared in Redis 7.4; 7.0 lacks it.
    assert [x for x in ours if not x.startswith("pubsub_clients")] == theirs
    assert "pubsub_clients:1" in ours
