"""The card cache holds cards within a bound in entries and in bytes."""

from __future__ import annotations

import json

from a2a_core.client import CardCache, parse_card
from a2a_core.client._cards import _Entry
from client.raw_agent import v1_card


def test_the_card_cache_is_bounded_in_entries_and_bytes() -> None:

    card = parse_card(json.dumps(v1_card("http://agent.test/rpc")).encode())
    cache = CardCache(max_entries=3, max_bytes=1000)
    for i in range(5):
        cache.put(f"u{i}", _Entry(None, None, b"x" * 300, card))
    assert len(cache) == 3 and cache.size_bytes == 900
    assert cache.get("u0") is None and cache.get("u4") is not None
    cache.put("u5", _Entry(None, None, b"x" * 600, card))  # 900 + 600 > 1000: two go
    assert cache.size_bytes == 900 and cache.get("u3") is None
    cache.put("huge", _Entry(None, None, b"x" * 2000, card))  # never kept
    assert cache.get("huge") is None and cache.size_bytes == 900
    cache.put("u5", _Entry(None, None, b"x" * 100, card))  # replaced, not counted twice
    assert cache.size_bytes == 400
