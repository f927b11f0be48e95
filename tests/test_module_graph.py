"""The shape of the code: which modules import which.

The layers are protocol/ (RESP, no I/O) and streams/ (the engine) at the bottom, then the command
modules, then the server that runs them. A module-level import cycle would make the order of
imports matter and pull half the server into anything that imports one command module.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serverproc import ROOT

PACKAGES = ("server", "protocol", "streams")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _module_level_imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """What a module imports when it is imported (not under TYPE_CHECKING, not inside functions)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    pending = [n for n in ast.parse(path.read_text()).body if not _is_type_checking(n)]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
        else:
            pending.extend(n for n in ast.iter_child_nodes(node)
                           if not (isinstance(n, ast.stmt) and _is_type_checking(n)))
    return {t for t in targets if t in modules and t != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_level_import_cycle() -> None:
    modules = _modules()
    graph = {name: _module_level_imports(name, path, modules) for name, path in modules.items()}
    assert len(graph) > 40  # the walk found the tree
    assert _cycles(graph) == []


def test_cycle_finder_sees_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_lower_layers_import_no_server_module() -> None:
    modules = _modules()
    for name, path in modules.items():
        if name.startswith(("protocol", "streams")):
            imported = _module_level_imports(name, path, modules)
            assert not [m for m in imported if m.startswith("server")], name


@pytest.mark.parametrize("module", ["streams_write", "streams_read", "streams_readgroup",
                                    "streams_groups", "streams_info", "keys", "strings"])
def test_a_command_module_loads_what_it_needs_only(module: str) -> None:
    # In a fresh interpreter: importing a command module must not start up the server, the
    # persistence layer or the dispatcher.
    code = (f"import sys, server.commands.{module}; "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith(('server', 'protocol', "
            "'streams')))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split()
    assert f"server.commands.{module}" in out
    for heavy in ("server.server", "server.persistence", "server.dispatch", "server.connection"):
        assert heavy not in out, out
