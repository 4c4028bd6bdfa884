"""The API reference (docs/api/) documents every public name of every public module.

A module is public when no part of its dotted name starts with an underscore; its public
names are its ``__all__``, or, without one, the classes and functions it defines whose names
do not start with one. Each must be shown by some ``automodule`` of docs/api/ (in an ``eval-rst`` block: autodoc
writes reST): as a public
name of the documented module (the same object), or in its ``:members:`` list. The Alembic
environment of the SQL package (``a2a_sql.migrations``) is a script Alembic runs, not API.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import tomllib
from types import ModuleType

from helpers.doc_blocks import ROOT

AUTOMODULE = re.compile(
    r"```\{eval-rst\}\n\.\. automodule:: (?P<module>\S+)\n(?P<options>(?: +:[^\n]*\n)*)```"
)
NOT_API = ("a2a_sql.migrations",)


def _public(module: ModuleType) -> dict[str, object]:
    names = getattr(module, "__all__", None)
    if names is not None:
        return {name: getattr(module, name) for name in names}
    return {
        name: value
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == module.__name__
    }


def _documented() -> set[tuple[str, int]]:
    """(name, id of the object) of everything an automodule of docs/api/ shows."""
    shown: set[tuple[str, int]] = set()
    for page in (ROOT / "docs" / "api").glob("*.md"):
        for match in AUTOMODULE.finditer(page.read_text()):
            module = importlib.import_module(match.group("module"))
            members = re.search(r"^ +:members:(.*)$", match.group("options"), re.MULTILINE)
            assert members is not None, f"{page.name}: {module.__name__} without :members:"
            listed = members.group(1).strip()
            names = listed.split(", ") if listed else list(_public(module))
            shown |= {(name, id(getattr(module, name))) for name in names}
    return shown


def _modules() -> list[str]:
    found = []
    for path in sorted((ROOT / "packages").glob("*/pyproject.toml")):
        data = tomllib.loads(path.read_text())
        top = data["tool"]["uv"]["build-backend"]["module-name"]
        package = importlib.import_module(top)
        found.append(top)
        found += [info.name for info in pkgutil.walk_packages(package.__path__, f"{top}.")]
    return [
        name
        for name in found
        if not any(part.startswith("_") for part in name.split("."))
        and not name.startswith(NOT_API)
    ]


def test_every_public_name_is_in_the_api_reference() -> None:
    shown = _documented()
    missing = [
        f"{module}.{name}"
        for module in _modules()
        for name, value in _public(importlib.import_module(module)).items()
        if not inspect.ismodule(value) and (name, id(value)) not in shown
    ]
    assert not missing, "add these to a page of docs/api/: " + ", ".join(missing)


def test_every_api_page_is_in_the_table_of_contents() -> None:
    index = (ROOT / "docs" / "api" / "index.md").read_text()
    for page in (ROOT / "docs" / "api").glob("*.md"):
        if page.name != "index.md":
            assert f"\n{page.stem}\n" in index, page.name
