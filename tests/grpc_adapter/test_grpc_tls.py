"""gRPC over TLS, and mutual TLS: the client certificate is the caller's identity, as on HTTP.

The CA, server and client certificates are the mTLS suite's (``adapters/test_mtls.py``); the
client is ours, given channel credentials.
"""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from a2a_core.auth import ClientCertificate
from a2a_core.client import A2AClient, AgentError, Endpoint, TransportError
from a2a_core.server import A2AServer, InputRequired
from a2a_grpc import GrpcServer
from adapters.test_mtls import mtls_card, pki

__all__ = ["pki"]

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def channel_credentials(pki: Path, who: str | None) -> grpc.ChannelCredentials:
    ca = (pki / "ca.crt").read_bytes()
    if who is None:
        return grpc.ssl_channel_credentials(root_certificates=ca)
    return grpc.ssl_channel_credentials(
        root_certificates=ca,
        private_key=(pki / f"{who}.key").read_bytes(),
        certificate_chain=(pki / f"{who}.crt").read_bytes(),
    )


async def test_client_certificates_are_identities_over_grpc(pki: Path) -> None:
    server = A2AServer(
        lambda ctx: InputRequired("more?"),
        card=mtls_card(),
        base_url="https://127.0.0.1",
        authenticators={"cert": ClientCertificate()},
    )
    credentials = grpc.ssl_server_credentials(
        [((pki / "server.key").read_bytes(), (pki / "server.crt").read_bytes())],
        root_certificates=(pki / "ca.crt").read_bytes(),
        # grpc's Python server requires a client certificate or asks for none: a client
        # without one is refused by the TLS handshake, before any A2A exchange.
        require_client_auth=True,
    )
    async with GrpcServer(server, credentials=credentials) as grpc_server:
        endpoint = Endpoint(grpc_server.address, "grpc", "1.0")

        def client(who: str | None) -> A2AClient:
            return A2AClient(endpoint, grpc_credentials=channel_credentials(pki, who))

        async with client("alice") as alice, client("bob") as bob, client(None) as anonymous:
            with pytest.raises(TransportError) as refused:
                await anonymous.send("hello")
            task = await alice.send("hello")
            assert (await alice.get_task(task.id)).id == task.id
            with pytest.raises(AgentError) as other:
                await bob.get_task(task.id)  # bob's certificate is another owner
        stored = await server.backend.store.get(task.id)
    assert "UNAVAILABLE" in str(refused.value)
    assert other.value.reason == "TASK_NOT_FOUND"
    assert stored is not None and "CN=alice" in stored.owner


async def test_a_plaintext_client_cannot_talk_to_a_tls_server(pki: Path) -> None:
    server = A2AServer(lambda ctx: "hi", card=mtls_card(), base_url="https://127.0.0.1")
    credentials = grpc.ssl_server_credentials(
        [((pki / "server.key").read_bytes(), (pki / "server.crt").read_bytes())]
    )
    async with (
        GrpcServer(server, credentials=credentials) as grpc_server,
        A2AClient(Endpoint(grpc_server.address, "grpc", "1.0"), timeout=2) as client,
    ):
        with pytest.raises(TransportError, match="UNAVAILABLE"):
            await client.send("hello")
