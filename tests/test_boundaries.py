"""Package boundaries: what the packages built on the core may import from it.

Every package other than ``a2a_core`` (the adapters, the Redis backend, and the backends to
come) uses only the core's public names: no module or name that starts with an underscore
anywhere in the path. A backend imports from the core's runtime only through the seam for
backend authors, ``a2a_core.server.backends``, or the agent-facing ``a2a_core.server``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
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
    assert {
        "a2a-starlette",
        "a2a-aiohttp",
        "a2a-grpc",
        "a2a-bridges",
        *BACKENDS,
    } <= sources  # folders


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


def _package_graph(folder: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports, for the package whose top is
    ``folder``; counting imports made only for type checking or inside functions (a cycle
    there is still a tangle a reader has to hold in mind, and a lazy import is one that
    was made lazy to hide it). ``from package import name`` counts as importing the module
    ``package.name`` when there is one, else ``package``."""
    top = folder.name
    modules: dict[str, Path] = {}
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(folder.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = graph.setdefault(name, set())
        package = name if path.stem == "__init__" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                if module.split(".")[0] != top:
                    continue
                for alias in node.names:
                    sub = f"{module}.{alias.name}"
                    edges.add(sub if sub in modules else module)
            elif isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name.split(".")[0] == top)
        edges.discard(name)
    return graph


def _cycle(graph: dict[str, set[str]]) -> tuple[str, ...] | None:
    """One import circle of ``graph``, if it has any."""
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> tuple[str, ...] | None:
        if module in path:
            return (*path[path.index(module) :], module)
        if module in done:
            return None
        for imported in sorted(graph.get(module, ())):
            found = visit(imported, (*path, module))
            if found:
                return found
        done.add(module)
        return None

    for module in sorted(graph):
        found = visit(module, ())
        if found:
            return found
    return None


TOPS = sorted(path.parent for path in PACKAGES.glob("*/src/*/__init__.py"))


@pytest.mark.parametrize("top", TOPS, ids=lambda top: top.name)
def test_no_package_has_an_import_circle(top: Path) -> None:
    graph = _package_graph(top)
    assert len(graph) > 1, "the module list is read from the wrong place"
    cycle = _cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or ())


def test_every_package_is_checked_for_circles() -> None:
    assert {top.name for top in TOPS} >= {
        "a2a_core",
        "a2a_starlette",
        "a2a_aiohttp",
        "a2a_grpc",
        "a2a_bridges",
        "a2aserve_redis",
        "a2a_sql",
    }
    # The check sees through the lazy and type-only imports it is meant to catch.
    graph = _package_graph(next(top for top in TOPS if top.name == "a2a_core"))
    assert "a2a_core.server._writes" in graph["a2a_core.server._runtime"]


def test_importing_the_server_loads_no_weight_it_does_not_need() -> None:
    # httpx (webhooks, key sets), PyJWT and cryptography (JWT verifiers, push secrets) and
    # importlib.metadata (the version) are loaded when a feature first needs them, not by
    # `import a2a_core.server`: together they were a third of its import time.
    script = (
        "import sys, a2a_core.server\n"
        "heavy = ('httpx', 'importlib.metadata', 'jwt', 'cryptography')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == ""
