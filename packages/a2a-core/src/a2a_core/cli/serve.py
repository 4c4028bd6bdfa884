"""``a2aserve serve MODULE:ATTR``: serve an agent as a whole process, and the settings
machinery the examples share with it.

The target is an agent function (``async def agent(ctx)``; the card is made from it: its
name, its docstring, streaming on), an `A2AServer`, or a zero-argument factory returning
either. Every setting is a flag and an environment variable (``A2ASERVE_<NAME>``; a flag
wins); a URL that may carry a password (``--sql``, ``--redis``) may also come from a file
(``A2ASERVE_SQL_FILE``), so that it never has to be on a command line, which every user of
the machine can read (``ps``).

The process serves through an adapter's ``run`` (`a2a_starlette.run`, `a2a_aiohttp.run`):
the agent at the root, ``/healthz`` and ``/readyz`` beside it, the line with the URL printed
once the socket accepts connections, exit code 0 after a clean stop on SIGTERM. The sockets
are bound here first (`listen`), so that a port in use is the same one line under either
adapter; ``--log-level`` is the whole process's (`configure_logging`).
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import functools
import importlib
import inspect
import logging
import os
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import msgspec

from a2a_core._install import install_hint
from a2a_core.server import A2AServer
from a2a_core.server._server import _is_loopback
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

__all__ = [
    "ENV_PREFIX",
    "ListenError",
    "ServeSettings",
    "SettingsError",
    "add_serve_arguments",
    "backend_options",
    "card_for",
    "configure_logging",
    "listen",
    "load_card",
    "load_target",
    "run",
    "server_for",
    "server_options",
    "settings_from",
    "signing_options",
]

logger = logging.getLogger("a2a_core.cli")

#: The prefix of every setting's environment variable: ``A2ASERVE_PORT``...
ENV_PREFIX: Final = "A2ASERVE_"
ADAPTERS: Final = ("starlette", "aiohttp")
LOG_LEVELS: Final = ("critical", "error", "warning", "info", "debug")
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off", ""})
#: ``--recovery``: the modes of `a2a_core.server.RecoveryPolicy`.
RECOVERY_MODES: Final = ("fail", "retry", "resume")


class SettingsError(ValueError):
    """A setting that cannot be used (a bad value, a missing package, a target that is not
    there): one line that says what is wrong, for a usage exit (2)."""


class ListenError(OSError):
    """The server cannot listen where it was told (a port in use, an address that is not
    this machine's): one line that says so, for exit code 1."""


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """What the process serves with; `settings_from` reads them from flags and environment."""

    adapter: str = "starlette"
    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str | None = None
    sql: str | None = None
    redis: str | None = None
    redis_prefix: str = "a2a:"
    signing_key: str | None = None
    otel: bool = False
    grpc_port: int | None = None
    log_level: str = "info"
    access_log: bool = False
    health: bool = True
    console: bool = False
    recovery: str = "fail"
    allowed_hosts: str | None = None
    show_errors: bool = False

    @property
    def url(self) -> str:
        """The URL clients use: ``public_url``, or ``http://HOST:PORT`` (``127.0.0.1`` for
        a wildcard host, which no client can dial)."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = self.host
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        elif ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class _Setting:
    name: str  # the field and the environment variable's tail
    flag: str
    help: str
    kind: str = "str"  # str, int, bool, choice
    choices: tuple[str, ...] = ()
    secret_file: bool = False  # also A2ASERVE_<NAME>_FILE


_SETTINGS: Final = (
    _Setting("adapter", "--adapter", "web framework", "choice", ADAPTERS),
    _Setting("host", "--host", "address to listen on"),
    _Setting("port", "--port", "port to listen on", "int"),
    _Setting("public_url", "--public-url", "URL clients use to reach this server"),
    _Setting(
        "sql",
        "--sql",
        "keep tasks in this database (sqlite+aiosqlite:///tasks.db, postgresql+asyncpg://...,"
        " mysql+asyncmy://...; needs a2aserve-sql)",
        secret_file=True,
    ),
    _Setting(
        "redis",
        "--redis",
        "share tasks with other replicas through this Redis (redis://host:6379/0; needs "
        "a2aserve-redis)",
        secret_file=True,
    ),
    _Setting("redis_prefix", "--redis-prefix", "key prefix in Redis"),
    _Setting(
        "recovery",
        "--recovery",
        "what becomes of a running task whose process is lost or stopped: fail it, retry "
        "(run the agent again) or resume (again, from its last checkpoint); needs --sql or "
        "--redis (see docs/durability.md)",
        "choice",
        RECOVERY_MODES,
    ),
    _Setting(
        "signing_key",
        "--signing-key",
        "sign the agent card with this private key file (PEM) and serve its JWKS",
    ),
    _Setting(
        "otel",
        "--otel",
        "export OpenTelemetry traces and metrics, configured from the OTEL_* variables "
        "(needs opentelemetry-sdk)",
        "bool",
    ),
    _Setting(
        "grpc_port",
        "--grpc-port",
        "also serve gRPC on HOST:N (needs a2aserve-grpc)",
        "int",
    ),
    _Setting("log_level", "--log-level", "log level", "choice", LOG_LEVELS),
    _Setting("access_log", "--access-log", "log every request", "bool"),
    _Setting("health", "--health", "serve /healthz and /readyz", "bool"),
    _Setting(
        "allowed_hosts",
        "--allowed-hosts",
        "the Host names answered, comma-separated (agent.example.com, .example.com for a "
        "domain, * for any); others get 421. Unset: any, or on 127.0.0.1 loopback's names "
        "and --public-url's (against DNS rebinding, docs/security.md)",
    ),
    _Setting(
        "show_errors",
        "--show-errors",
        "a failed task says what the agent raised (for development: whoever reads the task "
        "reads it)",
        "bool",
    ),
    _Setting(
        "console",
        "--console",
        "serve the developer console at /a2a-console/ (for development: anyone who can "
        "reach the server can open it)",
        "bool",
    ),
)

#: What ``--otel`` says when the OpenTelemetry API is missing (the otel extra of
#: a2aserve-core is that API alone; the SDK is the deployment's choice).
_OTEL_MISSING: Final = (
    "--otel needs OpenTelemetry (the otel extra of a2aserve-core, and the SDK): "
    "pip install opentelemetry-api opentelemetry-sdk"
)

#: What the JWKS of ``--signing-key`` is served at.
JWKS_PATH: Final = "/.well-known/jwks.json"


def add_serve_arguments(parser: argparse.ArgumentParser, **defaults: Any) -> None:
    """Add every setting's flag to ``parser`` (each also ``A2ASERVE_<NAME>``); ``defaults``
    replace `ServeSettings`' own (the examples' host or log level, say)."""
    base = dataclasses.replace(ServeSettings(), **defaults)
    parser.set_defaults(serve_defaults=base)
    for setting in _SETTINGS:
        env = ENV_PREFIX + setting.name.upper()
        default = getattr(base, setting.name)
        shown = "" if default is None else f"default: {default}; "
        where = f"{env}" + (f" or {env}_FILE" if setting.secret_file else "")
        help_text = f"{setting.help} ({shown}env: {where})"
        if setting.kind == "bool":
            parser.add_argument(
                setting.flag,
                dest=setting.name,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=help_text,
            )
        else:
            parser.add_argument(
                setting.flag,
                dest=setting.name,
                default=None,
                type=int if setting.kind == "int" else str,
                choices=setting.choices or None,
                metavar=setting.name.upper() if not setting.choices else None,
                help=help_text,
            )


def settings_from(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> ServeSettings:
    """The settings: each flag given, else its environment variable, else the default.
    Raises `SettingsError` for a value that does not parse (naming the variable)."""
    env = os.environ if environ is None else environ
    base: ServeSettings = getattr(args, "serve_defaults", None) or ServeSettings()
    values: dict[str, Any] = {}
    for setting in _SETTINGS:
        given = getattr(args, setting.name, None)
        if given is not None:
            if setting.kind == "int":
                given = _port(given, setting.flag)
            values[setting.name] = given
            continue
        raw, source = _from_environment(env, setting)
        if raw is not None:
            values[setting.name] = _parse(setting, raw, source)
    settings = dataclasses.replace(base, **values)
    _warn_about_secrets_in_flags(args)
    return settings


def _from_environment(env: Mapping[str, str], setting: _Setting) -> tuple[str | None, str]:
    """The variable's text, or its file's; a blank variable counts as unset (a compose
    file's ``A2ASERVE_SQL:`` with no value must not hide ``A2ASERVE_SQL_FILE``)."""
    name = ENV_PREFIX + setting.name.upper()
    if env.get(name, "").strip():
        return env[name], name
    if setting.secret_file and env.get(name + "_FILE", "").strip():
        path = Path(env[name + "_FILE"])
        try:
            return path.read_text().strip(), name + "_FILE"
        except OSError as exc:
            raise SettingsError(f"{name}_FILE: cannot read {str(path)!r}: {exc.strerror}") from None
    return None, name


def _parse(setting: _Setting, raw: str, source: str) -> Any:
    value = raw.strip()
    if setting.kind == "int":
        try:
            number = int(value)
        except ValueError:
            raise SettingsError(f"{source} must be a whole number, not {raw!r}") from None
        return _port(number, source)
    if setting.kind == "bool":
        if value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
        raise SettingsError(f"{source} must be 1/0, true/false, yes/no or on/off, not {raw!r}")
    if setting.kind == "choice":
        if value.lower() not in setting.choices:
            raise SettingsError(
                f"{source} must be one of {', '.join(setting.choices)}, not {raw!r}"
            )
        return value.lower()
    if not value:
        raise SettingsError(f"{source} is empty")
    return value


def _port(number: int, source: str) -> int:
    """A TCP port (every int setting is one): 0 to 65535, 0 meaning any free port."""
    if not 0 <= number <= 65535:
        raise SettingsError(f"{source} must be a port number, 0 to 65535, not {number}")
    return number


def _warn_about_secrets_in_flags(args: argparse.Namespace) -> None:
    for name in ("sql", "redis"):
        url = getattr(args, name, None)
        if url and urlsplit(url).password:
            logger.warning(
                "--%s carries a password: anyone on this machine can read it from the "
                "process list; set %s%s (or %s%s_FILE) instead",
                name,
                ENV_PREFIX,
                name.upper(),
                ENV_PREFIX,
                name.upper(),
            )


# --- the target -------------------------------------------------------------------------


def load_target(spec: str) -> Any:
    """The object ``MODULE:ATTR`` names (``ATTR`` may be dotted), the current folder first
    on the import path, as ``python -m`` would. Raises `SettingsError` naming what was not
    found; an error raised by the module itself propagates, traceback and all."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise SettingsError(f"expected MODULE:ATTR (e.g. app:agent), not {spec!r}")
    if module_name.startswith("."):
        raise SettingsError(f"the module of {spec!r} must be absolute (app, pkg.app), not relative")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        # Only when the module itself (or a package on its path) is missing: a module
        # that fails to import one of its own dependencies is the module's error.
        missing = exc.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            raise SettingsError(
                f"no module named {module_name!r} (looked in {os.getcwd()} and the environment)"
            ) from None
        raise
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise SettingsError(f"module {module_name!r} has no attribute {attribute!r}") from None
    return target


def server_for(
    target: Any,
    settings: ServeSettings,
    *,
    spec: str = "the target",
    card: AgentCard | None = None,
) -> A2AServer:
    """The `A2AServer` to serve: ``target`` itself, what its factory returns, or one built
    around an agent function (with ``card``, or a card made from the function), with the
    options of the settings (`server_options`)."""
    if not isinstance(target, A2AServer) and _is_factory(target):
        target = target()
        if inspect.isawaitable(target):
            raise SettingsError(f"{spec} is an async factory: make it a plain function")
    if isinstance(target, A2AServer):
        given = [
            flag
            for flag, value in (
                ("--sql", settings.sql),
                ("--redis", settings.redis),
                ("--signing-key", settings.signing_key),
                ("--recovery", settings.recovery != "fail"),
                ("--card", card),
            )
            if value
        ]
        if given:
            raise SettingsError(
                f"{spec} is an A2AServer, built with its own options: "
                f"{', '.join(given)} cannot change it (give it to A2AServer(...) instead)"
            )
        if settings.console and target.console_path is None:
            try:
                target.serve_console()  # a page of its own: nothing of the server changes
            except ValueError as exc:
                raise SettingsError(f"--console: {exc}") from None
        return target
    if not callable(target) or not _takes_one_argument(target):
        raise SettingsError(
            f"{spec} is a {type(target).__name__}: expected an agent function "
            "(async def agent(ctx)), an A2AServer, or a function of no arguments returning "
            "either"
        )
    return A2AServer(
        target,
        card=card or card_for(target),
        base_url=settings.url,
        **server_options(settings),
    )


def _is_factory(target: Any) -> bool:
    if not callable(target) or isinstance(target, type):
        return False
    try:
        parameters = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return False
    return not [p for p in parameters if p.default is p.empty and p.kind not in _VARIADIC]


_VARIADIC: Final = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _takes_one_argument(target: Any) -> bool:
    try:
        inspect.signature(target).bind(None)
    except (TypeError, ValueError):
        return False
    return True


def card_for(agent: Callable[..., Any]) -> AgentCard:
    """The card of a bare agent function: its name (``tutorial_agent``: "Tutorial agent"),
    its docstring as the description, one skill, text in and out, streaming on."""
    function_name = getattr(agent, "__name__", type(agent).__name__)
    name = function_name.replace("_", " ").strip().capitalize() or "Agent"
    description = inspect.getdoc(agent) or f"The {name} agent."
    summary = description.split("\n\n", 1)[0].replace("\n", " ")
    return AgentCard(
        name=name,
        description=description,
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id=function_name, name=name, description=summary, tags=[function_name])],
    )


def load_card(spec: str) -> AgentCard:
    """``--card``: a JSON file (``*.json``, the v1.0 card) or ``MODULE:ATTR`` naming an
    `AgentCard` (or a function of no arguments returning one)."""
    if spec.endswith(".json"):
        try:
            return _card_from_json(Path(spec).read_bytes())
        except OSError as exc:
            raise SettingsError(f"--card: cannot read {spec!r}: {exc.strerror}") from None
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
            raise SettingsError(f"--card: {spec!r} is not a valid agent card: {exc}") from None
    found = load_target(spec)
    if _is_factory(found):
        found = found()
    if not isinstance(found, AgentCard):
        raise SettingsError(f"--card: {spec} is a {type(found).__name__}, not an AgentCard")
    return found


def _card_from_json(data: bytes) -> AgentCard:
    """A v1.0 card from JSON, whose ``supportedInterfaces`` may be left out or empty: the
    server fills them in (the wire type wants at least one, so one stands in meanwhile)."""
    from a2a_core import codec

    document = msgspec.json.decode(data)
    if not isinstance(document, dict):
        raise ValueError("expected a JSON object")
    interfaces = document.get("supportedInterfaces")
    if interfaces:
        return codec.decode(data, AgentCard)
    document["supportedInterfaces"] = [_STAND_IN]
    card = codec.decode(msgspec.json.encode(document), AgentCard)
    return msgspec.structs.replace(card, supported_interfaces=[])


_STAND_IN: Final = {
    "url": "http://stand-in.invalid",
    "protocolBinding": "JSONRPC",
    "protocolVersion": "1.0",
}


# --- the options and the run ------------------------------------------------------------


def server_options(settings: ServeSettings) -> dict[str, Any]:
    """The `A2AServer` options of the settings: the backend of ``sql`` or ``redis`` (in
    memory without either), the observer of ``otel``, ``console=True`` for ``console``, and
    the card signing key of ``signing_key`` (as ``protocol=``)."""
    options = backend_options(settings)
    if settings.console:
        options["console"] = True
    signing = signing_options(settings)
    if signing:
        from a2a_core.protocol import ProtocolOptions

        options["protocol"] = ProtocolOptions(**signing)
    return options


def allowed_hosts_of(settings: ServeSettings) -> list[str] | None:
    """``--allowed-hosts`` as a list (``None`` when not given)."""
    if settings.allowed_hosts is None or not settings.allowed_hosts.strip():
        return None
    return [name.strip() for name in settings.allowed_hosts.split(",") if name.strip()]


def backend_options(settings: ServeSettings) -> dict[str, Any]:
    """``backend=`` for ``sql`` or ``redis`` (none: in memory), ``recovery=`` for
    ``recovery`` (none for ``fail``, the server's default), ``observer=`` for ``otel``."""
    options: dict[str, Any] = {}
    if settings.sql and settings.redis:
        raise SettingsError("choose one backend: --sql or --redis")
    if settings.sql:
        try:
            from a2a_sql import SqlBackend
        except ImportError:
            raise SettingsError(
                "--sql needs a2aserve-sql with the driver extra of your database (postgresql, "
                "sqlite or mysql): " + install_hint("a2aserve-sql", "sqlite")
            ) from None
        try:
            options["backend"] = SqlBackend(settings.sql)
        except Exception as exc:  # SQLAlchemy's: a URL it cannot parse, a missing driver
            said = str(exc)
            password = urlsplit(settings.sql).password if "://" in settings.sql else None
            if password:
                said = said.replace(password, "***")
            raise SettingsError(f"--sql: not a database URL this can use: {said}") from None
    elif settings.redis:
        try:
            from a2aserve_redis import RedisBackend
        except ImportError:
            raise SettingsError(
                "--redis needs a2aserve-redis: " + install_hint("a2aserve-redis")
            ) from None
        options["backend"] = RedisBackend(settings.redis, prefix=settings.redis_prefix)
    if settings.recovery != "fail":
        options["recovery"] = settings.recovery
    if settings.otel:
        try:
            from a2a_core.otel import OpenTelemetryObserver
        except ImportError:
            raise SettingsError(_OTEL_MISSING) from None
        options["observer"] = OpenTelemetryObserver()
    return options


def signing_options(settings: ServeSettings) -> dict[str, Any]:
    """The `ProtocolOptions` of ``signing_key``: the key and the JWKS path (none without)."""
    if not settings.signing_key:
        return {}
    try:
        pem = Path(settings.signing_key).read_bytes()
    except OSError as exc:
        raise SettingsError(
            f"--signing-key: cannot read {settings.signing_key!r}: {exc.strerror}"
        ) from None
    try:
        from cryptography.exceptions import UnsupportedAlgorithm

        from a2a_core.signing import CardSigningKey

        key = CardSigningKey.from_pem(pem)
    except ImportError:
        raise SettingsError(
            "--signing-key needs the signing extra of a2aserve-core: "
            "pip install 'PyJWT[crypto]' rfc8785"
        ) from None
    except (ValueError, TypeError, UnsupportedAlgorithm):
        # cryptography's words for it (MalformedFraming, "Password was not given") say
        # less than what is wanted.
        raise SettingsError(
            f"--signing-key: {settings.signing_key!r} is not a private key this can sign "
            "with: an unencrypted PEM file of an EC, RSA or EdDSA key"
        ) from None
    return {"card_signing_key": key, "jwks_path": JWKS_PATH}


def run(
    server: A2AServer,
    settings: ServeSettings,
    *,
    on_shutdown: Sequence[Callable[[], object]] = (),
    asgi_middleware: Sequence[Callable[[Any], Any]] = (),
    aiohttp_middlewares: Sequence[Any] = (),
    out: Any = None,
) -> None:
    """Serve ``server`` with the settings until SIGTERM or SIGINT: through the chosen
    adapter's ``run``, with gRPC beside it for ``grpc_port``, the OpenTelemetry SDK set up
    for ``otel`` (and flushed last), and one line on ``out`` (stdout) once the server
    accepts connections. Raises `ListenError` when it cannot listen on ``host:port``,
    before the server or the adapter starts."""
    configure_logging(settings.log_level)
    stream = sys.stdout if out is None else out
    # Set on the server as built (by `a2aserve serve`, an example, or the user's own
    # A2AServer): neither changes what the server is, only whom it answers and how much
    # a failure says.
    hosts = allowed_hosts_of(settings)
    if hosts is not None:
        try:
            server.allow_hosts(hosts)
        except ValueError as exc:
            raise SettingsError(f"--allowed-hosts: {exc}") from None
    if settings.show_errors:
        server.show_errors = True
    hooks = list(on_shutdown)
    if settings.otel:
        try:
            from a2a_core.otel import (
                OpenTelemetryObserver,
                OpenTelemetrySetupError,
                configure_from_environment,
            )
        except ImportError:
            raise SettingsError(_OTEL_MISSING) from None
        try:
            hooks.append(configure_from_environment(_level(settings.log_level)))
        except OpenTelemetrySetupError as exc:
            raise SettingsError(f"--otel: {exc}") from None
        if isinstance(server.observer, OpenTelemetryObserver):
            server.observer.agent_name = server.card.name
        elif server.observer is None:
            logger.warning("--otel: the server has no observer, so it exports nothing")
    companions = []
    grpc_note = ""
    if settings.grpc_port is not None:
        companions.append(_grpc_server(server, settings))
        grpc_note = f"; gRPC on {settings.host}:{settings.grpc_port}"
    url = settings.url

    def ready() -> None:
        card_url = url + "/.well-known/agent-card.json"
        print(
            f"A2A agent {server.card.name!r} on {url} ({settings.adapter}); card at "
            f"{card_url}{grpc_note}",
            file=stream,
            flush=True,
        )
        if server.console_path is not None:
            print(f"Developer console at {url}{server.console_path}", file=stream, flush=True)

    common: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "public_url": url,
        "health": settings.health,
        "log_level": settings.log_level,
        "access_log": settings.access_log,
        "ready": ready,
        "companions": companions,
        "on_shutdown": hooks,
    }
    if settings.adapter == "aiohttp":
        serve = _aiohttp_run(aiohttp_middlewares)
    else:
        serve = _starlette_run(asgi_middleware)
    # Bound here, not by the adapter: a port in use is then one line and the same exit
    # code under either adapter (uvicorn would log it, and exit 3, after starting the app).
    sockets = listen(settings.host, settings.port)
    try:
        _warn_if_unreachable(settings)
        serve(server, sockets=sockets, **common)
    finally:
        for sock in sockets:
            sock.close()


def _warn_if_unreachable(settings: ServeSettings) -> None:
    if not _is_loopback(settings.host) and not settings.public_url:
        logger.warning(
            "listening on %s without --public-url: the card tells clients %s, which only "
            "this machine can reach",
            settings.host,
            settings.url,
        )


def _aiohttp_run(middlewares: Sequence[Any]) -> Callable[..., None]:
    try:
        from a2a_aiohttp import run as run_aiohttp
    except ImportError:
        raise SettingsError(
            "--adapter aiohttp needs a2aserve-aiohttp: " + install_hint("a2aserve-aiohttp")
        ) from None
    return functools.partial(run_aiohttp, middlewares=middlewares)


def _starlette_run(asgi_middleware: Sequence[Callable[[Any], Any]]) -> Callable[..., None]:
    try:
        from a2a_starlette import run as run_starlette
    except ImportError:
        raise SettingsError(
            "--adapter starlette needs a2aserve-starlette with uvicorn: "
            + install_hint("a2aserve-starlette", "uvicorn")
        ) from None
    try:
        import uvicorn  # noqa: F401  (the adapter's run needs it)
    except ImportError:
        raise SettingsError("--adapter starlette needs uvicorn: pip install uvicorn") from None
    return functools.partial(run_starlette, asgi_middleware=asgi_middleware)


def listen(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to ``host:port`` for the adapters to serve on, one per address of
    ``host`` (``localhost``: 127.0.0.1 and ::1), bound as asyncio's ``create_server`` binds
    them. Raises `ListenError` with one line that says why not."""
    where = _address(host, port)
    try:
        found = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise ListenError(f"cannot listen on {where}: {exc.strerror}") from None
    bound: list[socket.socket] = []
    skipped: OSError | None = None
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            try:
                bound.append(_bind(family, kind, proto, address))
            except OSError as exc:
                if exc.errno not in _UNAVAILABLE:
                    raise
                # An address this machine cannot have (IPv6 off in a container, for
                # ``localhost``'s ::1): skipped, as asyncio's create_server skips it.
                skipped = exc
        if not bound and skipped is not None:
            raise skipped
    except OSError as exc:
        for sock in bound:
            sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ListenError(f"port {where} is in use (choose another with --port)") from None
        raise ListenError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    return bound


#: Why an address of the host cannot be bound here, as opposed to a mistake.
_UNAVAILABLE: Final = frozenset({errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT})


def _bind(family: int, kind: int, proto: int, address: Any) -> socket.socket:
    sock = socket.socket(family, kind, proto)
    try:
        if os.name == "posix":  # a restart may bind while the last one's connections linger
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:  # IPv4 has a socket of its own, as asyncio binds it
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host or '*'}:{port}"


def _grpc_server(server: A2AServer, settings: ServeSettings) -> Any:
    assert settings.grpc_port is not None
    try:
        from a2a_grpc import GrpcServer
    except ImportError:
        raise SettingsError(
            "--grpc-port needs a2aserve-grpc: " + install_hint("a2aserve-grpc")
        ) from None
    public_host = urlsplit(settings.url).hostname or settings.host
    return GrpcServer(
        server,
        host=settings.host,
        port=settings.grpc_port,
        public_address=f"{public_host}:{settings.grpc_port}",
        base_url=settings.url,
    )


#: Libraries that say too much below WARNING for a server's log: SQLAlchemy's engine logs
#: every statement at INFO, httpx every request; httpcore and hpack every step at DEBUG.
#: They stay at WARNING whatever the level, unless configured otherwise before.
CHATTY_LOGGERS: Final = (
    "aiosqlite",
    "alembic",
    "asyncio",
    "grpc",
    "h11",
    "h2",
    "hpack",
    "httpcore",
    "httpx",
    "multipart",
    "opentelemetry",
    "python_multipart",
    "redis",
    "sqlalchemy",
    "urllib3",
)


def configure_logging(level: str) -> None:
    """``--log-level`` for the whole process: the root logger, so that the agent's own
    loggers follow it as ours do (a handler added when it has none, as a process would
    print nothing below WARNING otherwise), with `CHATTY_LOGGERS` kept at WARNING."""
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(format="%(levelname)s:     %(name)s: %(message)s")
    root.setLevel(_level(level))
    for name in CHATTY_LOGGERS:
        chatty = logging.getLogger(name)
        # A level set before (by the agent's module, say) is somebody's choice: kept.
        if chatty.level == logging.NOTSET:
            chatty.setLevel(max(logging.WARNING, _level(level)))


def _level(name: str) -> int:
    level: int = logging.getLevelName(name.upper())
    return level
