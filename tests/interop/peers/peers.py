"""Start an official A2A server (a "peer") as a subprocess on 127.0.0.1, for our client's tests.

Each peer is one program serving the same agent (``README.md`` of this folder):

- ``sdk_v1``: ``sdk_v1_server.py`` on the dev group's ``a2a-sdk`` 1.x (v1.0, JSON-RPC + REST);
- ``sdk_v0_3``: ``sdk_v0_3_server.py`` with the python of the a2a-sdk 0.3.x venv (v0.3,
  JSON-RPC + REST);
- ``js``: ``../js/server.mjs`` under node next to ``@a2a-js/sdk`` 1.x (v1.0, JSON-RPC + REST).

The program binds a port of its own choosing and prints it (``PORT <n>``); :func:`running`
waits until its card answers 200, reads the card, yields a :class:`Peer` and stops the
process (SIGTERM, then SIGKILL) when the block ends, whatever happens in it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from helpers.processes import CARD_PATH, ServerProcess

__all__ = ["HERE", "Peer", "running"]

HERE = Path(__file__).parent
#: How long a peer may take to start (imports are slow on a busy 2-core machine).
START_TIMEOUT = 60.0


@dataclass
class Peer:
    """A running peer server."""

    name: str
    """``sdk_v1``, ``sdk_v0_3`` or ``js``."""
    sdk: str
    """The SDK and its version, e.g. ``a2a-sdk 1.3.0``."""
    protocol_version: str
    """``1.0`` or ``0.3``: the only version it speaks (no compatibility layer is enabled)."""
    base_url: str
    """``http://127.0.0.1:<port>``: the card is at ``base_url + CARD_PATH``."""
    card: dict[str, Any]
    """The card as served (parsed JSON)."""
    jsonrpc_url: str
    """The JSON-RPC interface's URL, from the card."""
    rest_url: str
    """The HTTP+JSON interface's URL, from the card (v0.3: paths go under ``/v1/``)."""
    process: ServerProcess = field(repr=False)

    @property
    def card_url(self) -> str:
        return self.base_url + CARD_PATH

    @property
    def headers(self) -> dict[str, str]:
        """Headers every request needs: ``A2A-Version: 1.0`` for the v1.0 peers (both treat
        a request without it as v0.3 and refuse it), nothing for the v0.3 one."""
        return {"A2A-Version": "1.0"} if self.protocol_version == "1.0" else {}

    def log(self) -> str:
        """What the server printed so far."""
        return self.process.output()


def interface_urls(card: dict[str, Any]) -> tuple[str, str]:
    """(JSON-RPC URL, HTTP+JSON URL) of a v1.0 or v0.3 card."""
    if "supportedInterfaces" in card:
        pairs = [(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"]]
    else:
        pairs = [(i["transport"], i["url"]) for i in card.get("additionalInterfaces", [])]
    urls = dict(reversed(pairs))  # the first of each binding
    return urls["JSONRPC"], urls["HTTP+JSON"]


@contextmanager
def running(
    name: str,
    script: Path,
    *,
    interpreter: str,
    sdk: str,
    protocol_version: str,
    log: Path,
) -> Iterator[Peer]:
    """Start ``interpreter script --port 0``, wait for its card, yield it, stop it."""
    process = ServerProcess(
        script,
        log=log,
        name=f"the {name} peer ({sdk})",
        interpreter=interpreter,
        announce=True,
        cwd=script.parent,
    )
    try:
        process.wait_ready(timeout=START_TIMEOUT)
        response = httpx.get(process.url + CARD_PATH, timeout=10)
        response.raise_for_status()
        card = json.loads(response.content)
        jsonrpc_url, rest_url = interface_urls(card)
        yield Peer(
            name=name,
            sdk=sdk,
            protocol_version=protocol_version,
            base_url=process.url,
            card=card,
            jsonrpc_url=jsonrpc_url,
            rest_url=rest_url,
            process=process,
        )
    finally:
        process.stop()
