"""Every Python block of the README and docs/ runs, page by page, as a reader would run it.

The blocks of one page run in order in one namespace (a later block may use what an earlier
one defined), from a scratch folder that is also on ``sys.path``. A block that is a file of
the page (first line ``# name.py``) is written there and imported under that name (so its
``if __name__ == "__main__":`` part does not run, and later blocks can import it). Blocks
marked ``<!-- illustrative: why -->`` are not run; every other one is.

A page's fragments may use a few names they do not define, the ones the text says come
from elsewhere: the quick start's echo agent (``echo``, also as ``agent``) and its ``card``,
a password check for Basic authentication (``check_password``) and ``authenticators``
(``None``: no verifiers). Whatever a page defines itself replaces them.

A top-level expression followed by a comment that is a Python literal
(``codec.encode(msg)  # b'{...}'``) must evaluate to that literal, so printed results in the
docs stay true.
"""

from __future__ import annotations

import ast
import contextlib
import io
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2a_core.server import TaskContext
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill
from helpers.doc_blocks import PYTHON, Block, blocks, pages

PAGES = [
    page for page in pages() if any(b.lang in PYTHON and not b.illustrative for b in blocks(page))
]


def _page_id(page: Path) -> str:
    return page.name


async def _echo(ctx: TaskContext) -> str:
    return ctx.text


def _check_password(username: str, password: str) -> str | None:
    return username if (username, password) == ("alice", "wonderland") else None


def _prelude() -> dict[str, Any]:
    card = AgentCard(
        name="Echo",
        description="Replies with the text it receives.",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes text.", tags=["echo"])],
    )
    return {
        "__name__": "__doc_page__",
        "echo": _echo,
        "agent": _echo,
        "card": card,
        "check_password": _check_password,
        "authenticators": None,
    }


class _Checked(ast.NodeTransformer):
    """Wraps ``expr  # literal`` statements into ``__doc_check__(expr, literal, line)``."""

    def __init__(self, literals: dict[int, object]) -> None:
        self.literals = literals

    def visit_Module(self, node: ast.Module) -> ast.Module:
        for index, statement in enumerate(node.body):
            line = statement.end_lineno
            if isinstance(statement, ast.Expr) and line in self.literals:
                call = ast.Call(
                    func=ast.Name("__doc_check__", ast.Load()),
                    args=[
                        statement.value,
                        ast.Constant(self.literals[line]),
                        ast.Constant(line),
                    ],
                    keywords=[],
                )
                node.body[index] = ast.copy_location(ast.Expr(call), statement)
        return ast.fix_missing_locations(node)


def _literal_comments(code: str) -> dict[int, object]:
    literals: dict[int, object] = {}
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT:
            with contextlib.suppress(ValueError, SyntaxError, TypeError, RecursionError):
                literals[token.start[0]] = ast.literal_eval(token.string[1:].strip())
    return literals


def _check(block: Block) -> Any:
    def check(value: object, expected: object, line: int) -> None:
        assert value == expected, f"{block.id}, line {line} of the block: {value!r}"

    return check


def _run(block: Block, namespace: dict[str, Any], scratch: Path) -> None:
    if block.filename is not None:
        target = scratch / block.filename
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.code)
        module = block.filename.removesuffix(".py").replace("/", ".")
        sys.modules.pop(module, None)
        __import__(module)
        return
    tree = _Checked(_literal_comments(block.code)).visit(ast.parse(block.code))
    namespace["__doc_check__"] = _check(block)
    exec(compile(tree, block.id, "exec"), namespace)


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder to run from and import from; the modules imported from it are forgotten."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    # A page may print one file twice (the tutorial's app.py): never import a stale .pyc.
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        file = getattr(sys.modules[name], "__file__", None) or ""
        if file.startswith(str(tmp_path)):
            del sys.modules[name]


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_the_python_blocks_of_the_page_run(page: Path, scratch: Path) -> None:
    namespace = _prelude()
    ran = 0
    for block in blocks(page):
        if block.lang in PYTHON and not block.illustrative:
            _run(block, namespace, scratch)
            ran += 1
    assert ran, f"{page.name}: no Python block runs"


def test_most_python_blocks_run() -> None:
    python = [b for page in pages() for b in blocks(page) if b.lang in PYTHON]
    shown = [b.id for b in python if b.illustrative]
    # Fragments may be shown only; at least three blocks in four run.
    assert len(shown) * 4 <= len(python), shown


@pytest.mark.parametrize("page", pages(), ids=_page_id)
def test_every_illustrative_mark_says_why(page: Path) -> None:
    for block in blocks(page):
        if block.illustrative:
            assert block.mark is not None
            assert block.mark.startswith("illustrative: ") and len(block.mark) > 20, block.id


def test_a_literal_comment_is_checked(scratch: Path) -> None:
    code = "x = 2\nx + 1  # 4\n"
    block = Block(scratch / "page.md", 1, "python", code, None)
    with pytest.raises(AssertionError, match="line 2 of the block: 3"):
        _run(block, {}, scratch)
