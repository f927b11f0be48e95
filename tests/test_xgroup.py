"""XGROUP CREATE / SETID / DESTROY / CREATECONSUMER / DELCONSUMER / HELP, and XACK."""

from __future__ import annotations

import redis

from tests.helpers import add_entries, as_map, err, run_plain

KEY_REQUIRED = ("The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
                "to use the MKSTREAM option to create an empty stream automatically.")


def groups(r: redis.Redis, key: str = "s") -> dict:
    return {g[b"name"]: g for g in map(as_map, r.execute_command("XINFO", "GROUPS", key))}


# --- CREATE -----------------------------------------------------------------------------------


def test_create_ids_and_busygroup(raw_rc):
    add_entries(raw_rc)
    assert raw_rc.execute_command("XGROUP", "CREATE", "s", "last", "$") == b"OK"
    assert raw_rc.execute_command("XGROUP", "CREATE", "s", "zero", "0") == b"OK"
    assert raw_rc.execute_command("XGROUP", "CREATE", "s", "mid", "1-2") == b"OK"
    assert raw_rc.execute_command("XGROUP", "CREATE", "s", "ms", "1") == b"OK"  # 1 means 1-0
    g = groups(raw_rc)
    assert [g[n][b"last-delivered-id"] for n in (b"last", b"zero", b"mid", b"ms")] == \
        [b"1-4", b"0-0", b"1-2", b"1-0"]
    assert list(g) == [b"last", b"mid", b"ms", b"zero"]  # name order
    assert err(raw_rc, "XGROUP", "CREATE", "s", "zero", "$") == "BUSYGROUP Consumer Group name already exists"
    assert err(raw_rc, "XGROUP", "CREATE", "s", "x", "-") == "Invalid stream ID specified as stream command argument"
    assert err(raw_rc, "XGROUP", "CREATE", "s", "x", "+") == "Invalid stream ID specified as stream command argument"


def test_create_with_entriesread(raw_rc):
    # stream-cgroups.tcl "XGROUP CREATE: with ENTRIESREAD parameter"
    add_entries(raw_rc)
    assert err(raw_rc, "XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD", "-3") == \
        "value for ENTRIESREAD must be positive or -1"
    assert err(raw_rc, "XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD", "x") == \
        "value is not an integer or out of range"
    raw_rc.execute_command("XGROUP", "CREATE", "s", "mygroup1", "$", "ENTRIESREAD", "0")
    raw_rc.execute_command("XGROUP", "CREATE", "s", "mygroup2", "$", "ENTRIESREAD", "3")
    raw_rc.execute_command("XGROUP", "CREATE", "s", "unknown", "$", "ENTRIESREAD", "-1")
    g = groups(raw_rc)
    assert g[b"mygroup1"][b"entries-read"] == 0
    assert g[b"mygroup1"][b"lag"] == 4
    assert g[b"mygroup2"][b"entries-read"] == 3
    assert g[b"mygroup2"][b"lag"] == 1
    assert g[b"unknown"][b"entries-read"] is None
    assert g[b"unknown"][b"lag"] == 0  # at the last ID the counter is known


def test_create_requires_key_unless_mkstream(raw_r):
    assert err(raw_r, "XGROUP", "CREATE", "s", "g", "$") == KEY_REQUIRED
    assert raw_r.exists("s") == 0
    # the ID is checked before MKSTREAM creates anything
    assert err(raw_r, "XGROUP", "CREATE", "s", "g", "bad", "MKSTREAM") == \
        "Invalid stream ID specified as stream command argument"
    assert raw_r.exists("s") == 0
    assert raw_r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") == b"OK"
    assert raw_r.type("s") == b"stream"
    assert raw_r.execute_command("XLEN", "s") == 0
    g = groups(raw_r)[b"g"]
    assert g[b"last-delivered-id"] == b"0-0" and g[b"lag"] == 0
    # MKSTREAM on an existing key does not reset it
    assert err(raw_r, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") == "BUSYGROUP Consumer Group name already exists"
    raw_r.execute_command("XGROUP", "CREATE", "s", "g2", "5-5", "MKSTREAM", "ENTRIESREAD", "2")
    # Redis 8 lowers an ENTRIESREAD beyond entries-added (0 here) to it
    assert groups(raw_r)[b"g2"][b"entries-read"] == 0


def test_create_option_errors(raw_r):
    add_entries(raw_r)
    assert err(raw_r, "XGROUP", "CREATE", "s", "g", "$", "FOO") == \
        "unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP."
    assert err(raw_r, "XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD") == \
        "unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP."
    # options parse before the key is looked up
    assert err(raw_r, "XGROUP", "CREATE", "nokey", "g", "$", "FOO").startswith("unknown subcommand")
    assert err(raw_r, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM", "MKSTREAM", "MKSTREAM", "MKSTREAM") == \
        "unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP."
    assert err(raw_r, "XGROUP", "CREATE", "s", "g") == "wrong number of arguments for 'xgroup|create' command"
    raw_r.set("str", "v")
    assert err(raw_r, "XGROUP", "CREATE", "str", "g", "$", "MKSTREAM") == \
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    assert raw_r.execute_command("XGROUP", "create", "s", "g", "$", "mkstream", "entriesread", "1") == b"OK"


# --- SETID ------------------------------------------------------------------------------------


def test_setid(raw_rc):
    add_entries(raw_rc)
    raw_rc.execute_command("XGROUP", "CREATE", "s", "g", "0", "ENTRIESREAD", "0")
    assert raw_rc.execute_command("XGROUP", "SETID", "s", "g", "$") == b"OK"
    g = groups(raw_rc)[b"g"]
    assert g[b"last-delivered-id"] == b"1-4"
    assert g[b"entries-read"] is None  # omitting ENTRIESREAD forgets the counter, as in 7.4
    assert g[b"lag"] == 0
    raw_rc.execute_command("XGROUP", "SETID", "s", "g", "1-2", "ENTRIESREAD", "2")
    g = groups(raw_rc)[b"g"]
    assert (g[b"last-delivered-id"], g[b"entries-read"], g[b"lag"]) == (b"1-2", 2, 2)
    raw_rc.execute_command("XGROUP", "SETID", "s", "g", "-")  # SETID accepts - and +
    assert groups(raw_rc)[b"g"][b"last-delivered-id"] == b"0-0"
    raw_rc.execute_command("XGROUP", "SETID", "s", "g", "+")
    assert groups(raw_rc)[b"g"][b"last-delivered-id"] == b"18446744073709551615-18446744073709551615"


def test_setid_errors(raw_r):
    add_entries(raw_r)
    raw_r.execute_command("XGROUP", "CREATE", "s", "g", "0")
    assert err(raw_r, "XGROUP", "SETID", "s", "nog", "0") == "NOGROUP No such consumer group 'nog' for key name 's'"
    assert err(raw_r, "XGROUP", "SETID", "nokey", "g", "0") == KEY_REQUIRED
    assert err(raw_r, "XGROUP", "SETID", "s", "g", "0", "MKSTREAM") == \
        "unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP."
    assert err(raw_r, "XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "-2") == \
        "value for ENTRIESREAD must be positive or -1"
    assert err(raw_r, "XGROUP", "SETID", "s", "g", "x") == "Invalid stream ID specified as stream command argument"
    # too many (but well-formed) options: checked after the key and group
    assert err(raw_r, "XGROUP", "SETID", "nokey", "g", "0", "ENTRIESREAD", "1", "ENTRIESREAD", "2") == KEY_REQUIRED
    assert err(raw_r, "XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "1", "ENTRIESREAD", "2") == \
        "unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP."


# --- DESTROY / CREATECONSUMER / DELCONSUMER ---------------------------------------------------


def test_destroy(raw_rc):
    add_entries(raw_rc)
    raw_rc.execute_command("XGROUP", "CREATE", "s", "g", "0")
    raw_rc.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert raw_rc.execute_command("XGROUP", "DESTROY", "s", "g") == 1
    assert raw_rc.execute_command("XGROUP", "DESTROY", "s", "g") == 0
    assert raw_rc.execute_command("XINFO", "GROUPS", "s") == []
    assert err(raw_rc, "XGROUP", "DESTROY", "nokey", "g") == KEY_REQUIRED
    assert err(raw_rc, "XGROUP", "DESTROY", "s", "g", "x") == "wrong number of arguments for 'xgroup|destroy' command"
    # a group of the same name starts afresh
    raw_rc.execute_command("XGROUP", "CREATE", "s", "g", "0")
    assert raw_rc.execute_command("XPENDING", "s", "g")[0] == 0


def test_createconsumer_and_delconsumer(raw_rc):
    add_entries(raw_rc)
    raw_rc.execute_command("XGROUP", "CREATE", "s", "g", "0")
    assert raw_rc.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "Bob") == 1
    assert raw_rc.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "Bob") == 0
    raw_rc.execute_command("XREADGROUP", "GROUP", "g", "Alice", "COUNT", "3", "STREAMS", "s", ">")
    assert groups(raw_rc)[b"g"][b"consumers"] == 2
    consumers = [as_map(c) for c in raw_rc.execute_command("XINFO", "CONSUMERS", "s", "g")]
    assert [(c[b"name"], c[b"pending"], c[b"inactive"]) for c in consumers][1] == (b"Bob", 0, -1)
    assert raw_rc.execute_command("XGROUP", "DELCONSUMER", "s", "g", "Alice") == 3
    assert raw_rc.execute_command("XGROUP", "DELCONSUMER", "s", "g", "Alice") == 0
    assert raw_rc.execute_command("XGROUP", "DELCONSUMER", "s", "g", "Nobody") == 0
    # the deleted consumer's entries left the group PEL too
    assert raw_rc.execute_command("XPENDING", "s", "g") == [0, None, None, None]
    assert groups(raw_rc)[b"g"][b"consumers"] == 1
    for sub in ("CREATECONSUMER", "DELCONSUMER"):
        assert err(raw_rc, "XGROUP", sub, "s", "nog", "c") == "NOGROUP No such consumer group 'nog' for key name 's'"
        assert err(raw_rc, "XGROUP", sub, "nokey", "g", "c") == KEY_REQUIRED
        assert err(raw_rc, "XGROUP", sub, "s", "g") == f"wrong number of arguments for 'xgroup|{sub.lower()}' command"


def test_help_and_unknown_subcommand(raw_rc):
    lines = raw_rc.execute_command("XGROUP", "HELP")
    assert lines[0] == b"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]" in lines
    assert lines[-2:] == [b"HELP", b"    Print this help."]
    assert len(lines) == 17
    assert err(raw_rc, "XGROUP", "FOO", "s", "g") == "unknown subcommand 'FOO'. Try XGROUP HELP."
    assert err(raw_rc, "XGROUP") == "wrong number of arguments for 'xgroup' command"
    assert err(raw_rc, "XGROUP", "HELP", "x") == "wrong number of arguments for 'xgroup|help' command"


def test_help_bytes(raw):
    raw.send(b"XGROUP HELP\r\n")
    head = b"*17\r\n+XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
    assert raw.read_exactly(len(head)) == head


def test_command_docs_and_getkeys(raw_r):
    assert raw_r.execute_command("COMMAND", "GETKEYS", "XGROUP", "CREATE", "k", "g", "$") == [b"k"]
    assert raw_r.execute_command("COMMAND", "GETKEYS", "XACK", "k", "g", "1-1") == [b"k"]
    info = raw_r.execute_command("COMMAND", "INFO", "XACK")[0]
    assert info[1] == -4 and set(info[2]) == {b"write", b"fast"}
    sub = {s[0]: s for s in raw_r.execute_command("COMMAND", "INFO", "XGROUP")[0][9]}
    assert sub[b"xgroup|create"][1] == -5
    assert set(sub[b"xgroup|create"][2]) == {b"write", b"denyoom"}
    assert sub[b"xgroup|destroy"][1] == 4


# --- XACK -------------------------------------------------------------------------------------


def test_xack(raw_rc):
    add_entries(raw_rc)
    raw_rc.execute_command("XGROUP", "CREATE", "s", "g", "0")
    raw_rc.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert raw_rc.execute_command("XACK", "s", "g", "1-1") == 1
    assert raw_rc.execute_command("XACK", "s", "g", "1-1") == 0  # not twice
    assert raw_rc.execute_command("XACK", "s", "g", "1-1", "1-2", "1-3", "9-9") == 2
    assert raw_rc.execute_command("XPENDING", "s", "g")[:3] == [1, b"1-4", b"1-4"]
    # an invalid ID anywhere: error, and nothing acknowledged
    assert err(raw_rc, "XACK", "s", "g", "1-4", "invalid-id") == \
        "Invalid stream ID specified as stream command argument"
    assert err(raw_rc, "XACK", "s", "g", "1-4", "+") == "Invalid stream ID specified as stream command argument"
    assert raw_rc.execute_command("XPENDING", "s", "g")[0] == 1
    assert raw_rc.execute_command("XACK", "s", "g", "1") == 0  # "1" is 1-0
    assert raw_rc.execute_command("XACK", "s", "g", "1-4") == 1


def test_xack_missing_key_or_group_is_zero(raw_r):
    add_entries(raw_r)
    raw_r.set("str", "x")
    assert raw_r.execute_command("XACK", "nokey", "g", "1-1") == 0
    assert raw_r.execute_command("XACK", "s", "nog", "1-1") == 0
    # IDs are not even parsed then, as in Redis
    assert raw_r.execute_command("XACK", "s", "nog", "garbage") == 0
    assert err(raw_r, "XACK", "str", "g", "1-1") == "WRONGTYPE Operation against a key holding the wrong kind of value"
    assert err(raw_r, "XACK", "s", "g") == "wrong number of arguments for 'xack' command"


def test_group_commands_do_not_invalidate_watch(server, raw_r):
    add_entries(raw_r)
    raw_r.execute_command("XGROUP", "CREATE", "s", "g", "0")
    other = redis.Redis(port=server.port)
    try:
        raw_r.execute_command("WATCH", "s")
        other.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
        other.execute_command("XACK", "s", "g", "1-1")
        other.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "c2")
        raw_r.execute_command("MULTI")
        raw_r.execute_command("PING")
        assert raw_r.execute_command("EXEC") == [b"PONG"]
        # ...but writing the stream itself does
        raw_r.execute_command("WATCH", "s")
        other.execute_command("XADD", "s", "2-0", "f", "v")
        raw_r.execute_command("MULTI")
        raw_r.execute_command("PING")
        assert raw_r.execute_command("EXEC") is None
    finally:
        other.close()


# --- differential -----------------------------------------------------------------------------

SCRIPT = [
    ("XGROUP", "CREATE", "s", "g", "$"),
    ("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
    ("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
    ("XADD", "s", "1-1", "a", "1"),
    ("XADD", "s", "1-2", "a", "2"),
    ("XGROUP", "CREATE", "s", "g2", "0", "ENTRIESREAD", "1"),
    ("XGROUP", "CREATE", "s", "g3", "0", "ENTRIESREAD", "-2"),
    ("XGROUP", "CREATE", "s", "g3", "x"),
    ("XGROUP", "CREATE", "s", "g3", "0", "BAD"),
    ("XGROUP", "SETID", "s", "g2", "1-1", "ENTRIESREAD", "1"),
    ("XGROUP", "SETID", "s", "nog", "1-1"),
    ("XGROUP", "SETID", "s", "g2", "1-1", "MKSTREAM"),
    ("XINFO", "GROUPS", "s"),
    ("XGROUP", "CREATECONSUMER", "s", "g2", "c"),
    ("XGROUP", "CREATECONSUMER", "s", "g2", "c"),
    ("XREADGROUP", "GROUP", "g2", "c", "STREAMS", "s", ">"),
    ("XGROUP", "DELCONSUMER", "s", "g2", "c"),
    ("XGROUP", "DELCONSUMER", "s", "nog", "c"),
    ("XACK", "s", "g2", "1-2"),
    ("XACK", "s", "g2", "x"),
    ("XACK", "s", "nog", "x"),
    ("XGROUP", "DESTROY", "s", "g2"),
    ("XGROUP", "DESTROY", "s", "g2"),
    ("XGROUP", "DESTROY", "nokey", "g2"),
    ("XGROUP", "FOO"),
    ("XGROUP", "HELP"),
    ("XINFO", "GROUPS", "s"),
]

# Redis 7.0's HELP footer says "Prints this help."; 7.4 says "Print this help.".
HELP_DIFFERENCE = SCRIPT.index(("XGROUP", "HELP"))


def test_differential_against_real_redis(server, real_redis):
    ours, theirs = run_plain(server.port, SCRIPT), run_plain(real_redis.port, SCRIPT)
    for i, (argv, a, b) in enumerate(zip(SCRIPT, ours, theirs, strict=True)):
        if i == HELP_DIFFERENCE:
            assert a[:-1] == b[:-1] and a[-1] == b"    Print this help." and b[-1] == b"    Prints this help."
        else:
            assert a == b, argv
