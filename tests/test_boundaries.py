"""Package boundaries: what the packages built on the core may import from it.

Every package other than ``a2a_core`` (the adapters, the Redis backend, and the backends to
come) uses only the core's public names: no module or name that starts with an underscore
anywhere in the path. A backend imports from the core's runtime only through the seam for
backend authors, ``a2a_core.server.backends``, or the agent-facing ``a2a_core.server``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGES = Path(__file__).resolve().parent.parent / "packages"
#: Packages whose runtime imports must go through the backend seam.
BACKENDS = ("a2a-redis", "a2a-sql")  # folders under packages/
SEAMS = ("a2a_core.server", "a2a_core.server.backends")


def _sources() -> list[Path]:
    return sorted(
        path
        for path in PACKAGES.glob("*/src/**/*.py")
        if path.relative_to(PACKAGES).parts[0] != "a2a-core"  # the core's folder
    )


def _core_imports(path: Path) -> list[tuple[int, str, str]]:
    """(line, module, name) of every import from a2a_core in ``path`` (name "" for
    ``import a2a_core.x``)."""
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "a2a_core":
                found.extend((node.lineno, node.module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend(
                (node.lineno, alias.name, "")
                for alias in node.names
                if alias.name.split(".")[0] == "a2a_core"
            )
    return found


def test_there_are_packages_to_check() -> None:
    sources = {path.relative_to(PACKAGES).parts[0] for path in _sources()}
    assert {"a2a-starlette", "a2a-aiohttp", *BACKENDS} <= sources  # folders


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PACKAGES)))
def test_no_private_core_name_is_imported(path: Path) -> None:
    for line, module, name in _core_imports(path):
        parts = [*module.split("."), *([name] if name else [])]
        private = [part for part in parts if part.startswith("_")]
        assert not private, f"{path.name}:{line} imports a private name: {module} {name}"


@pytest.mark.parametrize(
    "path",
    [p for p in _sources() if p.relative_to(PACKAGES).parts[0] in BACKENDS],
    ids=lambda p: str(p.relative_to(PACKAGES)),
)
def test_backends_reach_the_runtime_only_through_the_seam(path: Path) -> None:
    for line, module, _ in _core_imports(path):
        if module == "a2a_core.server" or module.startswith("a2a_core.server."):
            assert module in SEAMS, f"{path.name}:{line} imports {module}, not the seam"


SERVER = PACKAGES / "a2a-core" / "src" / "a2a_core" / "server"  # folders


def _server_graph() -> dict[str, set[str]]:
    """Module -> the ``a2a_core.server`` modules it imports, counting imports made only for
    type checking (a cycle there is still a tangle a reader has to hold in mind)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(SERVER.glob("*.py")):
        name = "a2a_core.server" if path.stem == "__init__" else f"a2a_core.server.{path.stem}"
        edges = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module.startswith("a2a_core.server"):
                    edges.add(node.module)
            elif isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name.startswith("a2a_core.server"))
    return graph


def test_the_runtime_modules_import_each_other_without_a_circle() -> None:
    graph = _server_graph()
    assert "a2a_core.server.writes" in graph, "the module list is read from the wrong place"
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        if module in path:
            cycle = (*path[path.index(module) :], module)
            pytest.fail("import circle: " + " -> ".join(cycle))
        if module in done:
            return
        for imported in sorted(graph.get(module, ())):
            visit(imported, (*path, module))
        done.add(module)

    for module in sorted(graph):
        visit(module, ())
