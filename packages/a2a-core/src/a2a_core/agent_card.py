"""Serving the public agent card (L1, pure): the card's content, its bytes and its HTTP replies.

The public face of ``a2a_core.agent_card``: import these names from here.
"""

from a2a_core._protocol.agent_card import (
    DEFAULT_CARD_PATH,
    AgentCardDocument,
    AgentCardPublisher,
    CardOptions,
    ServedInterface,
    build_card,
    encode_card,
)

__all__ = [
    "DEFAULT_CARD_PATH",
    "AgentCardDocument",
    "AgentCardPublisher",
    "CardOptions",
    "ServedInterface",
    "build_card",
    "encode_card",
]
