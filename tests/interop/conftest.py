"""Interop suites run on asyncio only: uvicorn and the official client are asyncio-bound.

The session fixtures below prepare the other SDKs once a session, for every interop module:
``sdk_v0_3_python`` (a venv with a2a-sdk 0.3.x, ``sdk_v0_3_env.py``) and ``js_sdk`` (node
next to an installed ``@a2a-js/sdk``, ``js_env.py``). The fixtures of ``peers/fixtures.py``
(the official servers as peers of our client: ``sdk_v1_peer``, ``sdk_v0_3_peer``,
``js_peer``, ``peer``) are imported here, for every module under ``tests/interop/``.
"""

from __future__ import annotations

import pytest

from interop.js_env import Node, install_js_sdk
from interop.peers.fixtures import js_peer, peer, sdk_v0_3_peer, sdk_v1_peer
from interop.sdk_v0_3_env import sdk_v0_3_python as _sdk_v0_3_python

# The SDK v1 suites' shared checks, with pytest's assertion messages.
pytest.register_assert_rewrite("interop.sdk_v1_helpers")

__all__ = ["js_peer", "js_sdk", "peer", "sdk_v0_3_peer", "sdk_v0_3_python", "sdk_v1_peer"]


@pytest.fixture
def anyio_backend() -> str:
    """The event loop each ``@pytest.mark.anyio`` test runs on."""
    return "asyncio"


@pytest.fixture(scope="session")
def sdk_v0_3_python(request: pytest.FixtureRequest) -> str:
    """The python of a venv holding the newest a2a-sdk 0.3.x (created once, then reused)."""
    return _sdk_v0_3_python(request.config)


@pytest.fixture(scope="session")
def js_sdk(request: pytest.FixtureRequest) -> Node:
    """``node`` and a folder holding ``@a2a-js/sdk`` and a copy of ``js/*.mjs``."""
    return install_js_sdk(request.config)
