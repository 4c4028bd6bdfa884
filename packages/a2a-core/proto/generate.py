"""Write the gRPC schema table (``a2a_core/_protocol/grpc/_schema.py``) from the protos here.

A small reader of the proto3 this project's two files use (messages, enums, fields, oneofs,
maps, the service's RPCs): no ``protoc``, no protobuf runtime. Run it after changing
``a2a.proto`` or ``wellknown.proto``; ``tests/core/test_grpc_codec.py`` fails while the
written table differs from what this would write.

    uv run python packages/a2a-core/proto/generate.py [--check]
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE.parent / "src" / "a2a_core" / "_protocol" / "grpc" / "_schema.py"
SOURCES = ("a2a.proto", "wellknown.proto")

#: Scalar proto types and the codec's kind for each.
SCALARS = {
    "string": "string",
    "bytes": "bytes",
    "bool": "bool",
    "int32": "int32",
    "int64": "int64",
    "double": "double",
}
#: Well-known messages the codec maps to JSON values (ProtoJSON's mapping).
SPECIAL = {
    "google.protobuf.Struct": "struct",
    "google.protobuf.Value": "value",
    "google.protobuf.Timestamp": "timestamp",
}

_TOKEN = re.compile(r'"[^"]*"|[A-Za-z_][\w.]*|\d+|[{}();=<>,\[\]]|\S')


def _tokens(text: str) -> list[str]:
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return _TOKEN.findall(text)


class _Reader:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> str:
        return self.tokens[self.at]

    def take(self, expected: str | None = None) -> str:
        token = self.tokens[self.at]
        if expected is not None and token != expected:
            raise SyntaxError(f"expected {expected!r}, found {token!r} at token {self.at}")
        self.at += 1
        return token

    def skip_block(self) -> None:
        """Skip a balanced ``{...}`` (options, http bindings)."""
        self.take("{")
        depth = 1
        while depth:
            token = self.take()
            depth += token == "{"
            depth -= token == "}"

    def skip_statement(self) -> None:
        while self.take() != ";":
            pass

    def done(self) -> bool:
        return self.at >= len(self.tokens)


def _json_name(name: str) -> str:
    """protoc's JSON name: underscores dropped, the letter after each one upper-cased."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _field_kind(type_name: str, enums: set[str]) -> tuple[str, str]:
    if type_name in SCALARS:
        return SCALARS[type_name], ""
    if type_name in SPECIAL:
        return SPECIAL[type_name], ""
    short = type_name.rsplit(".", 1)[-1]
    if short in enums or type_name in enums:
        return "enum", short
    return "message", short


def _read(text: str) -> tuple[dict, dict, list]:
    enums_seen = set(re.findall(r"\benum\s+(\w+)", re.sub(r"//[^\n]*", "", text)))
    reader = _Reader(_tokens(text))
    messages: dict[str, list[tuple[int, str, str, int, str, str, str]]] = {}
    enums: dict[str, list[tuple[int, str]]] = {}
    rpcs: list[tuple[str, str, str, bool]] = []

    def read_field(owner: list, label: int, oneof: str = "") -> None:
        if reader.peek() == "map":
            reader.take("map")
            reader.take("<")
            key = reader.take()
            reader.take(",")
            value = reader.take()
            reader.take(">")
            if key != "string":
                raise SyntaxError(f"map keys other than string are not supported: {key}")
            kind, ref = _field_kind(value, enums_seen)
            label = 3
        else:
            if reader.peek() in ("repeated", "optional"):
                label = 2 if reader.take() == "repeated" else 1
            kind, ref = _field_kind(reader.take(), enums_seen)
        name = reader.take()
        reader.take("=")
        number = int(reader.take())
        if reader.peek() == "[":
            while reader.take() != "]":
                pass
        reader.take(";")
        owner.append((number, _json_name(name), kind, label, ref, name, oneof))

    while not reader.done():
        token = reader.take()
        if token == "message":
            name = reader.take()
            fields: list[tuple[int, str, str, int, str, str, str]] = []
            reader.take("{")
            while reader.peek() != "}":
                if reader.peek() == "oneof":
                    reader.take()
                    group = reader.take()
                    reader.take("{")
                    while reader.peek() != "}":
                        read_field(fields, 1, group)  # oneof members have explicit presence
                    reader.take("}")
                elif reader.peek() in ("option", "reserved"):
                    reader.skip_statement()
                else:
                    read_field(fields, 0)
            reader.take("}")
            messages[name] = sorted(fields)
        elif token == "enum":
            name = reader.take()
            values: list[tuple[int, str]] = []
            reader.take("{")
            while reader.peek() != "}":
                value_name = reader.take()
                reader.take("=")
                values.append((int(reader.take()), value_name))
                while reader.take() != ";":
                    pass
            reader.take("}")
            enums[name] = sorted(values)
        elif token == "service":
            reader.take()
            reader.take("{")
            while reader.peek() != "}":
                if reader.peek() == "option":
                    reader.skip_statement()
                    continue
                reader.take("rpc")
                rpc = reader.take()
                reader.take("(")
                request = reader.take()
                reader.take(")")
                reader.take("returns")
                reader.take("(")
                streaming = reader.peek() == "stream"
                if streaming:
                    reader.take()
                response = reader.take().rsplit(".", 1)[-1]
                reader.take(")")
                if reader.peek() == "{":
                    reader.skip_block()
                else:
                    reader.take(";")
                rpcs.append((rpc, request, response, streaming))
            reader.take("}")
        elif token in ("syntax", "package", "import", "option"):
            reader.skip_statement()
        else:
            raise SyntaxError(f"unexpected {token!r}")
    return messages, enums, rpcs


def _py(value: object) -> str:
    """A literal in the project's style (double quotes), stable whatever the formatter."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple):
        return "(" + ", ".join(_py(v) for v in value) + ")"
    return repr(value)


def render() -> str:
    """The text of ``_schema.py``."""
    messages: dict = {}
    enums: dict = {}
    rpcs: list = []
    package = ""
    for source in SOURCES:
        text = (HERE / source).read_text()
        found = _read(text)
        messages.update(found[0])
        enums.update(found[1])
        rpcs += found[2]
        if source == "a2a.proto":
            match = re.search(r"^package\s+([\w.]+);", text, flags=re.M)
            assert match is not None
            package = match.group(1)
    for name, values in enums.items():
        numbers = [number for number, _ in values]
        if numbers != list(range(len(numbers))):
            raise SyntaxError(f"enum {name}: the codec expects values numbered 0..n-1")
    lines = [
        '"""The protobuf schema of A2A v1.0 as data: generated, do not edit.',
        "",
        "Written by ``packages/a2a-core/proto/generate.py`` from ``a2a.proto`` and",
        "``wellknown.proto`` beside it. A field is ``(number, json_name, kind, label, ref, name,",
        "oneof)``:",
        "``kind`` is a scalar (``string``, ``bytes``, ``bool``, ``int32``, ``int64``,",
        "``double``), ``enum``, ``message``, or a well-known message read as JSON (``struct``,",
        "``value``, ``timestamp``); ``label`` is 0 (singular), 1 (explicit presence: ``optional``",
        "or a oneof member), 2 (repeated) or 3 (``map<string, kind>``); ``ref`` names the enum",
        'or message; ``name`` is the proto field name, ``oneof`` its oneof group (``""``: none).',
        "An enum is its value names in number order.",
        '"""',
        "",
        "from typing import Final",
        "",
        "Field = tuple[int, str, str, int, str, str, str]",
        "",
        f"PACKAGE: Final = {_py(package)}",
        "",
        "MESSAGES: Final[dict[str, tuple[Field, ...]]] = {",
    ]
    for name, fields in messages.items():
        lines.append(f"    {_py(name)}: (")
        lines.extend(f"        {_py(field)}," for field in fields)
        lines.append("    ),")
    lines.append("}")
    lines.append("")
    lines.append("ENUMS: Final[dict[str, tuple[str, ...]]] = {")
    for name, values in enums.items():
        lines.append(f"    {_py(name)}: (")
        lines.extend(f"        {_py(value)}," for _, value in values)
        lines.append("    ),")
    lines.append("}")
    lines.append("")
    lines.append("#: ``(rpc, request, response, server streaming)``, in proto order.")
    lines.append("RPCS: Final[tuple[tuple[str, str, str, bool], ...]] = (")
    lines.extend(f"    {_py(rpc)}," for rpc in rpcs)
    lines.append(")")
    return "\n".join(lines) + "\n"


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        current = TARGET.read_text() if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is out of date: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
