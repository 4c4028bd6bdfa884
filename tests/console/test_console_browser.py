"""The developer console in headless Chromium, on both adapters, against the examples run as
processes with ``--console``: the card, a streamed chat, a multi-turn task, cancel, a
secured agent's token, the findings of a faulty card, a mount under a prefix. Every test
also checks (in ``open_console``) that the page logged no error and asked no other origin
for anything."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from helpers.processes import ServerProcess

pytestmark = pytest.mark.browser

EXAMPLES = Path(__file__).parents[2] / "examples"
CONSOLE = "/a2a-console/"
ADAPTERS = ("starlette", "aiohttp")
API_KEY = "console-test-key"


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str], str]]:
    """The streaming and multi-turn examples on both adapters, and the secured one, with
    ``--console``: started together, then waited for."""
    log = tmp_path_factory.mktemp("console-servers") / "servers.log"
    started: dict[tuple[str, str], ServerProcess] = {}
    common = ("--console", "--log-level", "warning")
    for adapter in ADAPTERS:
        for name in ("streaming", "multi_turn"):
            started[name, adapter] = ServerProcess(
                EXAMPLES / f"{name}.py", "--adapter", adapter, *common, log=log, name=name
            )
    started["secured", "starlette"] = ServerProcess(
        EXAMPLES / "secured.py",
        "--api-key-file",
        str(_key_file(log.parent)),
        # Bearer tokens are not used here: the JWKS is never fetched.
        "--jwks-url",
        "http://127.0.0.1:9/jwks.json",
        "--issuer",
        "https://issuer.test",
        "--audience",
        "https://agent.test",
        *common,
        log=log,
        name="secured",
    )
    started["mounted", "starlette"] = ServerProcess(
        Path(__file__).with_name("mounted_agent.py"), log=log, name="mounted"
    )
    try:
        for (name, _), process in started.items():
            path = "/agents/notes/.well-known/agent-card.json" if name == "mounted" else None
            process.wait_ready(30, **({"path": path} if path else {}))
        yield {key: process.url for key, process in started.items()}
    finally:
        for process in started.values():
            process.stop()


def _key_file(folder: Path) -> Path:
    path = folder / "api-key.txt"
    path.write_text(API_KEY)
    return path


@pytest.fixture(params=ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def send(console: Any, text: str) -> None:
    console.by("chat-input").fill(text)
    console.by("chat-send").click()


def last(console: Any, testid: str) -> Any:
    return console.by(testid).last


def test_the_card_shows_its_name_skills_and_no_findings(
    servers: Any, adapter: str, open_console: Any
) -> None:
    console = open_console(servers["streaming", adapter] + CONSOLE)
    expect(console.by("card-name")).to_have_text("Streamer")
    expect(console.page).to_have_title("Streamer · A2A console")
    expect(console.by("card-findings")).to_contain_text("No findings")
    expect(console.page.locator("#card-skills")).to_contain_text("Stream words")
    expect(console.page.locator("#card-interfaces")).to_contain_text("JSONRPC 1.0")
    expect(console.by("chat-input")).to_be_focused()
    console.shot("card")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_streamed_reply_shows_as_it_arrives_then_completes(
    servers: Any, adapter: str, binding: str, open_console: Any
) -> None:
    console = open_console(servers["streaming", adapter] + CONSOLE)
    expect(console.by("card-name")).to_have_text("Streamer")
    console.by("interface-select").select_option(label=f"{binding} · /")
    words = [f"word{i}" for i in range(40)]
    send(console, " ".join(words))
    reply = last(console, "reply-artifact")
    # Live: part of the reply is on the page while the task is still working (the example
    # sends one word every 0.1 s: 4 s in all).
    expect(reply).to_contain_text("word0 word1")
    expect(last(console, "reply-state")).to_have_text("working")
    console.shot("streaming")
    expect(last(console, "reply-state")).to_have_text("completed", timeout=20_000)
    expect(reply).to_have_text(" ".join(words))
    expect(console.page.locator("[data-role=agent] .status-text").last).to_have_text(
        "Streaming 40 words"
    )
    task_id = console.by("task-row").and_(console.page.locator("[aria-current=true]"))
    expect(task_id.get_by_test_id("task-state")).to_have_text("completed")
    frames = console.by("frames-log").locator("li")
    # The task, a status, 40 chunks and the final status, each frame as received.
    expect(frames).to_have_count(43)
    expect(console.by("frames-log")).to_contain_text("artifactUpdate")
    expect(console.by("frames-log")).to_contain_text("data: ")
    console.shot("completed")


def test_a_multi_turn_task_asks_then_completes_with_the_next_message(
    servers: Any, adapter: str, open_console: Any
) -> None:
    console = open_console(servers["multi_turn", adapter] + CONSOLE)
    expect(console.by("card-name")).to_have_text("Greeter")
    console.by("chat-input").fill("hi")
    console.by("chat-input").press("Enter")  # Enter sends
    expect(last(console, "reply-state")).to_have_text("input-required")
    expect(console.page.locator("[data-role=agent] .status-text").last).to_have_text(
        "Hello! What is your name?"
    )
    selected = console.page.locator("[data-testid=task-row][aria-current=true]")
    expect(selected.get_by_test_id("task-state")).to_have_text("input-required")
    task_id = selected.get_attribute("data-task-id")
    assert task_id
    expect(console.by("continues")).to_contain_text(task_id[:8])
    console.shot("input-required")
    send(console, "Ada")
    expect(last(console, "reply-state")).to_have_text("completed")
    expect(console.page.locator("[data-role=agent]").last).to_contain_text("Nice to meet you, Ada!")
    row = console.page.locator(f"[data-testid=task-row][data-task-id='{task_id}']")
    expect(row.get_by_test_id("task-state")).to_have_text("completed")
    expect(console.by("continues")).to_have_text("")
    # The task view shows the one task's whole history: both turns.
    expect(console.page.locator("#task-history")).to_contain_text("user: Ada")
    expect(console.page.locator("#task-history")).to_contain_text("user: hi")
    console.shot("completed")


def test_cancel_stops_a_running_task(servers: Any, adapter: str, open_console: Any) -> None:
    console = open_console(servers["streaming", adapter] + CONSOLE)
    expect(console.by("card-name")).to_have_text("Streamer")
    words = [f"w{i}" for i in range(300)]  # 30 s of stream
    send(console, " ".join(words))
    expect(last(console, "reply-artifact")).to_contain_text("w0 w1")
    cancel = console.by("cancel-task")
    expect(cancel).to_be_enabled()
    console.shot("running")
    cancel.click()
    expect(last(console, "reply-state")).to_have_text("canceled")
    expect(console.by("task-view-state")).to_have_text("canceled")
    selected = console.page.locator("[data-testid=task-row][aria-current=true]")
    expect(selected.get_by_test_id("task-state")).to_have_text("canceled")
    expect(cancel).to_be_disabled()
    streamed = last(console, "reply-artifact").inner_text()
    assert len(streamed.split()) < len(words)
    console.shot("canceled")


def test_a_second_page_follows_and_cancels_a_task_started_by_the_first(
    servers: Any, open_console: Any
) -> None:
    url = servers["streaming", "starlette"] + CONSOLE
    first = open_console(url)
    expect(first.by("card-name")).to_have_text("Streamer")
    send(first, " ".join(f"w{i}" for i in range(300)))
    expect(last(first, "reply-artifact")).to_contain_text("w0 w1")
    task_id = first.page.locator("[data-testid=task-row][aria-current=true]").get_attribute(
        "data-task-id"
    )
    second = open_console(url)
    row = second.page.locator(f"[data-testid=task-row][data-task-id='{task_id}']")
    expect(row.get_by_test_id("task-state")).to_have_text("working")
    row.locator("button").click()
    second.by("follow-task").click()
    # The subscription's frames arrive live in the second page's log.
    expect(second.by("frames-log")).to_contain_text("artifactUpdate")
    second.by("cancel-task").click()
    expect(second.by("task-view-state")).to_have_text("canceled")
    expect(second.by("frames-log")).to_contain_text("TASK_STATE_CANCELED")
    expect(last(first, "reply-state")).to_have_text("canceled")  # the first page saw it too
    expect(second.by("follow-task")).to_be_disabled()  # nothing more to follow
    second.shot("followed")


def test_a_secured_agent_needs_the_token_which_the_page_sends_as_the_card_says(
    servers: Any, open_console: Any
) -> None:
    console = open_console(servers["secured", "starlette"] + CONSOLE)
    # The browser notes each refused request as a console error: expected here.
    console.expected.append(re.compile(r"status of 401"))
    expect(console.by("card-name")).to_have_text("Secured echo")
    # Listing the tasks, with no token:
    expect(console.by("error")).to_contain_text("Authentication required (-32041, HTTP 401)")
    send(console, "no token")
    expect(last(console, "reply-state")).to_have_text("error")
    console.shot("refused")
    console.by("token-scheme").select_option(label="apiKey (X-API-Key header)")
    console.by("token-input").fill(API_KEY)
    send(console, "with the key")
    expect(last(console, "reply-state")).to_have_text("completed")
    expect(console.page.locator("[data-role=agent]").last).to_contain_text("with the key")
    expect(console.by("task-row")).to_have_count(1)
    console.shot("with-token")


def test_a_faulty_card_is_reported_and_a_mounted_agent_works(
    servers: Any, open_console: Any
) -> None:
    console = open_console(servers["mounted", "starlette"] + "/agents/notes" + CONSOLE)
    expect(console.by("card-name")).to_have_text("Notes")
    findings = console.by("card-findings")
    expect(findings).to_contain_text('skills[0] (note): "tags" is empty')
    expect(findings).to_contain_text('"provider" needs both "organization" and "url"')
    expect(findings).to_contain_text("does not list text/plain")
    expect(findings).to_contain_text("streaming is off")
    # No streaming: the chat sends a blocking message.
    expect(console.by("use-stream")).not_to_be_checked()
    # The card's text is shown as text: markup in it makes no element and runs nothing.
    skills = console.page.locator("#card-skills")
    expect(skills).to_contain_text('Keeps a note. <img src=x onerror="window.pwned=1">')
    assert skills.locator("img").count() == 0
    assert console.page.evaluate("window.pwned") is None
    send(console, "buy milk")
    expect(last(console, "reply-state")).to_have_text("completed")
    expect(console.page.locator("[data-role=agent]").last).to_contain_text("noted: buy milk")
    console.shot("findings")


def test_the_console_is_not_served_without_the_flag(tmp_path: Path) -> None:
    process = ServerProcess(
        EXAMPLES / "echo.py", "--log-level", "warning", log=tmp_path / "echo.log"
    )
    try:
        process.wait_ready()
        assert httpx.get(process.url + CONSOLE).status_code == 404
    finally:
        process.stop()


def test_the_page_passes_an_accessibility_check_and_works_by_keyboard(
    servers: Any, open_console: Any, axe_script: str
) -> None:
    # The policy is bypassed in this context only, so that the checker can be injected.
    console = open_console(servers["multi_turn", "starlette"] + CONSOLE, bypass_csp=True)
    expect(console.by("card-name")).to_have_text("Greeter")
    keyboard = console.page.keyboard
    expect(console.by("chat-input")).to_be_focused()  # ready to type
    keyboard.type("hi")
    keyboard.press("Enter")
    expect(last(console, "reply-state")).to_have_text("input-required")
    # A row of the task list is a button: Tab reaches it, Enter opens the task.
    row = console.by("task-row").first.locator("button")
    row.focus()
    keyboard.press("Enter")
    expect(console.page.locator("#task-history")).to_contain_text("user: hi")
    expect(console.by("cancel-task")).to_be_enabled()
    console.by("cancel-task").focus()
    keyboard.press("Enter")
    expect(console.by("task-view-state")).to_have_text("canceled")
    console.page.add_script_tag(content=axe_script)
    found = console.page.evaluate(
        """async () => {
            const result = await axe.run(document, {
                runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
            });
            return result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.length})`);
        }"""
    )
    assert found == []
    console.shot("checked")


# A stream as another server might frame it: CRLF line ends, a comment, a data field over two
# lines, markup in the text. The JSON-RPC endpoint's streaming call is answered by the test.
CRAFTED = (
    ": keep-alive\r\n\r\n"
    "id: 1\r\n"
    'data: {"jsonrpc": "2.0", "id": 1,\r\n'
    'data:  "result": {"task": {"id": "t-1", "contextId": "c-1",'
    ' "status": {"state": "TASK_STATE_WORKING"}}}}\r\n\r\n'
    "id: 2\r\n"
    'data: {"jsonrpc": "2.0", "id": 1, "result": {"artifactUpdate": {"taskId": "t-1",'
    ' "contextId": "c-1", "artifact": {"artifactId": "a", "parts": [{"text": "<b>plain"}]}}}}\r\n'
    "\r\n"
    "id: 3\r\n"
    'data: {"jsonrpc": "2.0", "id": 1, "result": {"artifactUpdate": {"taskId": "t-1",'
    ' "contextId": "c-1", "artifact": {"artifactId": "a", "parts": [{"text": " text</b>"}]},'
    ' "append": true}}}\r\n\r\n'
    "id: 4\r\n"
    'data: {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "t-1",'
    ' "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}}}\r\n\r\n'
)


def test_frames_with_crlf_comments_and_split_data_are_read_and_shown_as_text(
    servers: Any, open_console: Any
) -> None:
    base = servers["streaming", "starlette"]
    console = open_console(base + CONSOLE)
    expect(console.by("card-name")).to_have_text("Streamer")

    def answer(route: Any) -> None:
        if "SendStreamingMessage" in (route.request.post_data or ""):
            route.fulfill(status=200, headers={"content-type": "text/event-stream"}, body=CRAFTED)
        else:
            route.continue_()

    console.page.route(lambda url: url == base + "/", answer)
    send(console, "anything")
    expect(last(console, "reply-state")).to_have_text("completed")
    reply = last(console, "reply-artifact")
    expect(reply).to_have_text("<b>plain text</b>")
    assert reply.locator("b").count() == 0
    frames = console.by("frames-log").locator("li")
    expect(frames).to_have_count(5)  # the comment and four events, as received
    expect(frames.first).to_have_class("comment")
    expect(frames.nth(1)).to_contain_text('data:  "result"')
