"""The code cites only what the repository holds.

Comments and docstrings explain a decision by pointing at where it is written down: a page of
docs/, most often an entry of docs/spec-decisions.md (``spec-decisions A6``). Documents that
are not in the repository (the implementation digest and design notes the project started
from) are never cited, and every entry cited exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers.doc_blocks import ROOT

DECISIONS = ROOT / "docs" / "spec-decisions.md"
#: Where code and docs that cite decisions live.
SOURCES = sorted(
    [
        *ROOT.glob("packages/*/src/**/*.py"),
        *ROOT.glob("tests/**/*.py"),
        *ROOT.glob("docs/*.md"),
        *ROOT.glob("examples/*.py"),
        *ROOT.glob("bench/*.py"),
    ]
)
OUTSIDE = re.compile(r"\bDIGEST\b|\bDESIGN(?:\.md)?\b")
CITED = re.compile(r"spec-decisions ((?:[AFR]\d+)(?:, [AFR]\d+)*)")
THIS = Path(__file__).resolve()


def _labels() -> set[str]:
    return set(re.findall(r"^\*\*([AFR]\d+)\. ", DECISIONS.read_text(), re.MULTILINE))


def test_the_decisions_page_has_its_entries() -> None:
    labels = _labels()
    assert {f"A{n}" for n in range(1, 22)} <= labels
    assert {"F1", "F13", "R1", "R2"} <= labels


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_repository_is_cited(path: Path) -> None:
    if path.resolve() == THIS:
        return
    text = path.read_text()
    outside = [text.count("\n", 0, m.start()) + 1 for m in OUTSIDE.finditer(text)]
    assert not outside, f"{path.name} cites a document outside the repository, lines {outside}"
    labels = _labels()
    for match in CITED.finditer(text):
        for label in match.group(1).split(", "):
            assert label in labels, f"{path.name} cites spec-decisions {label}, which is not there"
