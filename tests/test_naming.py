"""Our distribution and import names are ours: none is on the list of names known to be
taken (taken-names.toml at the root), and all the distributions share one family."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGES = sorted((ROOT / "packages").glob("*/pyproject.toml"))
TAKEN = tomllib.loads((ROOT / "taken-names.toml").read_text())
#: The family: every distribution is a2aserve-<what>; the names of the packages other
#: issues will bring (gRPC, OpenTelemetry) are kept for them.
FAMILY = "a2aserve-"
RESERVED = ("a2aserve-grpc", "a2aserve-otel")


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


TAKEN_DISTRIBUTIONS = {normalized(entry["name"]) for entry in TAKEN["distribution"]}
TAKEN_IMPORTS = {entry["name"] for entry in TAKEN["import"]}


def _pyproject(path: Path) -> dict[str, object]:
    return tomllib.loads(path.read_text())


def _module(path: Path) -> str:
    data = _pyproject(path)
    name = data["tool"]["uv"]["build-backend"]["module-name"]  # type: ignore[index]
    assert isinstance(name, str)
    return name


def test_every_taken_name_says_where_it_was_found() -> None:
    for entry in [*TAKEN["distribution"], *TAKEN["import"]]:
        assert entry["name"] and entry["what"] and entry["found"], entry


@pytest.mark.parametrize("path", PACKAGES, ids=lambda path: path.parent.name)
def test_the_distribution_name_is_not_taken(path: Path) -> None:
    name = _pyproject(path)["project"]["name"]  # type: ignore[index]
    assert isinstance(name, str)
    assert normalized(name) not in TAKEN_DISTRIBUTIONS
    assert normalized(name).startswith(FAMILY)


@pytest.mark.parametrize("path", PACKAGES, ids=lambda path: path.parent.name)
def test_the_import_names_are_not_taken(path: Path) -> None:
    module = _module(path)
    assert module not in TAKEN_IMPORTS
    # The wheel holds exactly one top-level package: the declared one.
    top_level = {p.name for p in (path.parent / "src").iterdir() if p.name != "__pycache__"}
    assert top_level == {module}
    assert (path.parent / "src" / module / "py.typed").is_file()


def test_the_reserved_names_are_of_the_family_and_not_taken() -> None:
    for name in RESERVED:
        assert name.startswith(FAMILY)
        assert normalized(name) not in TAKEN_DISTRIBUTIONS


def test_the_root_depends_on_the_workspace_names() -> None:
    root = _pyproject(ROOT / "pyproject.toml")
    sources = root["tool"]["uv"]["sources"]  # type: ignore[index]
    names = {_pyproject(path)["project"]["name"] for path in PACKAGES}  # type: ignore[index]
    assert set(sources) == names
