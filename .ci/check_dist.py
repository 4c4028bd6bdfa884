"""Check the built distributions in DIST (default dist/) against the workspace's packages.

    uv run python .ci/check_dist.py dist

For every package under packages/: one wheel and one sdist of its name and version; the
wheel's metadata carries the pyproject's name, version, summary, Requires-Python,
classifiers, dependencies and extras, the SPDX license with its license file, and a
markdown long description that renders (readme_renderer, as PyPI does); the wheel holds
every file of the package's source tree (modules, ``py.typed``, data files such as
Alembic's migrations and templates) and nothing else; the sdist holds the pyproject, the
README, the license and the same source files. Prints one line a distribution and exits 1
on the first package with a problem, after listing every problem of that package.
"""

from __future__ import annotations

import email.parser
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import readme_renderer.markdown

ROOT = Path(__file__).resolve().parents[1]


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _source_files(package: Path, module: str) -> set[str]:
    """The files git tracks under src/<module>, relative to src/ (no caches, no ignored files)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", f"src/{module}"],
        cwd=package,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {path.removeprefix("src/") for path in listed if (package / path).is_file()}


def check_package(package: Path, dist: Path) -> list[str]:
    project = tomllib.loads((package / "pyproject.toml").read_text())
    meta = project["project"]
    module = project["tool"]["uv"]["build-backend"]["module-name"]
    stem = f"{_normalized(meta['name'])}-{meta['version']}"
    problems: list[str] = []

    wheels = list(dist.glob(f"{stem}-*.whl"))
    sdist = dist / f"{stem}.tar.gz"
    if len(wheels) != 1 or not sdist.is_file():
        return [f"expected one {stem}-*.whl and {sdist.name} in {dist}"]
    wheel = wheels[0]

    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"{stem}.dist-info"
        message = email.parser.Parser().parsestr(archive.read(f"{info}/METADATA").decode())
        content = {
            name for name in names if not name.startswith(f"{info}/") and not name.endswith("/")
        }

    def expect(field: str, wanted: object, got: object) -> None:
        if wanted != got:
            problems.append(f"{wheel.name}: {field} is {got!r}, expected {wanted!r}")

    expect("Name", meta["name"], message["Name"])
    expect("Version", meta["version"], message["Version"])
    expect("Summary", meta["description"], message["Summary"])
    expect("Requires-Python", meta["requires-python"], message["Requires-Python"])
    expect("License-Expression", meta["license"], message["License-Expression"])
    expect("License-File", ["LICENSE"], message.get_all("License-File"))
    expect("Classifiers", sorted(meta["classifiers"]), sorted(message.get_all("Classifier") or []))
    expect(
        "Provides-Extra",
        sorted(meta.get("optional-dependencies", {})),
        sorted(message.get_all("Provides-Extra") or []),
    )
    requires = message.get_all("Requires-Dist") or []
    for dependency in meta["dependencies"]:
        base = dependency.split(";")[0].replace(" ", "")
        if not any(r.replace(" ", "").startswith(base) for r in requires):
            problems.append(f"{wheel.name}: Requires-Dist lacks {dependency!r}")
    if f"{info}/licenses/LICENSE" not in names:
        problems.append(f"{wheel.name}: no {info}/licenses/LICENSE")
    expect("Description-Content-Type", "text/markdown", message["Description-Content-Type"])
    description = message.get_payload()
    assert isinstance(description, str)
    if description.strip() != (package / "README.md").read_text().strip():
        problems.append(f"{wheel.name}: the long description is not the package's README.md")
    if readme_renderer.markdown.render(description) is None:
        problems.append(f"{wheel.name}: the long description does not render")

    sources = _source_files(package, module)
    for required in (f"{module}/__init__.py", f"{module}/py.typed"):
        if required not in sources:
            problems.append(f"{package.name}: the source tree has no {required}")
    expect("files", sorted(sources), sorted(content))

    with tarfile.open(sdist) as archive:
        members = {m.name.removeprefix(f"{stem}/") for m in archive.getmembers() if m.isfile()}
    wanted = {"pyproject.toml", "README.md", "LICENSE"} | {f"src/{path}" for path in sources}
    if missing := wanted - members:
        problems.append(f"{sdist.name}: lacks {sorted(missing)}")

    if not problems:
        print(
            f"{wheel.name}: {wheel.stat().st_size / 1024:.0f} KiB, {len(content)} files; "
            f"{sdist.name}: {sdist.stat().st_size / 1024:.0f} KiB; metadata and files ok"
        )
    return problems


def main() -> int:
    dist = Path(sys.argv[1] if len(sys.argv) > 1 else "dist").resolve()
    for package in sorted((ROOT / "packages").glob("*/pyproject.toml")):
        if problems := check_package(package.parent, dist):
            print("\n".join(problems), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
