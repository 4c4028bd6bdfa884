"""The async client's own failures, beside the protocol's (`a2a_core.client`)."""

from __future__ import annotations

from a2a_core._protocol.client import ClientError

__all__ = ["CardError", "CredentialRefusedError", "TransportError"]


class TransportError(ClientError):
    """No reply was had: the connection failed, was cut, or timed out (after the retries
    the policy allows, and a stream's resumes)."""


class CardError(ClientError):
    """The agent card could not be had: not found (``status`` 404), not a card, or its
    signature does not verify."""

    status: int | None

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class CredentialRefusedError(ClientError):
    """The client refused to send a credential where it would leak: over plain http off
    loopback, or to an origin the caller did not connect to (the message says which, and
    how to allow it). Raised before anything is sent; the message never holds the value."""
