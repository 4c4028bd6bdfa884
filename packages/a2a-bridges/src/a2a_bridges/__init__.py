"""Bridges: serve agents written for other frameworks on the a2aserve A2A server."""
