"""Which build of the hot path runs: the modules compiled by mypyc (setup.py), or the pure-Python
sources when no compiler was at hand. In a checkout, compiled modules older than their sources
are stale: Python would still import them, so the server warns and the test suite refuses to run.
"""

from __future__ import annotations

import importlib.util
import os
from importlib.machinery import EXTENSION_SUFFIXES

# Compiled in every compiled build (see setup.py's COMPILED): a probe for which build this is.
_PROBE = "server.dispatch"
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGES = ("protocol", "server", "streams", "hashes", "lists", "sets", "zsets")


def _is_extension(path: str | None) -> bool:
    return path is not None and path.endswith(tuple(EXTENSION_SUFFIXES))


def build_name() -> str:
    """"mypyc" when the hot path is compiled, else "python"."""
    spec = importlib.util.find_spec(_PROBE)
    return "mypyc" if spec is not None and _is_extension(spec.origin) else "python"


def stale_modules(root: str = _ROOT) -> list[str]:
    """Sources (relative to root) of a checkout's compiled modules that changed since they were
    built; empty outside a checkout, where file times say nothing about the build."""
    # A worktree's or submodule's .git is a file naming the repository: still a checkout.
    if not os.path.exists(os.path.join(root, ".git")):
        return []
    stale = []
    for package in _PACKAGES:
        for folder, _dirs, files in os.walk(os.path.join(root, package)):
            for name in files:
                if not _is_extension(name):
                    continue
                built = os.path.join(folder, name)
                source = os.path.join(folder, name.split(".", 1)[0] + ".py")
                if os.path.exists(source) and os.path.getmtime(source) > os.path.getmtime(built):
                    stale.append(os.path.relpath(source, root))
    return sorted(stale)


REBUILD_HINT = "rebuild them with `make build` (or delete the .so files to run the sources)"
