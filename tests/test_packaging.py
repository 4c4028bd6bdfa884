"""Every package declares the Pythons it supports, and the suite runs only on those."""

from __future__ import annotations

import importlib
import re
import sys
import tomllib
from pathlib import Path

import pytest

PACKAGES = sorted((Path(__file__).parents[1] / "packages").glob("*/pyproject.toml"))
PREFIX = "Programming Language :: Python :: "


def _project(path: Path) -> dict[str, object]:
    project = tomllib.loads(path.read_text())["project"]
    assert isinstance(project, dict)
    return project


def _declared_versions(project: dict[str, object]) -> list[tuple[int, int]]:
    classifiers = project["classifiers"]
    assert isinstance(classifiers, list)
    found = (re.fullmatch(r"3\.(\d+)", c.removeprefix(PREFIX)) for c in classifiers)
    return sorted((3, int(m.group(1))) for m in found if m)


def test_every_package_is_found() -> None:
    names = {path.parent.name for path in PACKAGES}
    # The folders keep their names whatever the distributions are called.
    assert names == {  # folders
        "a2a-core",
        "a2a-starlette",
        "a2a-aiohttp",
        "a2a-grpc",
        "a2a-bridges",
        "a2a-redis",
        "a2a-sql",
    }


@pytest.mark.parametrize("path", PACKAGES, ids=lambda path: path.parent.name)
def test_classifiers_match_requires_python(path: Path) -> None:
    project = _project(path)
    classifiers = project["classifiers"]
    assert isinstance(classifiers, list)
    assert PREFIX + "3" in classifiers
    assert PREFIX + "3 :: Only" in classifiers
    versions = _declared_versions(project)
    # From the floor of requires-python, every minor version up to the newest declared.
    assert project["requires-python"] == ">=3.11"
    assert versions == [(3, minor) for minor in range(11, versions[-1][1] + 1)]
    assert versions[-1] >= (3, 13)


@pytest.mark.parametrize("path", PACKAGES, ids=lambda path: path.parent.name)
def test_the_running_python_is_declared(path: Path) -> None:
    # CI runs the suite on each declared version; running it on another means declaring it.
    assert sys.version_info[:2] in _declared_versions(_project(path))


ROOT = Path(__file__).parents[1]


@pytest.mark.parametrize("path", PACKAGES, ids=lambda path: path.parent.name)
def test_each_package_ships_its_license_and_readme(path: Path) -> None:
    project = _project(path)
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert (path.parent / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
    # The README is the long description on the index: it starts with the distribution name.
    readme = (path.parent / str(project["readme"])).read_text()
    assert readme.startswith(f"# {project['name']}\n\n")
    assert "](../" not in readme  # relative links break once published


@pytest.mark.parametrize("path", PACKAGES, ids=lambda path: path.parent.name)
def test_the_version_is_in_one_place(path: Path) -> None:
    # [project] version is the one place; __version__ reads it from the installed metadata.
    project = _project(path)
    module_name = tomllib.loads(path.read_text())["tool"]["uv"]["build-backend"]["module-name"]
    init = (path.parent / "src" / module_name / "__init__.py").read_text()
    assert f'__version__: str = _version("{project["name"]}")' in init
    sources = (path.parent / "src" / module_name).rglob("*.py")
    for source in sources:
        assert f'"{project["version"]}"' not in source.read_text(), source
    module = importlib.import_module(module_name)
    assert module.__version__ == project["version"]
