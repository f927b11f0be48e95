"""A damaged dump.rdb stops start-up (naming the file and the offset, exit status 1) and is left
as it is; rivulet-check-rdb reports what a file holds and where it is damaged."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.rdb_file_helpers import FILES, run_server_expecting_failure
from tests.serverproc import ROOT

GOOD = (FILES / "redis74.rdb").read_bytes()


def _start_on(data: bytes, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    work = Path(tempfile.mkdtemp(prefix="rivulet-damaged-"))
    path = work / "dump.rdb"
    path.write_bytes(data)
    done = run_server_expecting_failure(str(work), "--appendonly", "no", *args)
    return done, path


def _assert_refused(data: bytes, *args: str) -> str:
    done, path = _start_on(data, *args)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert str(path) in out
    assert "at offset" in out
    # Nothing was written over the file, and no save was attempted on the way out.
    assert path.read_bytes() == data
    assert sorted(p.name for p in path.parent.iterdir()) == ["dump.rdb"]
    assert "Ready to accept connections" not in out
    return out


@pytest.mark.parametrize("cut", [5, 9, 30, 60, 200, 1000, len(GOOD) // 2, len(GOOD) - 9,
                                 len(GOOD) - 8, len(GOOD) - 1])
def test_a_truncated_file_stops_startup(cut: int) -> None:
    out = _assert_refused(GOOD[:cut])
    assert "Short read or OOM loading DB. Unrecoverable error, aborting now." in out
    assert f"file size {cut}" in out


def test_a_wrong_checksum_stops_startup() -> None:
    data = GOOD[:-8] + bytes(8 - 1) + b"\x01"
    out = _assert_refused(data)
    assert "Wrong RDB checksum" in out
    assert f"at offset {len(GOOD) - 8}" in out


def test_a_checksum_of_zero_is_not_checked(server_factory) -> None:
    # Files saved with rdbchecksum no end with eight zero bytes: loaders skip the check.
    import redis

    from tests.rdb_file_helpers import start_server_on, stop

    proc, port, work = start_server_on(GOOD[:-8] + bytes(8))
    try:
        assert redis.Redis(port=port).dbsize() > 20
    finally:
        stop(proc, work)


def test_rdbchecksum_no_skips_the_check_when_loading(server_factory) -> None:
    import redis

    from tests.rdb_file_helpers import start_server_on, stop

    proc, port, work = start_server_on(GOOD[:-8] + b"\x01" * 8, "--rdbchecksum", "no")
    try:
        assert redis.Redis(port=port).dbsize() > 20
    finally:
        stop(proc, work)


def _flip_positions() -> list[int]:
    start = GOOD.index(b"str:long") - 3
    return [3, 7, 12, start, start + 20, len(GOOD) // 3, len(GOOD) // 2, len(GOOD) - 20,
            len(GOOD) - 9]


@pytest.mark.parametrize("pos", _flip_positions())
def test_a_flipped_byte_stops_startup(pos: int) -> None:
    data = bytearray(GOOD)
    data[pos] ^= 0xFF
    out = _assert_refused(bytes(data))
    assert ("Wrong signature" in out or "Can't handle RDB format version" in out
            or "Wrong RDB checksum" in out or "Bad file format" in out or "Short read" in out)


def test_a_wrong_signature_and_a_newer_version_stop_startup() -> None:
    out = _assert_refused(b"RIVUL0012" + GOOD[9:])
    assert "Wrong signature trying to load DB from file" in out
    out = _assert_refused(b"REDIS0013" + GOOD[9:])
    assert "Can't handle RDB format version 13" in out


def test_a_database_past_the_configured_number_stops_startup() -> None:
    out = _assert_refused(GOOD, "--databases", "4")
    assert "configured to handle more than 4 databases" in out


def _with_opcode(opcode: int) -> bytes:
    """The good file with an opcode Rivulet cannot represent before its EOF (and no checksum)."""
    return GOOD[:-9] + bytes((opcode,)) + b"\x00\x00\x00\x00" + b"\xff" + bytes(8)


def test_functions_and_module_data_stop_startup_with_a_clear_error() -> None:
    out = _assert_refused(_with_opcode(245))
    assert "function library" in out
    out = _assert_refused(_with_opcode(247))
    assert "module" in out


def test_an_unknown_value_type_stops_startup() -> None:
    at = GOOD.index(b"str:short") - 1  # the type byte of the key's record
    data = bytearray(GOOD)
    assert data[at - 1] == 0
    data[at - 1] = 30
    out = _assert_refused(bytes(data[:-8] + bytes(8)))
    assert "Unknown RDB encoding type 30" in out


def _check(data: bytes) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dump.rdb"
        path.write_bytes(data)
        return subprocess.run([sys.executable, "-m", "server.rdb.check", str(path)], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)


def test_check_rdb_reports_what_a_good_file_holds() -> None:
    done = _check(GOOD)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[0].startswith("[offset 0] Checking RDB file ")
    assert "AUX FIELD redis-ver = '" in done.stdout
    assert "Selecting DB ID 0" in done.stdout and "Selecting DB ID 9" in done.stdout
    assert f"[offset {len(GOOD)}] Checksum OK" in lines
    assert f"[offset {len(GOOD)}] \\o/ RDB looks OK! \\o/" in lines
    assert "[info] 26 keys read" in lines
    assert "[info] 1 already expired" in lines
    assert "[info] db 1: 2 keys (quicklist-v2 1, string 1)" in lines
    assert "[info] db 9: 1 keys (string 1)" in lines
    assert any(line.startswith("[info] db 0: 23 keys (") and "stream-v3 2" in line
               and "hash-listpack-md 1" in line for line in lines)


def test_check_rdb_reports_where_a_file_is_damaged() -> None:
    cut = len(GOOD) // 2
    done = _check(GOOD[:cut])
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines.count("--- RDB ERROR DETECTED ---") == 2
    error = lines[lines.index("--- RDB ERROR DETECTED ---") + 1]
    assert error.startswith("[offset ") and "end of data" in error
    assert int(error.split("]")[0].split()[1]) <= cut
    assert any(line.startswith("[additional info] While doing: read-") for line in lines)
    done = _check(GOOD[:-8] + b"\x00" * 7 + b"\x01")
    assert done.returncode == 1
    assert "While doing: check-sum" in done.stdout
    assert "Wrong RDB checksum" in done.stdout


def test_check_rdb_is_a_console_script() -> None:
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["rivulet-check-rdb"] == "server.rdb.check:main"
