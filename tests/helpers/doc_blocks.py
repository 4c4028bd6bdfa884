"""The fenced code blocks of the README and docs/, for the tests that run them (tests/docs/).

A block is the text between a line of three backticks with a language and the closing three
backticks, at any indentation (a block inside a list item is dedented). The nearest
non-blank line before the opening fence may be an HTML comment, which markdown renderers
and Sphinx hide:

- ``<!-- illustrative: why -->``: the block is shown, not run (a fragment, or a command
  that serves forever or needs a host that is not this one); the reason is required.

A Python block whose first line is ``# name.py`` is a file of the page: the tests write it
under that name, so that later blocks of the same page can import it, as a reader would.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parents[2]
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[^\s`]*)(?:[ \t]+[^`]*)?$")
MARK = re.compile(r"^\s*<!--\s*(?P<mark>.*?)\s*-->\s*$")
FILE_HEADER = re.compile(r"#\s*(?P<name>[A-Za-z_][\w/]*\.py)\s*$")
PYTHON = ("python", "py")
SHELL = ("sh", "bash", "shell", "console")


@dataclass(frozen=True)
class Block:
    """One fenced block of one page."""

    page: Path
    #: The 1-based line of the opening fence.
    line: int
    lang: str
    code: str
    #: The HTML comment just before the fence, without ``<!--`` and ``-->``, or None.
    mark: str | None

    @property
    def id(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page
        return f"{page}:{self.line}"

    @property
    def illustrative(self) -> bool:
        return self.mark is not None and self.mark.startswith("illustrative")

    @property
    def filename(self) -> str | None:
        """``name.py`` for a block that is a file of the page (its first line says so)."""
        first = self.code.split("\n", 1)[0]
        match = FILE_HEADER.fullmatch(first)
        return match.group("name") if match else None


def pages() -> list[Path]:
    """The README and every page of docs/ (not the generated API pages' build output)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page`` with a language, in order."""
    lines = page.read_text().split("\n")
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None or not opening.group("lang"):
            if opening is not None:  # a fence without a language: skip to its end
                index = _closing(lines, index, opening.group("indent"))
            index += 1
            continue
        end = _closing(lines, index, opening.group("indent"))
        code = textwrap.dedent("\n".join(lines[index + 1 : end])) + "\n"
        found.append(Block(page, index + 1, opening.group("lang"), code, _mark(lines, index)))
        index = end + 1
    return found


def _closing(lines: list[str], start: int, indent: str) -> int:
    for index in range(start + 1, len(lines)):
        if lines[index].strip() == "```":
            return index
    raise AssertionError(f"unclosed fence at line {start + 1}")


def _mark(lines: list[str], fence: int) -> str | None:
    for index in range(fence - 1, -1, -1):
        if lines[index].strip():
            match = MARK.match(lines[index])
            return match.group("mark") if match else None
    return None
