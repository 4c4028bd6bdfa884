"""Fixtures starting the official A2A servers ("peers") for the tests of our client.

``tests/interop/conftest.py`` imports them, so every test under ``tests/interop/`` can ask
for them; a ``conftest.py`` elsewhere can import them the same way (together with
``sdk_v0_3_python`` and ``js_sdk``, which they use). Each is session-scoped: the server starts the first time a test asks for it and stops at
the end of the session (or when its start fails), and yields a :class:`~interop.peers.peers.Peer`
(``.base_url``, ``.card``, ``.jsonrpc_url``, ``.rest_url``, ``.headers``,
``.protocol_version``, ``.sdk``, ``.log()``):

- ``sdk_v1_peer``: ``a2a-sdk`` 1.x of the dev group, v1.0;
- ``sdk_v0_3_peer``: ``a2a-sdk`` 0.3.x in its own venv, v0.3 (skipped as
  ``test_sdk_v0_3.py`` is when the venv cannot be built);
- ``js_peer``: ``@a2a-js/sdk`` 1.x under node, v1.0 (skipped without node/npm, as
  ``test_sdk_js.py`` is);
- ``peer``: parametrized over the three (ids ``sdk_v1``, ``sdk_v0_3``, ``js``).
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from interop.js_env import Node, locked_version
from interop.peers.peers import HERE, Peer, running
from interop.sdk_v0_3_env import sdk_version

PEERS = ("sdk_v1", "sdk_v0_3", "js")


@pytest.fixture(scope="session")
def sdk_v1_peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    """``sdk_v1_server.py`` (a2a-sdk 1.x, v1.0: JSON-RPC at /jsonrpc, REST under /rest)."""
    sdk = f"a2a-sdk {importlib.metadata.version('a2a-sdk')}"
    log = tmp_path_factory.mktemp("peer-sdk_v1") / "server.log"
    with running(
        "sdk_v1",
        HERE / "sdk_v1_server.py",
        interpreter=sys.executable,
        sdk=sdk,
        protocol_version="1.0",
        log=log,
    ) as peer:
        yield peer


@pytest.fixture(scope="session")
def sdk_v0_3_peer(sdk_v0_3_python: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    """``sdk_v0_3_server.py`` (a2a-sdk 0.3.x, v0.3: JSON-RPC at /jsonrpc, REST under /rest)."""
    check = subprocess.run(
        [sdk_v0_3_python, "-c", "import uvicorn, starlette, sse_starlette"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if check.returncode != 0:
        pytest.skip(
            f"the a2a-sdk 0.3 venv ({sdk_v0_3_python}) has no server dependencies "
            f"(could it be upgraded?): {check.stderr.strip()[-300:]}"
        )
    sdk = f"a2a-sdk {sdk_version(Path(sdk_v0_3_python))}"
    log = tmp_path_factory.mktemp("peer-sdk_v0_3") / "server.log"
    with running(
        "sdk_v0_3",
        HERE / "sdk_v0_3_server.py",
        interpreter=sdk_v0_3_python,
        sdk=sdk,
        protocol_version="0.3",
        log=log,
    ) as peer:
        yield peer


@pytest.fixture(scope="session")
def js_peer(js_sdk: Node, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    """``js/server.mjs`` (@a2a-js/sdk 1.x, v1.0: JSON-RPC at /jsonrpc, REST under /rest)."""
    sdk = f"@a2a-js/sdk {locked_version('@a2a-js/sdk')}"
    log = tmp_path_factory.mktemp("peer-js") / "server.log"
    with running(
        "js",
        js_sdk.home / "server.mjs",
        interpreter=js_sdk.node,
        sdk=sdk,
        protocol_version="1.0",
        log=log,
    ) as peer:
        yield peer


@pytest.fixture(params=PEERS)
def peer(request: pytest.FixtureRequest) -> Peer:
    """Each of the three peers in turn."""
    started: Peer = request.getfixturevalue(f"{request.param}_peer")
    return started
