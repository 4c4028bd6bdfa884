"""Test helpers shipped with the core, so users can fuzz their own agents and transports.

Install with the ``testing`` extra (``a2aserve-core[testing]``), which brings hypothesis.
"""

from .strategies import json_values, messages, parts, strategy_for, tasks

__all__ = ["json_values", "messages", "parts", "strategy_for", "tasks"]
