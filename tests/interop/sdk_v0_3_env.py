"""A virtual environment holding the official ``a2a-sdk`` 0.3.x, for the interop tests.

The 0.3 SDK cannot live next to the 1.x one (both are ``a2a``), so a session creates a
separate virtual environment under ``.pytest_cache`` (reused by later sessions, upgraded to
the newest 0.3.x release when PyPI answers) and runs scripts with its python as
subprocesses: ``sdk_v0_3_client.py`` (the 0.3 client, ``test_sdk_v0_3.py``) and
``peers/sdk_v0_3_server.py`` (a 0.3 server, the ``sdk_v0_3_peer`` fixture). It holds the
SDK with its ``http-server`` extra, ``httpx`` and ``uvicorn``.

The ``sdk_v0_3_python`` fixture (``tests/interop/conftest.py``) calls :func:`sdk_v0_3_python`
once a session. Without network access on a machine that has no cached environment yet, it
skips with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["REQUIREMENTS", "SDK_REQUIREMENT", "sdk_v0_3_python", "sdk_version"]

SDK_REQUIREMENT = "a2a-sdk<0.4"
#: What the environment holds: the SDK (with its Starlette server), httpx and uvicorn.
REQUIREMENTS = ("a2a-sdk[http-server]<0.4", "httpx", "uvicorn")


def _venv_python(root: Path) -> Path:
    return root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def sdk_version(python: Path) -> str | None:
    """The a2a-sdk version ``python`` imports, or None (no such python, no such SDK)."""
    if not python.exists():
        return None
    check = subprocess.run(
        [
            str(python),
            "-c",
            "import a2a.client, importlib.metadata as m; print(m.version('a2a-sdk'))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return check.stdout.strip() if check.returncode == 0 else None


def sdk_v0_3_python(config: pytest.Config) -> str:
    """The python of a venv holding the newest a2a-sdk 0.3.x (created once, then reused);
    ``pytest.skip`` when it cannot be created."""
    cache = getattr(config, "cache", None)  # absent with -p no:cacheprovider
    if cache is None:
        root = Path(config.rootpath, ".pytest_cache", "d", "a2a-sdk-v0_3")
    else:
        root = cache.mkdir("a2a-sdk-v0_3")
    venv = root / "venv"
    python = _venv_python(venv)
    uv = shutil.which("uv")
    problem = ""
    try:
        if sdk_version(python) is None:
            shutil.rmtree(venv, ignore_errors=True)
            create = (
                [uv, "venv", "--quiet", "--python", sys.executable, str(venv)]
                if uv
                else [sys.executable, "-m", "venv", str(venv)]
            )
            subprocess.run(create, capture_output=True, text=True, timeout=120, check=True)
        # Every session: upgrade to the newest 0.3.x (a no-op when it is there already).
        install = (
            [uv, "pip", "install", "--quiet", "--python", str(python), "--upgrade"]
            if uv
            else [str(python), "-m", "pip", "install", "--quiet", "--upgrade"]
        )
        subprocess.run(
            [*install, *REQUIREMENTS],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
    except subprocess.CalledProcessError as exc:
        problem = (exc.stderr or exc.stdout or str(exc)).strip()[-500:]
    except (OSError, subprocess.TimeoutExpired) as exc:
        problem = str(exc)
    version = sdk_version(python)
    if version is None:
        pytest.skip(
            f"could not create a virtual environment with {SDK_REQUIREMENT!r} in {venv} "
            f"(is PyPI reachable?): {problem}"
        )
    assert version.startswith("0.3."), version
    return str(python)
