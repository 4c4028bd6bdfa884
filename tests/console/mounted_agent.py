"""A FastAPI app with an A2A agent mounted at /agents/notes, console on, and a card with
the faults the console's findings report (a skill without tags, a provider without a URL,
an input mode that is not text, markup in a skill's description). Run by the browser tests: ``python mounted_agent.py
--port N``."""

from __future__ import annotations

import argparse

import uvicorn
from fastapi import FastAPI

from a2a_core.server import A2AServer, TaskContext
from a2a_core.types import AgentCapabilities, AgentCard, AgentProvider, AgentSkill
from a2a_starlette import A2AStarlette


async def notes(ctx: TaskContext) -> str:
    return f"noted: {ctx.text}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    card = AgentCard(
        name="Notes",
        description="Takes notes.",
        supported_interfaces=[],
        version="0.1.0",
        provider=AgentProvider(organization="Example", url=""),
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["application/json"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="note",
                name="Note",
                # Markup in a card is the agent's to write: the console shows it as text.
                description='Keeps a note. <img src=x onerror="window.pwned=1">',
                tags=[],
            )
        ],
    )
    server = A2AServer(
        notes, card=card, base_url=f"http://127.0.0.1:{port}/agents/notes", console=True
    )
    app = FastAPI()
    A2AStarlette(server).mount(app, "/agents/notes")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
