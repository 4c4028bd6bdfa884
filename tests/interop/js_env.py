"""``node`` next to an installed ``@a2a-js/sdk`` (and express), for the interop tests.

:func:`install_js_sdk` installs the SDK with ``npm ci`` from the committed
``js/package.json`` and ``js/package-lock.json`` into a folder of the pytest cache named
after a hash of both (so later sessions reuse it; a new lock file gets a new folder), and
copies every ``js/*.mjs`` script next to its ``node_modules`` (ES modules resolve packages
from the script's folder). The scripts: ``client.mjs`` and ``push_bodies.mjs`` (the JS client,
``test_sdk_js.py``) and ``server.mjs`` (a JS server, the ``js_peer`` fixture).

The ``js_sdk`` fixture (``tests/interop/conftest.py``) calls it once a session. Without
``node`` (20 or newer) and ``npm`` it skips; a failing ``npm ci`` fails.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["JS_DIR", "MANIFESTS", "Node", "install_js_sdk", "locked_version"]

JS_DIR = Path(__file__).with_name("js")
MANIFESTS = ("package.json", "package-lock.json")


def locked_version(package: str) -> str:
    """The version of ``package`` the committed lock file pins."""
    lock = json.loads((JS_DIR / "package-lock.json").read_text())
    return str(lock["packages"][f"node_modules/{package}"]["version"])


def _node_major(node: str) -> int | None:
    try:
        version = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
        return int(version.lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


@dataclass(frozen=True)
class Node:
    """Where the scripts run next to an installed ``@a2a-js/sdk``."""

    node: str
    home: Path

    def command(self, script: str, *args: str) -> list[str]:
        return [self.node, str(self.home / script), *args]


def install_js_sdk(config: pytest.Config) -> Node:
    """``node`` and a folder holding ``@a2a-js/sdk`` (installed once per lock file) and a
    copy of every ``js/*.mjs``; ``pytest.skip`` without node/npm, ``pytest.fail`` when
    ``npm ci`` fails."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("the @a2a-js/sdk interop tests need node and npm on PATH (not found)")
    major = _node_major(node)
    if major is None or major < 20:
        pytest.skip(f"the @a2a-js/sdk interop tests need node >= 20 ({node} is {major})")
    key = hashlib.sha256(b"".join((JS_DIR / name).read_bytes() for name in MANIFESTS))
    cache = getattr(config, "cache", None)  # absent with -p no:cacheprovider
    if cache is None:
        root = Path(config.rootpath, ".pytest_cache", "d", "a2a-js-sdk")
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = cache.mkdir("a2a-js-sdk")
    home = root / key.hexdigest()[:16]
    if not (home / ".installed").exists():
        staging = root / f"{home.name}.{os.getpid()}.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        for name in MANIFESTS:
            shutil.copyfile(JS_DIR / name, staging / name)
        try:
            subprocess.run(
                [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=staging,
                capture_output=True,
                text=True,
                timeout=300,
                check=True,
            )
        except subprocess.CalledProcessError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            output = (exc.stderr or exc.stdout or "").strip()[-3000:]
            pytest.fail(
                f"npm ci of {JS_DIR} failed (exit {exc.returncode}):\n{output}", pytrace=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            shutil.rmtree(staging, ignore_errors=True)
            pytest.fail(f"npm ci of {JS_DIR} failed: {exc}", pytrace=False)
        (staging / ".installed").touch()
        shutil.rmtree(home, ignore_errors=True)
        with contextlib.suppress(OSError):  # another session may have won the race
            staging.rename(home)
        shutil.rmtree(staging, ignore_errors=True)
    # ES modules resolve packages from the script's folder: run copies next to node_modules.
    for script in sorted(JS_DIR.glob("*.mjs")):
        copy = home / f"{script.name}.{os.getpid()}.tmp"
        shutil.copyfile(script, copy)
        copy.replace(home / script.name)
    return Node(node, home)
