"""The dump.rdb load benchmark measures both servers on the same Redis-made file."""

from __future__ import annotations

from bench.case import Options
from bench.rdb_load import RdbLoadCase, make_file
from bench.runner import run_case
from bench.targets import REDIS, RIVULET


def test_rdb_load_case_reports_entries_per_second_of_both_servers(real_redis: object) -> None:
    path, entries = make_file(2000)
    assert entries == 2000 + 2000 + 200 * 10
    assert path.read_bytes()[:9] == b"REDIS0010"  # made by the system's Redis 7.0
    result = run_case(RdbLoadCase(), [RIVULET, REDIS], Options(entries=2000, repeat=1))
    assert result.errors == {}
    for server in (RIVULET, REDIS):
        (sample,) = result.samples["rdb_load.entries_per_sec"][server]
        assert sample.value > 0 and sample.extra["entries"] == entries
