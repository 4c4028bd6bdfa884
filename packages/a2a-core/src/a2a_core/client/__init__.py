"""Calling A2A agents: the async `A2AClient`, and the sans-IO protocol beneath it.

``A2AClient.connect(url)`` reads the agent's card, picks the interface (JSON-RPC or
HTTP+JSON, v1.0 or v0.3), and offers every operation in the v1.0 model whatever the agent
speaks::

    async with await A2AClient.connect("http://127.0.0.1:8000") as agent:
        task = await agent.send("hello")
        async for received in agent.stream("tell me more", context_id=task.context_id):
            print(received.event)

The protocol half is pure (no I/O, no clock): `build_request` turns a v1.0 request into the
`HttpRequest` an interface expects, `read_reply` and `StreamDecoder` (gRPC:
`read_grpc_reply`, `read_grpc_event`) turn what comes back into v1.0 values or an
`AgentError`, `parse_card` and `choose_interface` read a card. Use them to call agents over
another HTTP stack, or to test one; `apply_credentials` and `TokenSource` put the caller's
credentials where the card asks (`refuse_unsafe_headers` refuses a value that would break
its header), and `CredentialPolicy` says where they may go, for a
transport of your own (``a2aserve-grpc``'s is one).
"""

from a2a_core._protocol.client import (
    AgentError,
    ClientError,
    Endpoint,
    InvalidReplyError,
    NotInDialectError,
    NoUsableInterfaceError,
    ReceivedEvent,
    StreamDecoder,
    build_request,
    choose_interface,
    grpc_error,
    parse_card,
    read_error,
    read_grpc_event,
    read_grpc_reply,
    read_reply,
    request_url,
)
from a2a_core.client._auth import (
    AppliedCredentials,
    Credentials,
    OAuthClientCredentials,
    TokenSource,
    apply_credentials,
    refuse_unsafe_headers,
)
from a2a_core.client._cards import CardCache, card_url_for, fetch_card
from a2a_core.client._client import A2AClient
from a2a_core.client._errors import CardError, CredentialRefusedError, TransportError
from a2a_core.client._origins import CredentialPolicy
from a2a_core.client._retry import RetryPolicy

__all__ = [
    "A2AClient",
    "AgentError",
    "AppliedCredentials",
    "CardCache",
    "CardError",
    "ClientError",
    "CredentialPolicy",
    "CredentialRefusedError",
    "Credentials",
    "Endpoint",
    "InvalidReplyError",
    "NoUsableInterfaceError",
    "NotInDialectError",
    "OAuthClientCredentials",
    "ReceivedEvent",
    "RetryPolicy",
    "StreamDecoder",
    "TokenSource",
    "TransportError",
    "apply_credentials",
    "build_request",
    "card_url_for",
    "choose_interface",
    "fetch_card",
    "grpc_error",
    "parse_card",
    "read_grpc_event",
    "read_grpc_reply",
    "refuse_unsafe_headers",
    "read_error",
    "read_reply",
    "request_url",
]
