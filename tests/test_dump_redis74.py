"""DUMP/RESTORE against what Redis 7.4 writes: payloads committed in tests/data/rdb/values/ (made by
the real 7.4 with generate.py there), and a live 7.4 when this machine has one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from tests.dump_helpers import redis74, snapshot  # noqa: F401  (fixture)

DATA = json.loads((Path(__file__).parent / "data/rdb/values/payloads74.json").read_text())
CASES = DATA["cases"]
IDS = [case["name"] for case in CASES]


def _build(client: redis.Redis, case: dict) -> None:
    client.delete("k")
    for cmd in case["setup"]:
        client.execute_command(*cmd)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_restore_of_a_redis74_payload(r: redis.Redis, case: dict) -> None:
    r.delete("k")
    assert r.restore("k", 0, bytes.fromhex(case["payload"])) in (True, b"OK")
    assert snapshot(r, "k") == case["snapshot"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_dump_equals_redis74(r: redis.Redis, case: dict) -> None:
    """The same commands give the same value; its DUMP is 7.4's, byte for byte, wherever 7.4's does
    not follow its hash tables' order (then the value read back is the same)."""
    _build(r, case)
    assert snapshot(r, "k") == case["snapshot"]
    payload = r.dump("k")
    if case["identical"]:
        assert payload.hex() == case["payload"]
    r.delete("k")
    r.restore("k", 0, payload)
    assert snapshot(r, "k") == case["snapshot"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_live_redis74_restores_our_payloads(r: redis.Redis, redis74: redis.Redis, case: dict) -> None:  # noqa: F811
    _build(r, case)
    redis74.delete("k")
    assert redis74.restore("k", 0, r.dump("k")) in (True, b"OK")
    assert snapshot(redis74, "k") == case["snapshot"]


LEGACY = json.loads((Path(__file__).parent / "data/rdb/values/legacy.json").read_text())["cases"]
LEGACY_IDS = [case["name"] for case in LEGACY]


@pytest.mark.parametrize("case", LEGACY, ids=LEGACY_IDS)
def test_restore_of_older_encodings_as_redis74_loads_them(r: redis.Redis, case: dict) -> None:
    """Ziplists, zipmaps, text doubles, intsets of every width, plain lists and sets, and the hash
    field expiry types of 7.4's release candidates: what Redis 7.4 holds after RESTORE."""
    r.delete("k")
    assert r.restore("k", 0, bytes.fromhex(case["payload"])) in (True, b"OK")
    assert snapshot(r, "k") == case["snapshot"]


# Every byte of the small ones (the large ones share their encodings).
SMALL_LEGACY = [case for case in LEGACY if len(case["payload"]) <= 800]


@pytest.mark.parametrize("case", SMALL_LEGACY, ids=[case["name"] for case in SMALL_LEGACY])
def test_damaged_older_encodings_answer_errors(r: redis.Redis, case: dict) -> None:
    from tests.test_dump import _damaged_payload_replies

    payload = bytes.fromhex(case["payload"])
    port = r.connection_pool.connection_kwargs["port"]
    _damaged_payload_replies(port, payload)
