"""Push secrets (L2): what a client sees of a stored webhook config, and encryption at rest.

A push config carries two secrets: ``authentication.credentials`` (sent to the webhook as
``Authorization: <scheme> <credentials>``) and ``token`` (``X-A2A-Notification-Token``).
The spec (§13.2) asks that they be treated as secrets and stored securely, so:

- the server answers Get, List and Create with the secrets **omitted** (`redact_push_config`):
  the wire types make both optional, so a redacted config is still valid for every client,
  and an omitted field cannot be mistaken for a secret and sent back the way a marker such as
  ``"********"`` could (AIP-203 calls such fields ``INPUT_ONLY``);
- a store given a `PushSecretCipher` keeps both encrypted (Fernet: AES-128-CBC with an
  HMAC-SHA256, from the ``cryptography`` package, the ``a2aserve-core[crypto]`` extra), so a dump of
  the store's memory or of Redis shows no secret. Only the delivery path decrypts them.

Rotation is `MultiFernet`'s: the first key encrypts, every key decrypts. Put a new key first,
keep the old ones after it until every stored secret was encrypted again (the Redis store's
``rotate_secrets``, or the tasks' expiry), then drop them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

import msgspec

from a2a_core.types import TaskPushNotificationConfig

from ._push import PushTarget

if TYPE_CHECKING:
    from cryptography.fernet import Fernet, MultiFernet

logger: Final = logging.getLogger("a2a_core.push")

#: What happens to each non-empty secret of a config.
_Change = Callable[[str], str]

__all__ = ["PushSecretCipher", "PushSecretError", "has_push_secrets", "redact_push_config"]


def has_push_secrets(config: TaskPushNotificationConfig) -> bool:
    """Whether the config carries a token or credentials."""
    auth = config.authentication
    return bool(config.token or (auth is not None and auth.credentials))


def redact_push_config(config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
    """The config without its token and credentials (the scheme stays: it is no secret, and
    the v1.0 ``AuthenticationInfo`` requires it)."""
    if not has_push_secrets(config):
        return config
    auth = config.authentication
    if auth is not None and auth.credentials:
        auth = msgspec.structs.replace(auth, credentials="")
    return msgspec.structs.replace(config, token="", authentication=auth)


class PushSecretError(Exception):
    """A stored push secret that no configured key decrypts (a key dropped too early, or
    encrypted secrets read without keys). The message names no secret."""


class PushSecretCipher:
    """Encrypts and decrypts the secrets of push configs with the deployment's keys.

    ``keys``: Fernet keys (url-safe base64 of 32 bytes, as `generate_key` makes them), newest
    first. The first encrypts; all of them decrypt, so a key can be rotated without losing
    the configs stored under the one before. Empty secrets stay empty (nothing to hide).
    Needs the ``cryptography`` package (the ``crypto`` extra: ``pip install cryptography``).
    """

    def __init__(self, keys: Sequence[str | bytes]) -> None:
        if isinstance(keys, str | bytes):
            raise TypeError("keys must be a list of keys, newest first, not one key")
        if not keys:
            raise ValueError("a PushSecretCipher needs at least one key")
        fernet, multi = _fernet()
        try:
            self._fernets = [fernet(key) for key in keys]
        except (ValueError, TypeError):
            # Fernet's message is generic; say which argument and what it must be.
            raise ValueError(
                "push secret keys must be Fernet keys: url-safe base64 of 32 bytes "
                "(PushSecretCipher.generate_key() makes one)"
            ) from None
        self._multi: MultiFernet = multi(self._fernets)

    @staticmethod
    def generate_key() -> str:
        """A new random key (to keep in the deployment's secret store)."""
        fernet, _ = _fernet()
        return fernet.generate_key().decode()

    def encrypt(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        """The config with its token and credentials encrypted under the first key."""
        return _map_secrets(config, lambda value: self._multi.encrypt(value.encode()).decode())

    def decrypt(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        """The config with its secrets in clear; `PushSecretError` if no key opens one."""
        return _map_secrets(config, self._open)

    def rotate(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig | None:
        """The config (encrypted) with its secrets encrypted again under the first key, or
        ``None`` if they already are (nothing to write back)."""
        if self._under_first_key(config):
            return None
        return _map_secrets(config, self._rotate)

    def decrypt_or_redact(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        """A stored config decrypted for Get or List; one no key opens comes back without its
        secrets (and a warning), so that the client can still see, replace or delete it."""
        try:
            return self.decrypt(config)
        except PushSecretError:
            logger.warning(
                "push config %r of task %r: its secrets are not readable with any key",
                config.id,
                config.task_id,
            )
            return redact_push_config(config)

    def decrypt_targets(self, targets: Sequence[PushTarget]) -> list[PushTarget]:
        """Stored targets decrypted for delivery; one no key opens is skipped (with an
        error): its webhook, called without its credentials, would refuse the call anyway."""
        opened: list[PushTarget] = []
        for target in targets:
            try:
                config = self.decrypt(target.config)
            except PushSecretError:
                logger.error(
                    "push config %r of task %r not delivered: its secrets are not readable "
                    "with any key",
                    target.config.id,
                    target.config.task_id,
                )
                continue
            opened.append(PushTarget(config=config, legacy_v0_3=target.legacy_v0_3))
        return opened

    def _open(self, value: str) -> str:
        from cryptography.fernet import InvalidToken

        try:
            return self._multi.decrypt(value.encode()).decode()
        except (InvalidToken, UnicodeError):
            raise PushSecretError("a stored push secret is not readable with any key") from None

    def _rotate(self, value: str) -> str:
        from cryptography.fernet import InvalidToken

        try:
            return self._multi.rotate(value.encode()).decode()
        except InvalidToken:
            raise PushSecretError("a stored push secret is not readable with any key") from None

    def _under_first_key(self, config: TaskPushNotificationConfig) -> bool:
        from cryptography.fernet import InvalidToken

        auth = config.authentication
        for value in (config.token, auth.credentials if auth is not None else ""):
            if value:
                try:
                    self._fernets[0].decrypt(value.encode())
                except InvalidToken:
                    return False
        return True


def _map_secrets(config: TaskPushNotificationConfig, change: _Change) -> TaskPushNotificationConfig:
    if not has_push_secrets(config):
        return config
    auth = config.authentication
    if auth is not None and auth.credentials:
        auth = msgspec.structs.replace(auth, credentials=change(auth.credentials))
    token = change(config.token) if config.token else ""
    return msgspec.structs.replace(config, token=token, authentication=auth)


def _fernet() -> tuple[type[Fernet], type[MultiFernet]]:
    """Import ``cryptography`` only when a cipher is made: it is an optional extra."""
    try:
        from cryptography.fernet import Fernet, MultiFernet
    except ImportError:
        install = "pip install cryptography"
        raise ImportError(
            f"encrypting push secrets needs the cryptography package: {install}"
        ) from None
    return Fernet, MultiFernet
