"""A short run of the fuzzers (fuzz/), so that a crash, hang, leak or parser disagreement they
would find shows up in `make test`; `make fuzz` runs them for longer.

Each run takes a fresh seed, printed in the failure message with the command that repeats it.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.inprocess import Findings, _parse, fuzz_commands, fuzz_parser
from fuzz.mutate import MUTATIONS
from fuzz.tcp import fuzz_live
from tests.serverproc import ServerProcess


def _explain(found: Findings, seed: int, part: str) -> str:
    return (f"{found.summary()}\n" + "\n".join(found.examples)
            + f"\nrepeat with: python -m fuzz --parts {part} --seed {seed} --seconds 60")


def test_parser_fast_path_agrees_with_the_strict_parser() -> None:
    seed = random.randrange(2**32)
    found = fuzz_parser(8, seed)
    assert found.inputs > 200
    assert not (found.crashes or found.hangs or found.divergences), _explain(found, seed, "parser")


def test_command_layer_survives_generated_and_mutated_pipelines() -> None:
    seed = random.randrange(2**32)
    found = fuzz_commands(12, seed)
    assert found.inputs > 50 and found.commands > found.inputs
    assert not (found.crashes or found.hangs or found.leaks), _explain(found, seed, "commands")


def test_live_server_survives_mutated_pipelines() -> None:
    seed = random.randrange(2**32)
    server = ServerProcess().start()
    try:
        assert server.proc is not None
        found, ends = fuzz_live(server.port, server.proc.pid, 12, seed, connections=8)
        assert server.proc.poll() is None, server.log()[-3000:]
        assert "internal error" not in server.log()
    finally:
        server.cleanup()
    assert found.inputs > 20 and ends["marker answered"] > 0
    assert not (found.crashes or found.hangs), _explain(found, seed, "live")


# Requests built from RESP's pieces, valid and not, then cut into reads at arbitrary points.
_PIECES = st.sampled_from([
    b"*1\r\n", b"*2\r\n", b"*3\r\n", b"*0\r\n", b"*-1\r\n", b"$0\r\n\r\n", b"$1\r\na\r\n", b"$3\r\nSET\r\n",
    b"$4\r\nPING\r\n", b"$2\r\n\r\n\r\n", b"$-1\r\n", b"$x\r\n", b"*x\r\n", b"+OK\r\n", b":1\r\n", b"~1\r\n",
    b"%1\r\n", b"(1\r\n", b"=5\r\ntxt:a\r\n", b"PING\r\n", b"GET 'a b'\r\n", b"\r\n", b"\n", b"\r", b"$",
    b"*", b"1", b"\x00", b"*2147483648\r\n", b"$536870913\r\n",
])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(_PIECES, max_size=24), cuts=st.lists(st.integers(0, 400), max_size=4),
       mutation=st.integers(0, len(MUTATIONS)), seed=st.integers(0, 2**32))
def test_parser_agrees_on_generated_requests(pieces: list[bytes], cuts: list[int], mutation: int,
                                             seed: int) -> None:
    data = b"".join(pieces)
    if mutation < len(MUTATIONS):
        data = MUTATIONS[mutation](data, random.Random(seed))
    points = sorted({c for c in cuts if 0 < c < len(data)})
    reads = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)] or [b""]
    strict = _parse(None, reads)
    assert _parse("scan", reads) == strict
    assert _parse("hiredis", reads) == strict


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda f: f.__name__)
def test_every_mutation_changes_or_keeps_bytes(mutation) -> None:
    # A mutation must return bytes, whatever it gets (the empty request too).
    rnd = random.Random(1)
    for data in (b"", b"*1\r\n$4\r\nPING\r\n", b"PING\r\n"):
        assert isinstance(mutation(data, rnd), bytes)
