"""Who owns a task (L2): the key of the caller that created it, and the default policy.

A task records the owner key of the caller that created it (``StoredTask.owner``, kept by
every backend). With ownership on, the default, every operation on a task by a caller with
another key answers TaskNotFound, exactly as for a missing task, and ListTasks lists only
the caller's own tasks. Anonymous callers all have the empty key: they share one owner, so a
server without authentication works as before. A policy is a function from the call to a
key (:data:`TaskOwner`); `owner_by_identity` is the default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias

from a2a_core._protocol.call import Call
from a2a_core._protocol.security import AuthenticatedIdentity

__all__ = ["ANONYMOUS_OWNER", "TaskOwner", "owner_by_identity", "owner_key"]

#: The owner of every task created by an unauthenticated caller.
ANONYMOUS_OWNER: Final = ""

#: An ownership policy: the owner key of a call's caller (``ANONYMOUS_OWNER`` for none).
#: Two calls with the same key act on the same tasks.
TaskOwner: TypeAlias = Callable[[Call], str]

# The fields an identity is keyed by, in this order: an OpenID/JWT subject, Starlette's
# `BaseUser.identity` and `SimpleUser.username`, a plain id.
_KEY_FIELDS: Final = ("sub", "identity", "username", "id")


def owner_key(identity: Any) -> str:
    """The owner key of an identity, as `owner_by_identity` finds it.

    An `AuthenticatedIdentity` (verified by the server's ``authenticators``) is keyed by
    its authority (the issuer, or the scheme for keys and passwords) together with its
    subject (`AuthenticatedIdentity.owner_key`), so that one ``sub`` from two issuers is two
    owners; a deployment that trusts them as one maps them together with ``task_owner=``.
    ``None`` is anonymous; a string or an integer is its own key; a mapping or an object is
    keyed by the first of ``sub``, ``identity``, ``username`` and ``id`` it has with a
    string or integer value. Anything else raises :class:`TypeError`: guessing (``str()`` of
    an object, say) could give two callers one key, so such a deployment must say what its
    identities are keyed by, with ``A2AServer(task_owner=...)``.
    """
    if identity is None:
        return ANONYMOUS_OWNER
    if isinstance(identity, AuthenticatedIdentity):
        return identity.owner_key
    if isinstance(identity, str):
        return identity
    if isinstance(identity, int) and not isinstance(identity, bool):
        return str(identity)
    for name in _KEY_FIELDS:
        if isinstance(identity, Mapping):
            value = identity.get(name)
        else:
            try:
                value = getattr(identity, name, None)
            except Exception:  # e.g. Starlette's BaseUser.identity: NotImplementedError
                value = None
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    raise TypeError(
        f"cannot tell the owner of tasks from an identity of type {type(identity).__name__}: "
        "give it a 'sub', 'identity', 'username' or 'id', or pass "
        "A2AServer(task_owner=lambda call: ...) to key identities yourself"
    )


def owner_by_identity(call: Call) -> str:
    """The default policy: the caller's identity (set by the adapter or middleware), keyed
    by `owner_key`; within a tenant, since tasks are looked up in the call's tenant first."""
    return owner_key(call.identity)
