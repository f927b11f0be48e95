"""The build that runs: compiled by mypyc (setup.py) unless RIVULET_PURE_PYTHON=1 asked for the
pure-Python modules (`make test-pure` runs the suite that way), and stale compiled modules of a
checkout are reported."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import server.dispatch
import streams.groups
from server.native import build_name, stale_modules
from tests.serverproc import ROOT, ServerProcess

EXPECTED = "python" if os.environ.get("RIVULET_PURE_PYTHON") == "1" else "mypyc"
EXT = EXTENSION_SUFFIXES[0]


def test_the_expected_build_is_imported_here() -> None:
    compiled = [m.__file__.endswith(EXT) for m in (server.dispatch, streams.groups)]
    assert compiled == [EXPECTED == "mypyc"] * 2
    assert build_name() == EXPECTED


def test_version_and_startup_log_name_the_build() -> None:
    done = subprocess.run([sys.executable, "-m", "server", "--version"], cwd=ROOT,
                          capture_output=True, text=True, timeout=20)
    assert done.returncode == 0 and done.stdout.rstrip().endswith(f"build={EXPECTED}")
    proc = ServerProcess().start()
    try:
        assert f"build={EXPECTED}" in proc.log()
        assert "older than their sources" not in proc.log()
    finally:
        proc.cleanup()


def _checkout(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / ".git").mkdir()
    (tmp_path / "streams").mkdir()
    source = tmp_path / "streams" / "pel.py"
    built = tmp_path / "streams" / f"pel{EXT}"
    source.write_text("")
    built.write_bytes(b"")
    return source, built


def test_stale_compiled_modules_are_found(tmp_path: Path) -> None:
    source, built = _checkout(tmp_path)
    os.utime(source, (1_000, 1_000))
    os.utime(built, (2_000, 2_000))
    assert stale_modules(str(tmp_path)) == []
    os.utime(source, (3_000, 3_000))  # edited after the build
    assert stale_modules(str(tmp_path)) == [os.path.join("streams", "pel.py")]
    built.unlink()  # a source without a compiled module is what runs: nothing stale
    assert stale_modules(str(tmp_path)) == []


def test_outside_a_checkout_file_times_are_not_judged(tmp_path: Path) -> None:
    source, built = _checkout(tmp_path)
    (tmp_path / ".git").rmdir()
    os.utime(built, (1_000, 1_000))
    os.utime(source, (3_000, 3_000))
    assert stale_modules(str(tmp_path)) == []


def test_a_worktree_is_a_checkout_too(tmp_path: Path) -> None:
    # `git worktree add` makes .git a file that names the repository.
    source, built = _checkout(tmp_path)
    (tmp_path / ".git").rmdir()
    (tmp_path / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    os.utime(built, (2_000, 2_000))
    os.utime(source, (3_000, 3_000))
    assert stale_modules(str(tmp_path)) == [os.path.join("streams", "pel.py")]
