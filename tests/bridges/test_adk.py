"""A framework that serves A2A through the SDK's ``AgentExecutor`` interface, through
`from_executor`: Google ADK's own ``A2aAgentExecutor`` running an ``LlmAgent`` on a fake
model (no network), served on both adapters and driven by the official client.

(Strands and CrewAI implement the same interface, but their A2A extras require a2a-sdk 0.3,
which cannot be installed beside the 1.x SDK the bridge is written for.)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import anyio
import pytest
from a2a.types.a2a_pb2 import StreamResponse, TaskState
from google.adk.a2a.executor.a2a_agent_executor import A2aAgentExecutor
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from a2a_bridges.sdk import card, from_executor
from bridges.harness import artifact_text, served, status_text

pytestmark = [
    pytest.mark.anyio,
    # ADK says, once, that its A2A support is experimental.
    pytest.mark.filterwarnings("ignore:.*EXPERIMENTAL.*:UserWarning"),
]


class EchoModel(BaseLlm):
    """Answers with the user's turns so far (so a second turn shows the first)."""

    model: str = "echo"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        said = [
            part.text or ""
            for content in llm_request.contents
            if content.role == "user"
            for part in content.parts or []
            if part.text
        ]
        text = "You said: " + " / ".join(said)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


class SlowModel(BaseLlm):
    """Thinks forever, counting its steps, until it is cancelled."""

    model: str = "slow"
    steps: int = 0
    cancelled: bool = False

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        try:
            while True:
                self.steps += 1
                await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        yield LlmResponse()  # never reached: makes this an async generator


class BrokenModel(BaseLlm):
    model: str = "broken"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        raise RuntimeError("model backend exploded")
        yield LlmResponse()  # never reached: makes this an async generator


def adk_executor(model: BaseLlm) -> A2aAgentExecutor:
    agent = LlmAgent(name="echo_agent", model=model, instruction="Echo the user.")
    runner = Runner(app_name="echo", agent=agent, session_service=InMemorySessionService())
    return A2aAgentExecutor(runner=runner)


CARD = card("ADK echo", "An ADK agent that echoes.")


async def test_adk_answers_a_blocking_send(adapter: str) -> None:
    async with served(
        adapter, from_executor(adk_executor(EchoModel())), CARD, streaming=False
    ) as peer:
        task = (await peer.send("hello")).task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(task) == "You said: hello"


async def test_adk_streams_its_task(adapter: str) -> None:
    async with served(adapter, from_executor(adk_executor(EchoModel())), CARD) as peer:
        events = [e async for e in peer.stream("hi there")]
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task"
    assert "artifact_update" in kinds
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert "".join(p.text for c in chunks for p in c.artifact.parts) == "You said: hi there"


async def test_adk_keeps_the_session_per_context(adapter: str) -> None:
    bridge = from_executor(adk_executor(EchoModel()))
    async with served(adapter, bridge, CARD, streaming=False) as peer:
        first = (await peer.send("one")).task
        second = (await peer.send("two", context_id=first.context_id)).task
    assert second.id != first.id
    assert artifact_text(second) == "You said: one / two"


async def test_cancel_stops_the_adk_run(adapter: str) -> None:
    model = SlowModel()
    async with served(adapter, from_executor(adk_executor(model)), CARD) as peer:
        events: list[StreamResponse] = []

        async def follow() -> None:
            async for event in peer.stream("think"):
                events.append(event)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(follow)
            with anyio.fail_after(10):
                while model.steps < 2 or not events:
                    await anyio.sleep(0.01)
            canceled = await peer.cancel(events[0].task.id)
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            await anyio.sleep(0.3)
            steps = model.steps
            await anyio.sleep(1.0)
            assert model.steps == steps  # the model call itself stopped
            assert model.cancelled
        assert events[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED


async def test_an_adk_failure_fails_the_task(adapter: str) -> None:
    async with served(
        adapter, from_executor(adk_executor(BrokenModel())), CARD, streaming=False
    ) as peer:
        task = (await peer.send("x")).task
    assert task.status.state == TaskState.TASK_STATE_FAILED
    # ADK reports its own failure message (its executor catches the error itself).
    assert status_text(task)
