"""The base Struct of every wire family, and the exactly-one check for oneofs.

Every wire value is a frozen msgspec Struct encoded in camelCase with defaults omitted
(ProtoJSON's rules for fields without explicit presence). Fields with explicit presence
(``optional`` in the proto) default to ``None`` so that a value that was set, even to
``False`` or ``0``, is still emitted. Oneof groups name their members in ``__oneof__`` so
that validation, the codec and the hypothesis strategies read one source of truth.
"""

from __future__ import annotations

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
    """
    cls = type(value)
    defaults = _oneof_defaults(cls)
    # Count inline: this runs for every Part and StreamResponse built or decoded.
    present = 0
    for name, default in defaults.items():
        if getattr(value, name) is not default:
            present += 1
    if present != 1:
        names = ", ".join(
            cls.__struct_encode_fields__[cls.__struct_fields__.index(n)] for n in defaults
        )
        found = "none" if not present else str(present)
        raise ValueError(f"{cls.__name__} needs exactly one of: {names} (found {found})")


_DEFAULTS_CACHE: dict[type, dict[str, Any]] = {}


def _oneof_defaults(cls: type[WireStruct]) -> dict[str, Any]:
    cached = _DEFAULTS_CACHE.get(cls)
    if cached is None:
        fields = {f.name: f for f in msgspec.structs.fields(cls)}
        cached = {name: fields[name].default for name in cls.__oneof__}
        _DEFAULTS_CACHE[cls] = cached
    return cached
