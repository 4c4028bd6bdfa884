"""A validator for the v0.3 JSON Schema (draft-07), one definition at a time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

_SCHEMA = json.loads(
    (Path(__file__).parents[1] / "core" / "data" / "v0_3_a2a.schema.json").read_text()
)
DEFINITIONS: dict[str, Any] = _SCHEMA["definitions"]


def validator_for(name: str) -> Draft7Validator:
    """The validator of one definition (``Task``, ``MessageSendParams``...); ``$ref``s resolve
    against the schema's ``definitions``."""
    return Draft7Validator({"$ref": f"#/definitions/{name}", "definitions": DEFINITIONS})


def schema_errors(name: str, document: Any) -> list[str]:
    """Every way ``document`` breaks definition ``name``, as readable messages."""
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator_for(name).iter_errors(document)
    ]
