"""The settings of ``a2aserve serve`` read in this process: flags over environment over
defaults, values that do not parse, secrets from files, and what the target may be."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import pytest

from a2a_core.cli.serve import (
    ServeSettings,
    SettingsError,
    add_serve_arguments,
    card_for,
    server_for,
    server_options,
    settings_from,
)
from a2a_core.server import A2AServer, TaskContext


def parse(*argv: str, environ: dict[str, str] | None = None) -> ServeSettings:
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    return settings_from(parser.parse_args(list(argv)), environ or {})


def test_defaults() -> None:
    settings = parse()
    assert settings == ServeSettings()
    assert settings.url == "http://127.0.0.1:8000"
    assert parse("--host", "0.0.0.0").url == "http://127.0.0.1:8000"  # dialable
    assert parse("--host", "::1", "--port", "9").url == "http://[::1]:9"


def test_a_flag_wins_over_the_environment_which_wins_over_the_default() -> None:
    environ = {"A2ASERVE_PORT": "9000", "A2ASERVE_ADAPTER": "AIOHTTP", "A2ASERVE_OTEL": "yes"}
    from_env = parse(environ=environ)
    assert (from_env.port, from_env.adapter, from_env.otel) == (9000, "aiohttp", True)
    flagged = parse("--port", "9001", "--adapter", "starlette", "--no-otel", environ=environ)
    assert (flagged.port, flagged.adapter, flagged.otel) == (9001, "starlette", False)


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("A2ASERVE_PORT", "eighty", "A2ASERVE_PORT must be a whole number, not 'eighty'"),
        ("A2ASERVE_ACCESS_LOG", "maybe", "A2ASERVE_ACCESS_LOG must be 1/0"),
        ("A2ASERVE_LOG_LEVEL", "loud", "A2ASERVE_LOG_LEVEL must be one of critical"),
    ],
)
def test_a_value_that_does_not_parse_names_its_variable(
    variable: str, value: str, said: str
) -> None:
    with pytest.raises(SettingsError, match=said):
        parse(environ={variable: value})


def test_a_secret_url_may_come_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "db-url"
    secret.write_text("postgresql+asyncpg://app:s3cret@db/app\n")
    settings = parse(environ={"A2ASERVE_SQL_FILE": str(secret)})
    assert settings.sql == "postgresql+asyncpg://app:s3cret@db/app"
    # The variable itself wins over the file.
    assert parse(environ={"A2ASERVE_SQL": "x", "A2ASERVE_SQL_FILE": str(secret)}).sql == "x"
    with pytest.raises(SettingsError, match="A2ASERVE_REDIS_FILE: cannot read"):
        parse(environ={"A2ASERVE_REDIS_FILE": str(tmp_path / "missing")})


def test_a_password_on_the_command_line_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "a2a_core.cli")
    parse("--sql", "postgresql+asyncpg://app:s3cret@db/app")
    (record,) = caplog.records
    assert "--sql carries a password" in record.getMessage()
    assert "A2ASERVE_SQL" in record.getMessage()
    assert "s3cret" not in record.getMessage()
    caplog.clear()
    parse("--sql", "sqlite+aiosqlite:///tasks.db", environ={"A2ASERVE_REDIS": "redis://:p@h/0"})
    assert not caplog.records  # no password on the command line


async def greeter(ctx: TaskContext) -> str:
    """Greets you.

    More words that stay in the description."""
    return f"Hello, {ctx.text}!"


def test_the_card_of_a_function() -> None:
    card = card_for(greeter)
    assert card.name == "Greeter"
    assert card.description.startswith("Greets you.\n\nMore words")
    assert card.capabilities.streaming is True
    assert [(s.id, s.description) for s in card.skills] == [("greeter", "Greets you.")]


def test_what_the_target_may_be() -> None:
    settings = ServeSettings(port=9)
    built = server_for(greeter, settings)
    assert built.card.name == "Greeter"
    assert built.protocol.base_url == "http://127.0.0.1:9"
    given = A2AServer(greeter, card=card_for(greeter))
    assert server_for(given, settings) is given
    assert server_for(lambda: given, settings) is given  # a factory
    assert server_for(lambda: greeter, settings).card.name == "Greeter"
    with pytest.raises(SettingsError, match="is an A2AServer"):
        server_for(given, ServeSettings(sql="sqlite+aiosqlite:///x.db"))
    with pytest.raises(SettingsError, match="is a int"):
        server_for(42, settings, spec="app:x")
    with pytest.raises(SettingsError, match="is a function"):
        server_for(lambda a, b: None, settings, spec="app:x")


def test_a_blank_variable_counts_as_unset(tmp_path: Path) -> None:
    secret = tmp_path / "db-url"
    secret.write_text("sqlite+aiosqlite:///tasks.db")
    environ = {"A2ASERVE_SQL": "", "A2ASERVE_SQL_FILE": str(secret), "A2ASERVE_HOST": " "}
    settings = parse(environ=environ)
    assert settings.sql == "sqlite+aiosqlite:///tasks.db"  # the file, not "nothing"
    assert settings.host == "127.0.0.1"
    assert parse(environ={"A2ASERVE_HEALTH": "", "A2ASERVE_REDIS_PREFIX": ""}) == ServeSettings()
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(SettingsError, match="A2ASERVE_SQL_FILE is empty"):
        parse(environ={"A2ASERVE_SQL_FILE": str(tmp_path / "empty")})


@pytest.mark.parametrize("port", ["65536", "99999", "-1"])
def test_a_port_out_of_range_is_refused(port: str) -> None:
    with pytest.raises(SettingsError, match="A2ASERVE_PORT must be a port number"):
        parse(environ={"A2ASERVE_PORT": port})
    with pytest.raises(SettingsError, match="--grpc-port must be a port number"):
        parse("--grpc-port", port)


def test_a_relative_module_is_refused() -> None:
    from a2a_core.cli.serve import load_target

    with pytest.raises(SettingsError, match="must be absolute"):
        load_target(".app:agent")


def test_a_database_url_that_does_not_parse_hides_its_password() -> None:
    from a2a_core.cli.serve import server_options

    with pytest.raises(SettingsError, match="--sql: not a database URL") as raised:
        server_options(ServeSettings(sql="nosuchdialect+nodriver://app:s3cret@db/app"))
    assert "s3cret" not in str(raised.value)


def test_the_console_setting_turns_the_console_on() -> None:
    assert parse().console is False
    assert parse(environ={"A2ASERVE_CONSOLE": "yes"}).console is True
    assert parse("--no-console", environ={"A2ASERVE_CONSOLE": "1"}).console is False
    assert server_options(parse("--console")) == {"console": True}
    assert server_options(parse()) == {}

    async def agent(ctx: TaskContext) -> str:
        return "hi"

    built = server_for(agent, parse("--console"))
    assert built.console_path == "/a2a-console/"
    given = A2AServer(agent, card=card_for(agent))
    assert server_for(given, parse("--console")) is given
    assert given.console_path == "/a2a-console/"  # turned on for a server built elsewhere
    assert server_for(agent, parse()).console_path is None
