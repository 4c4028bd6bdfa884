"""The card every bridge starts from: what the framework knows, the rest our defaults."""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from typing import Any

from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

__all__ = ["agent_card", "skill", "summary"]


def summary(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line ("" without one)."""
    if not doc:
        return ""
    first = inspect.cleandoc(doc).split("\n\n", 1)[0]
    return " ".join(first.split())


def skill(name: str, description: str, *, tags: Sequence[str] = ()) -> AgentSkill:
    """A skill named ``name`` (its id the name, lower case with dashes)."""
    skill_id = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "skill"
    return AgentSkill(
        id=skill_id,
        name=name,
        description=description or name,
        tags=list(tags) or [skill_id],
    )


def agent_card(
    *,
    name: str,
    description: str,
    skills: Sequence[AgentSkill],
    streaming: bool,
    overrides: dict[str, Any],
) -> AgentCard:
    """A card from what a framework knows; ``overrides`` (any `AgentCard` field) win.

    The interfaces are left empty: the server fills them from its ``base_url``.
    """
    fields: dict[str, Any] = {
        "name": name,
        "description": description or name,
        "supported_interfaces": [],
        "version": "1.0.0",
        "capabilities": AgentCapabilities(streaming=streaming),
        "default_input_modes": ["text/plain"],
        "default_output_modes": ["text/plain"],
        "skills": list(skills),
    }
    unknown = set(overrides) - set(AgentCard.__struct_fields__)
    if unknown:
        raise TypeError(f"not a field of AgentCard: {', '.join(sorted(unknown))}")
    fields.update(overrides)
    return AgentCard(**fields)
