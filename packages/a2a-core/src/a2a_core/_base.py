"""The base Struct of every wire family, and the exactly-one check for oneofs.

Every wire value is a frozen msgspec Struct encoded in camelCase with defaults omitted
(ProtoJSON's rules for fields without explicit presence). Fields with explicit presence
(``optional`` in the proto) default to ``None`` so that a value that was set, even to
``False`` or ``0``, is still emitted. Oneof groups name their members in ``__oneof__`` so
that validation, the codec and the hypothesis strategies read one source of truth.

It also holds `fast_frozen_init`, which speeds up the frozen dataclasses built on every
request (``HttpRequest``, ``HttpResponse``, ``Call``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import msgspec

__all__ = ["WireStruct", "check_oneof", "fast_frozen_init"]

_T = TypeVar("_T")


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


# --- frozen dataclasses built on every request ------------------------------------------------


class _Factory:
    """The default of a parameter whose field has a ``default_factory`` (shown as dataclasses
    shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY: Any = _Factory()


def fast_frozen_init(cls: type[_T]) -> type[_T]:
    """Give a frozen, slotted dataclass an ``__init__`` that stores through the slots.

    The ``__init__`` that ``dataclass(frozen=True)`` writes stores each field with
    ``object.__setattr__(self, name, value)``: a generic attribute lookup per field, which
    makes a 16-field ``Call`` cost several microseconds. This one calls each slot's own
    descriptor (``__set__`` of the member descriptor) instead: the same result, same
    signature, defaults and default factories, about 40% cheaper. Instances stay frozen
    (the class's ``__setattr__`` is untouched) and `dataclasses.replace` goes through it.

    Only plain fields are supported (no ``init=False``, ``kw_only``, ``InitVar`` or
    ``__post_init__``); anything else is refused at import time.
    """
    if not dataclasses.is_dataclass(cls) or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} must be a slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: __post_init__ is not supported")
    params: list[str] = []
    body: list[str] = []
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY}
    for i, f in enumerate(dataclasses.fields(cls)):
        if not f.init or f.kw_only is True or not f.name.isidentifier():
            raise TypeError(f"{cls.__name__}.{f.name}: only plain init fields are supported")
        namespace[f"_set{i}"] = cls.__dict__[f.name].__set__
        if f.default is not dataclasses.MISSING:
            namespace[f"_default{i}"] = f.default
            params.append(f"{f.name}=_default{i}")
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory{i}"] = f.default_factory
            params.append(f"{f.name}=_FACTORY")
            body.append(f"    if {f.name} is _FACTORY:\n        {f.name} = _factory{i}()")
        else:
            params.append(f.name)
        body.append(f"    _set{i}(self, {f.name})")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(source, namespace)  # generated from field names only
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {f.name: f.type for f in dataclasses.fields(cls)} | {"return": None}
    init.__doc__ = cls.__init__.__doc__
    type.__setattr__(cls, "__init__", init)
    return cls
