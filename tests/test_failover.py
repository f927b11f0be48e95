"""Failover of Rivulet servers by the real Redis Sentinel, under load (bench/failover.py's scenario).

Three Rivulet servers (a master, two replicas) and three Debian `redis-sentinel` processes; producers
XADD + WAIT 1 through Sentinel while a consumer group reads and acks; the master is killed with
SIGKILL; Sentinel promotes a replica, the producers follow it, the old master returns as a replica.
"""

from __future__ import annotations

import pytest

from bench.failover import missing_tools, run_scenario


def test_sentinel_failover_keeps_every_confirmed_entry(capsys: pytest.CaptureFixture[str]) -> None:
    why = missing_tools("rivulet")
    if why:
        pytest.skip(f"NOT TESTED: Sentinel failover of Rivulet servers: {why}")
    out = run_scenario("rivulet", producers=2, batch=50, before=3.0, after=6.0)
    with capsys.disabled():
        print()
        for line in out.lines():
            print(line)
    assert out.confirmed > 0
    assert out.lost == 0, out.lines()
    # A batch is written again only when it was not confirmed: any other duplicate is a fault.
    assert out.unexplained_duplicates == 0, out.lines()
    assert out.back_all_s is not None, "a producer never wrote again after the failover"
    assert out.converged, out.lines()
    assert out.acked > 0
