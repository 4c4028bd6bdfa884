"""Bridges: serve agents written for other frameworks on the a2aserve A2A server.

One module per framework, each behind the extra of the same name, each turning the
framework's agent into the agent `A2AServer(agent, card=...)` takes, with a card helper:

- `a2a_bridges.sdk` (``[sdk]``): any a2a-sdk 1.x ``AgentExecutor``, Google ADK's among them;
- `a2a_bridges.pydantic_ai` (``[pydantic-ai]``): a pydantic-ai ``Agent``;
- `a2a_bridges.langgraph` (``[langgraph]``): a compiled LangGraph graph.

Importing this package imports no framework; each module imports its own.
"""

from importlib.metadata import version as _version

__version__: str = _version("a2aserve-bridges")

__all__ = ["__version__"]
