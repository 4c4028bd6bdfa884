"""The developer console in a real browser: Debian's Chromium, driven by Playwright's Python
package, which launches it by its path (Playwright's own browser download is never used).

The browser is ``A2A_CHROMIUM`` or the first of ``chromium``, ``chromium-browser`` and
``google-chrome`` on the PATH. Without one the suite skips, saying so, unless
``A2A_REQUIRE_BROWSER=1`` (which ``.ci/run`` sets, after installing Debian's ``chromium``):
then it fails. Screenshots of every step go to ``$A2A_TEST_ARTIFACTS/console`` when that is
set (``.ci/run`` keeps them in its output folder), else to pytest's temporary folder.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    given = os.environ.get("A2A_CHROMIUM", "").strip()
    if given:
        return given
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # Module scope, not session: Playwright's sync API runs an asyncio loop in this thread
    # while it is open, and every anyio test after it needs the thread's loop free.
    path = chromium_path()
    if path is None:
        reason = "no Chromium (install Debian's chromium, or set A2A_CHROMIUM)"
        if os.environ.get("A2A_REQUIRE_BROWSER") == "1":
            pytest.fail(f"A2A_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
        launched = playwright.chromium.launch(
            executable_path=path, headless=True, args=["--no-sandbox"]
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = os.environ.get("A2A_TEST_ARTIFACTS", "").strip()
    folder = Path(root) / "console" if root else tmp_path_factory.mktemp("console-shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Console:
    """One page of the console, watched: what it logged, what it requested, and where."""

    def __init__(self, page: Any, url: str, shots: Path, name: str) -> None:
        self.page = page
        self.url = url
        self.origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        self.shots = shots
        self.name = name
        self.step = 0
        self.problems: list[str] = []  # console errors and warnings, uncaught exceptions
        self.foreign: list[str] = []  # requests to another origin
        #: Console errors a test expects (the browser's own note of a refused request).
        self.expected: list[re.Pattern[str]] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"uncaught: {error}"))
        page.on("request", self._request)

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.problems.append(f"{message.type}: {message.text}")

    def _request(self, request: Any) -> None:
        parts = urlsplit(request.url)
        if f"{parts.scheme}://{parts.netloc}" != self.origin:
            self.foreign.append(request.url)

    def open(self) -> None:
        self.page.goto(self.url)

    def by(self, testid: str) -> Any:
        return self.page.get_by_test_id(testid)

    def shot(self, step: str) -> Path:
        """A screenshot of the page now, numbered in the test's order."""
        self.step += 1
        path = self.shots / f"{self.name}-{self.step:02d}-{step}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def unexpected_problems(self) -> list[str]:
        return [p for p in self.problems if not any(e.search(p) for e in self.expected)]


@pytest.fixture(scope="session")
def axe_script(request: pytest.FixtureRequest) -> str:
    """axe-core, the accessibility checker, installed by npm from the committed lock of
    ``tests/interop/js`` (skips without node and npm, as the interop tests do)."""
    from interop.js_env import install_js_sdk

    home = install_js_sdk(request.config).home
    return (home / "node_modules" / "axe-core" / "axe.min.js").read_text()


def shot_name(request: pytest.FixtureRequest) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")


@pytest.fixture
def open_console(browser: Any, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """``open_console(url)``: a fresh browser context on the console at ``url`` (laptop
    sized, 1366x768; ``bypass_csp=True`` lets a test inject a checker of its own), checked
    when the test ends: no console error or warning it did not expect, and no request to
    another origin."""
    contexts: list[Any] = []
    consoles: list[Console] = []

    def open_(url: str, *, bypass_csp: bool = False) -> Console:
        context = browser.new_context(
            viewport={"width": 1366, "height": 768}, bypass_csp=bypass_csp
        )
        context.set_default_timeout(15_000)
        contexts.append(context)
        console = Console(context.new_page(), url, artifacts, shot_name(request))
        consoles.append(console)
        console.open()
        return console

    yield open_
    for context in contexts:
        context.close()
    for console in consoles:
        assert console.unexpected_problems() == []
        assert console.foreign == []
