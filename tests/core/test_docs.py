"""The documentation tables that restate code stay in step with the code."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from a2a_core import errors
from a2a_core.server import ExecutionGuards

DOCS = Path(__file__).parents[2] / "docs"


@pytest.mark.parametrize("cls", errors.ERROR_CLASSES, ids=lambda cls: cls.__name__)
def test_error_table_row_matches_the_class(cls: type[errors.A2AError]) -> None:
    row = (
        f"| `{cls.__name__}` | {cls.code} | `{cls.reason}` | {cls.http_status} / "
        f"{cls.http_status_v1_0_1} | {cls.grpc_status} / {cls.grpc_status_v1_0_1} | "
        f"{cls.default_message} |"
    )
    assert row in (DOCS / "errors.md").read_text()


@pytest.mark.parametrize(
    "field",
    [f for f in dataclasses.fields(ExecutionGuards) if f.name != "clock"],
    ids=lambda f: f.name,
)
def test_guard_defaults_are_the_documented_ones(field: dataclasses.Field[object]) -> None:
    row = f"| `{field.name}` | `{field.default!r}` |"
    assert row in (DOCS / "server.md").read_text()
