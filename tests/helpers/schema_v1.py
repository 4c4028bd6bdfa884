"""A validator for the strict v1.0 JSON Schema, with its cross-file ``$ref`` names resolved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

_SCHEMA = json.loads(
    (Path(__file__).parents[1] / "core" / "data" / "v1_0_a2a.schema.json").read_text()
)
# The generator mangled definition names ("Authorization CodeO Auth Flow"); without the spaces
# they are the proto message names that the `$ref`s use.
DEFINITIONS: dict[str, Any] = {
    name.replace(" ", ""): body for name, body in _SCHEMA["definitions"].items()
}


def _uri(name: str) -> str:
    package = "google.protobuf" if name in {"Struct", "Timestamp", "Value"} else "lf.a2a.v1"
    return f"{package}.{name}.jsonschema.json"


_REGISTRY: Registry[Any] = Registry().with_resources(
    (_uri(name), Resource.from_contents(body, default_specification=DRAFT202012))
    for name, body in DEFINITIONS.items()
)


def validator_for(name: str) -> Draft202012Validator:
    """The validator of one definition (by proto message name, e.g. ``Task``)."""
    return Draft202012Validator(DEFINITIONS[name], registry=_REGISTRY)
