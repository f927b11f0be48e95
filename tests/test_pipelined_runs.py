"""Pipelined calls of the commands with a run handler (XADD, LPUSH, RPUSH, LPOP, RPOP, HSET,
SADD, SETBIT, ZADD): malformed calls among them get Redis's errors, and the connection lives."""

from __future__ import annotations

import pytest

from tests.helpers import run_pipelined

RUN_COMMANDS = ["XADD", "LPUSH", "RPUSH", "LPOP", "RPOP", "HSET", "SADD", "SETBIT", "ZADD"]


@pytest.mark.parametrize("name", RUN_COMMANDS)
def test_a_call_without_arguments_among_others_gets_the_arity_error(server, real_redis, name) -> None:
    # The command's name alone, then more calls: twice, so that the second pipeline meets the
    # command already looked up (the run handler is asked before the arity check).
    script: list[tuple] = [(name,), (name, "k"), (name,), ("PING",), (name,), (name,), ("PING",)]
    ours = [run_pipelined(server.port, script, flush=not i) for i in range(2)]
    theirs = [run_pipelined(real_redis.port, script, flush=not i) for i in range(2)]
    assert ours == theirs
    assert ours[1][-1] == b"+PONG\r\n"
