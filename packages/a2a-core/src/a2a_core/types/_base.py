"""The base Struct of every wire family, and the exactly-one check for oneofs.

Every wire value is a frozen msgspec Struct encoded in camelCase with defaults omitted
(ProtoJSON's rules for fields without explicit presence). Fields with explicit presence
(``optional`` in the proto) default to ``None`` so that a value that was set, even to
``False`` or ``0``, is still emitted. Oneof groups name their members in ``__oneof__`` so
that validation, the codec and the hypothesis strategies read one source of truth.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

__all__ = ["WireStruct", "check_oneof"]


class WireStruct(
    msgspec.Struct,
    rename="camel",
    omit_defaults=True,
    kw_only=True,
    frozen=True,
    gc=False,
):
    """Base of every wire value: camelCase on the wire, defaults omitted, immutable.

    msgspec applies ``kw_only`` only to the fields of the class that sets it, so every
    subclass repeats ``kw_only=True`` (required members may then follow defaulted ones
    and keep the proto field order on the wire), and ``frozen=True`` so that type checkers
    (which see Structs as dataclasses) know the subclass is frozen too.
    """

    #: Names of the fields that form a oneof group (exactly one must be set), if any.
    __oneof__: ClassVar[tuple[str, ...]] = ()


def check_oneof(value: WireStruct) -> None:
    """Raise ``ValueError`` unless exactly one member of the oneof group is set.

    A member counts as set when it differs (by identity) from its declared default, so a
    ``Part`` whose ``data`` is JSON ``null`` (``None``, default ``UNSET``) is set, while a
    ``StreamResponse`` member left at ``None`` is not. msgspec turns the ``ValueError``
    into a ``ValidationError`` while decoding, which the codec answers as InvalidParams.

    This runs for every Part and StreamResponse built or decoded, so each class gets its own
    check, compiled once (`_compile_oneof_check`): one expression that adds up the members
    that are set, without a loop, a dict or a ``getattr`` per member.
    """
    try:
        check = _CHECKS[type(value)]
    except KeyError:
        check = _CHECKS[type(value)] = _compile_oneof_check(type(value))
    check(value)


_CHECKS: dict[type, Callable[[Any], None]] = {}


def _oneof_failure(value: WireStruct) -> None:
    """The error of a value whose oneof group has none or several members set."""
    cls = type(value)
    defaults = _oneof_defaults(cls)
    present = sum(getattr(value, name) is not default for name, default in defaults.items())
    names = ", ".join(
        cls.__struct_encode_fields__[cls.__struct_fields__.index(n)] for n in defaults
    )
    found = "none" if not present else str(present)
    raise ValueError(f"{cls.__name__} needs exactly one of: {names} (found {found})")


def _compile_oneof_check(cls: type[WireStruct]) -> Callable[[Any], None]:
    """``def check(value)`` for ``cls``: each member compared with its default by identity.

    The source names only the class's own field names (identifiers) and the defaults, which
    are passed in the namespace, never spelled out.
    """
    defaults = _oneof_defaults(cls)
    namespace: dict[str, Any] = {"_fail": _oneof_failure}
    terms = []
    for i, (name, default) in enumerate(defaults.items()):
        if not name.isidentifier():  # pragma: no cover - struct fields always are
            raise TypeError(f"{cls.__name__}: oneof member {name!r} is not an identifier")
        namespace[f"_d{i}"] = default
        terms.append(f"(value.{name} is not _d{i})")
    source = f"def check(value):\n    if {' + '.join(terms) or '0'} != 1:\n        _fail(value)\n"
    exec(source, namespace)  # generated from field names only, see above
    check: Callable[[Any], None] = namespace["check"]
    return check


_DEFAULTS_CACHE: dict[type, dict[str, Any]] = {}


def _oneof_defaults(cls: type[WireStruct]) -> dict[str, Any]:
    cached = _DEFAULTS_CACHE.get(cls)
    if cached is None:
        fields = {f.name: f for f in msgspec.structs.fields(cls)}
        cached = {name: fields[name].default for name in cls.__oneof__}
        _DEFAULTS_CACHE[cls] = cached
    return cached
