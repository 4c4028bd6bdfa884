"""L0 and L1 stay pure: no event loop, no web framework, no clock, no logging setup.

Two checks, so that neither an indirect import nor a lazy one inside a function slips by:
the source of every pure module is scanned for forbidden imports and calls, and importing
all of them in a fresh interpreter must leave the forbidden modules unloaded.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import a2a_core

PACKAGE_ROOT = Path(a2a_core.__file__).parent
# The layers are folders. L0 and L1 are the wire model (`types`, `compat`), the protocol
# (`_protocol`), the test strategies (`testing`) and the modules at the top of the package,
# which are the faces users import. L2 is every other folder (`server`, `auth`, `otel`,
# `client`, `cli`): a pure module is found by where it is, with no list of exceptions.
PURE_FOLDERS = ("types", "compat", "_protocol", "testing")
FORBIDDEN_MODULES = {
    "asyncio",
    "anyio",
    "trio",
    "starlette",
    "aiohttp",
    "socket",
    "logging.config",
    "threading",
}
# The standard library loads `socket` and `threading` on its own (importlib.metadata does), so
# the fresh-interpreter check looks only for the event loops and frameworks.
NEVER_LOADED = {"asyncio", "anyio", "trio", "starlette", "aiohttp"}
FORBIDDEN_CALLS = {
    ("time", "time"),
    ("time", "monotonic"),
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("date", "today"),
    ("logging", "basicConfig"),
}


def _pure_modules() -> list[Path]:
    top = list(PACKAGE_ROOT.glob("*.py"))
    nested = [path for folder in PURE_FOLDERS for path in (PACKAGE_ROOT / folder).rglob("*.py")]
    return sorted(top + nested)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_pure_modules_are_found() -> None:
    names = {_module_name(p) for p in _pure_modules()}
    assert {"a2a_core.types", "a2a_core.codec", "a2a_core._protocol.server"} <= names
    assert {"a2a_core.types._base", "a2a_core.compat.v0_3.convert", "a2a_core.testing"} <= names
    # The client's protocol is pure too; its async client and the command line are L2.
    assert {"a2a_core._protocol.client.requests", "a2a_core.__main__"} <= names
    every = {_module_name(p) for p in PACKAGE_ROOT.rglob("*.py")}
    # What is not pure is in an L2 folder of its own.
    assert {name.split(".")[1] for name in every - names} == {
        "server",
        "auth",
        "otel",
        "client",
        "cli",
    }


@pytest.mark.parametrize("path", _pure_modules(), ids=_module_name)
def test_source_has_no_forbidden_imports_or_calls(path: Path) -> None:
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            names = []
        for name in names:
            top = {name, name.split(".")[0]}
            assert not top & FORBIDDEN_MODULES, f"{path.name}:{node.lineno} imports {name}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            owner_name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
            call = (owner_name.lstrip("_").removeprefix("dt"), node.func.attr)
            assert call not in FORBIDDEN_CALLS, f"{path.name}:{node.lineno} calls {call}"


def test_importing_the_pure_core_loads_no_forbidden_module() -> None:
    modules = [_module_name(p) for p in _pure_modules()]
    script = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in modules)
        + f"bad = sorted(m for m in {sorted(NEVER_LOADED)!r} if m in sys.modules)\n"
        + "print(','.join(bad))\n"
    )
    # Hypothesis (`testing`) runs the plugins other installed packages register for it on
    # import, and trio registers one: that is the environment's doing, not ours.
    env = {**os.environ, "HYPOTHESIS_NO_PLUGINS": "1"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    )
    assert result.stdout.strip() == ""
