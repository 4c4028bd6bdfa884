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
once the socket accepts connections, exit code 0 after a clean stop on SIGTERM.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import msgspec

from a2a_core.server import A2AServer
from a2a_core.server._server import _is_loopback
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

__all__ = [
    "ENV_PREFIX",
    "ServeSettings",
    "SettingsError",
    "add_serve_arguments",
    "backend_options",
    "card_for",
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
        "console",
        "--console",
        "serve the developer console at /a2a-console/ (for development: anyone who can "
        "reach the server can open it)",
        "bool",
    ),
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
            raise SettingsError("--sql needs a2aserve-sql: pip install a2aserve-sql") from None
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
                "--redis needs a2aserve-redis: pip install a2aserve-redis"
            ) from None
        options["backend"] = RedisBackend(settings.redis, prefix=settings.redis_prefix)
    if settings.recovery != "fail":
        options["recovery"] = settings.recovery
    if settings.otel:
        try:
            from a2a_core.otel import OpenTelemetryObserver
        except ImportError:
            raise SettingsError(
                "--otel needs a2aserve-core[otel]: pip install 'a2aserve-core[otel]' "
                "opentelemetry-sdk"
            ) from None
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
        from a2a_core.signing import CardSigningKey

        key = CardSigningKey.from_pem(pem)
    except ImportError:
        raise SettingsError(
            "--signing-key needs a2aserve-core[signing]: pip install 'a2aserve-core[signing]'"
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
    accepts connections."""
    stream = sys.stdout if out is None else out
    hooks = list(on_shutdown)
    if settings.otel:
        try:
            from a2a_core.otel import (
                OpenTelemetryObserver,
                OpenTelemetrySetupError,
                configure_from_environment,
            )
        except ImportError:
            raise SettingsError(
                "--otel needs a2aserve-core[otel]: pip install 'a2aserve-core[otel]' "
                "opentelemetry-sdk"
            ) from None
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
    if not _is_loopback(settings.host) and not settings.public_url:
        logger.warning(
            "listening on %s without --public-url: the card tells clients %s, which only "
            "this machine can reach",
            settings.host,
            url,
        )

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
        try:
            from a2a_aiohttp import run as run_aiohttp
        except ImportError:
            raise SettingsError(
                "--adapter aiohttp needs a2aserve-aiohttp: pip install a2aserve-aiohttp"
            ) from None
        run_aiohttp(server, middlewares=aiohttp_middlewares, **common)
        return
    try:
        import uvicorn  # noqa: F401  (the adapter's run needs it)

        from a2a_starlette import run as run_starlette
    except ImportError:
        raise SettingsError(
            "--adapter starlette needs a2aserve-starlette with uvicorn: "
            "pip install 'a2aserve-starlette[uvicorn]'"
        ) from None
    run_starlette(server, asgi_middleware=asgi_middleware, **common)


def _grpc_server(server: A2AServer, settings: ServeSettings) -> Any:
    assert settings.grpc_port is not None
    try:
        from a2a_grpc import GrpcServer
    except ImportError:
        raise SettingsError("--grpc-port needs a2aserve-grpc: pip install a2aserve-grpc") from None
    public_host = urlsplit(settings.url).hostname or settings.host
    return GrpcServer(
        server,
        host=settings.host,
        port=settings.grpc_port,
        public_address=f"{public_host}:{settings.grpc_port}",
        base_url=settings.url,
    )


def _level(name: str) -> int:
    level: int = logging.getLevelName(name.upper())
    return level
