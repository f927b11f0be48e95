"""The benchmark runner's order of runs: cases that need a fresh server per run take turns between
the servers, run by run, so that a spell of load on the machine falls on both servers alike;
other cases run all of one server's runs on one process, then the other's."""

from __future__ import annotations

from bench.case import Case, Options
from bench.resp import RespClient
from bench.runner import run_case
from bench.stats import Metric, Sample
from bench.targets import REDIS, RIVULET, Target


class _Recorder(Case):
    name = "order"
    metrics = [Metric("order.ping", "ops", True, "a PING, to prove the server answered")]

    def __init__(self, fresh: bool, fail_on: str | None = None) -> None:
        self.fresh_server_per_run = fresh
        self.fail_on = fail_on
        self.seen: list[tuple[str, int]] = []

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        self.seen.append((target.name, target.pid))
        if target.name == self.fail_on:
            raise RuntimeError("this server fails the case")
        with RespClient(target.port) as client:
            assert client.call("PING") == b"PONG"
        return {"order.ping": Sample(1.0, 1, 0.0)}


def test_fresh_server_cases_take_turns(real_redis: object) -> None:
    case = _Recorder(fresh=True)
    result = run_case(case, [RIVULET, REDIS], Options(repeat=3))
    assert [name for name, _ in case.seen] == [RIVULET, REDIS] * 3
    assert len({pid for _, pid in case.seen}) == 6  # a new process for every run
    assert {server: len(runs) for server, runs in result.samples["order.ping"].items()} == {
        RIVULET: 3, REDIS: 3}
    assert result.errors == {}


def test_shared_server_cases_run_server_by_server(real_redis: object) -> None:
    case = _Recorder(fresh=False)
    run_case(case, [RIVULET, REDIS], Options(repeat=3))
    assert [name for name, _ in case.seen] == [RIVULET] * 3 + [REDIS] * 3
    assert len({pid for _, pid in case.seen}) == 2  # one process per server, flushed between runs


def test_a_failing_server_is_not_run_again_and_keeps_the_other_figures(real_redis: object) -> None:
    case = _Recorder(fresh=True, fail_on=RIVULET)
    result = run_case(case, [RIVULET, REDIS], Options(repeat=3))
    assert [name for name, _ in case.seen] == [RIVULET, REDIS, REDIS, REDIS]
    assert "this server fails the case" in result.errors[RIVULET]
    assert list(result.samples["order.ping"]) == [REDIS]
    assert len(result.samples["order.ping"][REDIS]) == 3
