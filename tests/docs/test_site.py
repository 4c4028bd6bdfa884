"""The documentation site's shape: headings that are meant, an index that shows titles, and
performance claims that name the stack they were measured on. Each check would have caught
a fault the site once had (a wrapped line read as a heading, file names in the index, a
ratio measured on httptools quoted for a plain install)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])
PAGES = [page for page in PAGES if "_build" not in page.parts]

_FENCE = re.compile(r"^\s*(```|~~~|:::)")
_HEADING = re.compile(r"^#{1,6}\s")


def prose_lines(page: Path) -> Iterator[tuple[int, str, str]]:
    """``(number, line, previous line)`` of each line outside fenced blocks."""
    fence: str | None = None
    previous = ""
    for number, line in enumerate(page.read_text().splitlines(), start=1):
        opened = _FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None:
            yield number, line, previous
        previous = line if fence is None else ""


def title_of(page: Path) -> str:
    for _, line, _ in prose_lines(page):
        if line.startswith("# "):
            return line[2:].strip()
    raise AssertionError(f"{page} has no title")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_heading_is_meant_as_one(page: Path) -> None:
    # A heading straight after a line of prose is a wrapped sentence that happens to start
    # with "#": Markdown makes it a heading (and the site a sidebar entry) all the same.
    accidental = [
        f"{page.name}:{number}: {line}"
        for number, line, previous in prose_lines(page)
        if _HEADING.match(line) and previous.strip() and not previous.lstrip().startswith("<!--")
    ]
    assert not accidental


def test_the_index_shows_each_pages_title() -> None:
    rows = re.findall(r"^\| \[([^\]]+)\]\(([^)]+\.md)\) \|", (DOCS / "index.md").read_text(), re.M)
    assert len(rows) >= 20
    for text, target in rows:
        assert text == title_of(DOCS / target), target


# A ratio against another server ("9x", "14-24x", "2.5x").
_RATIO = re.compile(r"\b\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?x\b")
_STACKS = ("h11", "httptools", "uvloop", "aiohttp", "grpc")


def test_the_readmes_performance_claims_name_their_stack() -> None:
    text = (ROOT / "README.md").read_text()
    claims = list(_RATIO.finditer(text))
    assert claims  # the README makes some
    for claim in claims:
        # The paragraph the ratio is in names the stack it was measured on.
        start = text.rfind("\n\n", 0, claim.start())
        end = text.find("\n\n", claim.end())
        paragraph = text[start:end]
        assert any(stack in paragraph for stack in _STACKS), claim.group()


def test_the_migration_guide_promises_nothing_that_has_landed() -> None:
    guide = (DOCS / "migrating-from-a2a-sdk.md").read_text()
    assert "in progress" not in guide
    assert "being built" not in guide
