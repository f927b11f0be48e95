"""COMMAND and its subcommands: the Redis 7 formats clients (redis-cli, redis-py) parse."""

from __future__ import annotations

import pytest
import redis

from server.command_table import DEPRECATED
from tests.helpers import plain


@pytest.fixture
def raw_cmd(r):
    """Replies of r without redis-py's per-command parsing."""
    def run(*args):
        conn = r.connection_pool.get_connection()
        try:
            conn.send_command(*args)
            return conn.read_response()
        finally:
            r.connection_pool.release(conn)
    return run


def test_count_matches_full_listing(raw_cmd):
    count = raw_cmd("COMMAND", "COUNT")
    listing = raw_cmd("COMMAND")
    assert count == len(listing) > 50
    names = {entry[0] for entry in listing}
    assert {b"get", b"client", b"config", b"command", b"info"} <= names


def test_info_format(raw_cmd):
    get, missing, client_list = raw_cmd("COMMAND", "INFO", "get", "nosuch", "CLIENT|LIST")
    assert missing is None
    name, arity, flags, first, last, step, cats, tips, specs, subs = get
    assert (name, arity, first, last, step) == (b"get", 2, 1, 1, 1)
    assert flags == [b"readonly", b"fast"]
    assert cats == [b"@read", b"@string", b"@fast"]
    assert specs[0][specs[0].index(b"begin_search") + 1] == [b"type", b"index", b"spec", [b"index", 1]]
    assert subs == []
    assert client_list[0] == b"client|list" and client_list[1] == -2
    assert client_list[2] == [b"admin", b"noscript", b"loading", b"stale"]
    assert client_list[6] == [b"@admin", b"@slow", b"@dangerous", b"@connection"]
    assert client_list[7] == [b"nondeterministic_output"]


def test_container_info_lists_subcommands(raw_cmd):
    (config,) = raw_cmd("COMMAND", "INFO", "config")
    assert config[1] == -2
    subs = {entry[0] for entry in config[9]}
    assert {b"config|get", b"config|set", b"config|resetstat", b"config|rewrite", b"config|help"} <= subs


def test_redis_py_command_parser(r):
    commands = r.command()
    assert commands["get"]["arity"] == 2
    assert "config" in commands


def test_docs(raw_cmd):
    docs = raw_cmd("COMMAND", "DOCS", "config|set", "nosuch", "CLIENT")
    assert docs[0::2] == [b"config|set", b"client"]
    config_set = dict(zip(docs[1][0::2], docs[1][1::2], strict=True))
    assert config_set[b"summary"] == b"Sets configuration parameters in-flight."
    assert config_set[b"since"] == b"2.0.0" and config_set[b"group"] == b"server"
    assert config_set[b"history"] == [[b"7.0.0", b"Added the ability to set multiple parameters in one call."]]
    (block,) = config_set[b"arguments"]
    block = dict(zip(block[0::2], block[1::2], strict=True))
    assert block[b"type"] == b"block" and block[b"flags"] == [b"multiple"]
    assert b"display_text" not in block
    param = dict(zip(block[b"arguments"][0][0::2], block[b"arguments"][0][1::2], strict=True))
    assert param == {b"name": b"parameter", b"type": b"string", b"display_text": b"parameter"}
    client = dict(zip(docs[3][0::2], docs[3][1::2], strict=True))
    assert b"client|list" in client[b"subcommands"][0::2]
    assert raw_cmd("COMMAND", "DOCS", "nosuch") == []


def test_docs_all_is_a_map_in_resp3(r3):
    conn = r3.connection_pool.get_connection()
    try:
        conn.send_command("COMMAND", "DOCS")
        docs = conn.read_response()
    finally:
        r3.connection_pool.release(conn)
    assert isinstance(docs, dict) and b"get" in docs and b"client" in docs
    assert docs[b"debug"][b"doc_flags"] == [b"syscmd"]


def test_list_and_filters(raw_cmd):
    everything = raw_cmd("COMMAND", "LIST")
    assert b"client|list" in everything and b"get" in everything
    assert sorted(raw_cmd("COMMAND", "LIST", "FILTERBY", "PATTERN", "config|*")) == [
        b"config|get", b"config|help", b"config|resetstat", b"config|rewrite", b"config|set"]
    connection = raw_cmd("COMMAND", "LIST", "FILTERBY", "ACLCAT", "connection")
    assert b"ping" in connection and b"get" not in connection
    assert raw_cmd("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuchcat") == []
    assert raw_cmd("COMMAND", "LIST", "FILTERBY", "MODULE", "x") == []
    for bad in (("FILTERBY", "COLOR", "x"), ("FILTERBY", "PATTERN"), ("BOGUS",)):
        with pytest.raises(redis.ResponseError, match="^syntax error$"):
            raw_cmd("COMMAND", "LIST", *bad)


def test_getkeys(raw_cmd):
    assert raw_cmd("COMMAND", "GETKEYS", "SET", "k", "v") == [b"k"]
    assert raw_cmd("COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2") == [b"a", b"b"]
    assert raw_cmd("COMMAND", "GETKEYS", "MSET", "a", "1", "b") == [b"a", b"b"]  # as Redis
    assert raw_cmd("COMMAND", "GETKEYS", "del", "a", "b", "c") == [b"a", b"b", b"c"]
    flags = raw_cmd("COMMAND", "GETKEYSANDFLAGS", "GET", "k")
    assert flags == [[b"k", [b"RO", b"access"]]]
    for args, message in [
        (("nosuch", "x"), "Invalid command specified"),
        (("ping", "x"), "The command has no key arguments"),
        (("get", "a", "b"), "Invalid number of arguments specified for command"),
    ]:
        with pytest.raises(redis.ResponseError) as err:
            raw_cmd("COMMAND", "GETKEYS", *args)
        assert str(err.value) == message, args


def test_help_and_errors(raw_cmd):
    lines = raw_cmd("COMMAND", "HELP")
    assert lines[0] == b"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    with pytest.raises(redis.ResponseError, match=r"^unknown subcommand 'nope'\. Try COMMAND HELP\.$"):
        raw_cmd("COMMAND", "nope")


def test_differential_against_real_redis(real_redis, r):
    real = redis.Redis(port=real_redis.port)

    def info(c: redis.Redis, name: str):
        conn = c.connection_pool.get_connection()
        try:
            conn.send_command("COMMAND", "INFO", name)
            return conn.read_response()[0]
        finally:
            c.connection_pool.release(conn)

    try:
        # name, arity, flags, key range and ACL categories are the same as Redis's
        for name in ("get", "set", "ping", "config|get", "config|set", "client|kill", "client|setname",
                     "info", "time", "shutdown", "command|docs"):
            ours, theirs = info(r, name), info(real, name)
            assert ours[:7] == theirs[:7], name
        for args in [("nosuch", "x"), ("ping", "x"), ("get", "a", "b")]:
            errors = []
            for c in (r, real):
                with pytest.raises(redis.ResponseError) as err:
                    c.execute_command("COMMAND", "GETKEYS", *args)
                errors.append(str(err.value))
            assert errors[0] == errors[1], args
    finally:
        real.close()


@pytest.mark.parametrize("name", ["brpoplpush", "getset", "hmset", "psetex", "rpoplpush", "setex",
                                  "setnx", "substr", "zrangebylex", "zrangebyscore", "zrevrange",
                                  "zrevrangebylex", "zrevrangebyscore", "quit"])
def test_deprecated_commands_say_so_as_redis_does(real_redis, r, name):
    def docs(c: redis.Redis) -> dict:
        reply = c.execute_command("COMMAND", "DOCS", name)
        flat = reply[1] if isinstance(reply, list) else reply[name.encode()]
        doc = dict(zip(flat[::2], flat[1::2], strict=True)) if isinstance(flat, list) else flat
        return {k: doc.get(k) for k in (b"doc_flags", b"deprecated_since", b"replaced_by")}

    with redis.Redis(port=real_redis.port) as real:
        theirs = docs(plain(real))
    ours = docs(plain(r))
    if name in ("quit", "psetex", "setex", "setnx"):
        # Deprecated by Redis 7.2's command files: the Redis 7.0 compared here lists them plainly.
        since, replaced_by = DEPRECATED[name]
        assert ours == {b"doc_flags": [b"deprecated"], b"deprecated_since": since.encode(),
                        b"replaced_by": replaced_by.encode()}
        assert theirs[b"deprecated_since"] is None
    else:
        assert ours == theirs
