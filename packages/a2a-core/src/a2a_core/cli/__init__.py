"""``a2aserve``: serve an agent, or call one, from the command line.

``serve MODULE:ATTR`` serves an agent function or an `A2AServer` as a whole process (see
`a2a_core.cli.serve`). The other verbs call an agent (a thin user of `A2AClient`):
``card``, ``send``, ``get``, ``list``, ``cancel``, ``subscribe``. Each takes the agent's URL
first; the card says where and how to call (its first interface this client speaks, unless
``--binding``/``--a2a-version`` narrow the choice). ``-o json`` prints v1.0 ProtoJSON
whatever the agent speaks; a stream prints one ``StreamResponse`` per line.

Exit codes: 0 the call succeeded (``serve``: stopped cleanly, by SIGTERM); 1 the agent
answered with an A2A error (its reason, code and message on stderr); 2 a usage error (a
setting that cannot be used, a ``MODULE:ATTR`` that is not there); 3 no connection, no card,
or a reply that is not A2A. Credentials come from ``--token``/``--api-key`` or
``A2A_TOKEN``/``A2A_API_KEY``, and are never printed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Final, TextIO

import anyio

from a2a_core._protocol.client import AgentError, ClientError, NotInDialectError
from a2a_core.cli._output import Printer
from a2a_core.cli.serve import (
    ListenError,
    SettingsError,
    add_serve_arguments,
    configure_logging,
    load_card,
    load_target,
    server_for,
    settings_from,
)
from a2a_core.cli.serve import run as run_server
from a2a_core.client import A2AClient, Credentials
from a2a_core.types import ListTasksRequest, TaskState

__all__ = ["build_parser", "main"]

EXIT_OK: Final = 0
EXIT_AGENT_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_UNREACHABLE: Final = 3
#: ``serve``: the server could not start (a port in use, a backend that does not answer).
EXIT_SERVE_FAILED: Final = 1

_BINDINGS: Final = {"jsonrpc": "JSONRPC", "http-json": "HTTP+JSON", "grpc": "GRPC"}


class _UsageError(Exception):
    """A mistake in the command line found after parsing (exit 2)."""


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", metavar="URL", help="the agent's base URL (or its card's URL)")
    parser.add_argument("--binding", choices=sorted(_BINDINGS), help="the protocol binding to use")
    parser.add_argument(
        "--a2a-version", choices=("1.0", "0.3"), dest="version", help="the A2A version to speak"
    )
    parser.add_argument(
        "-H",
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="a header to send with every request (repeatable)",
    )
    parser.add_argument("--token", help="a bearer token (default: $A2A_TOKEN)")
    parser.add_argument("--api-key", help="an API key (default: $A2A_API_KEY)")
    parser.add_argument(
        "--timeout", type=float, default=30.0, metavar="S", help="seconds per call (default 30)"
    )
    parser.add_argument(
        "-o", "--output", choices=("text", "json"), default="text", help="output format"
    )


def build_parser() -> argparse.ArgumentParser:
    """The command line's grammar."""
    parser = argparse.ArgumentParser(
        prog="a2aserve", description="Call an A2A agent: read its card, send, follow tasks."
    )
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    serving = verbs.add_parser(
        "serve",
        help="serve an agent: MODULE:ATTR names an agent function or an A2AServer",
        description="Serve an agent function (async def agent(ctx)), an A2AServer, or a "
        "function of no arguments returning either, until SIGTERM. Every setting is also "
        "an environment variable, A2ASERVE_<NAME> (a flag wins).",
    )
    serving.add_argument("target", metavar="MODULE:ATTR", help="e.g. app:agent")
    serving.add_argument(
        "--card",
        metavar="MODULE:ATTR|FILE.json",
        help="the agent card of an agent function (default: made from the function; "
        "env: A2ASERVE_CARD)",
    )
    add_serve_arguments(serving)

    card = verbs.add_parser("card", help="print the agent card")
    _common(card)
    card.add_argument("--extended", action="store_true", help="the extended (authenticated) card")

    send = verbs.add_parser("send", help="send a text message")
    _common(send)
    send.add_argument("text", metavar="TEXT")
    send.add_argument("--stream", action="store_true", help="print events as they arrive")
    send.add_argument("--task-id", help="continue this task")
    send.add_argument("--context-id", help="continue this conversation")
    send.add_argument(
        "--no-wait", action="store_true", help="return the task at once, before it stops"
    )

    get = verbs.add_parser("get", help="print a task")
    _common(get)
    get.add_argument("task_id", metavar="TASK_ID")
    get.add_argument("--history", type=int, metavar="N", help="at most N messages of history")

    listing = verbs.add_parser("list", help="list tasks (v1.0)")
    _common(listing)
    listing.add_argument("--context-id")
    listing.add_argument("--state", metavar="STATE", help="e.g. TASK_STATE_INPUT_REQUIRED")
    listing.add_argument("--page-size", type=int, metavar="N")
    listing.add_argument("--page-token", metavar="T")

    cancel = verbs.add_parser("cancel", help="cancel a task")
    _common(cancel)
    cancel.add_argument("task_id", metavar="TASK_ID")

    subscribe = verbs.add_parser("subscribe", help="follow a task's events until it ends")
    _common(subscribe)
    subscribe.add_argument("task_id", metavar="TASK_ID")
    subscribe.add_argument(
        "--last-event-id", metavar="ID", help="print only the events after this one"
    )
    return parser


def _headers(values: Sequence[str]) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        name, colon, rest = value.partition(":")
        if not colon or not name.strip():
            raise _UsageError(f"-H takes 'Name: value', not {value!r}")
        pairs.append((name.strip(), rest.strip()))
    return pairs


def _credentials(args: argparse.Namespace) -> Credentials:
    token = args.token if args.token is not None else os.environ.get("A2A_TOKEN") or None
    api_key = args.api_key if args.api_key is not None else os.environ.get("A2A_API_KEY") or None
    return Credentials(bearer_token=token, api_key=api_key)


def _state(name: str) -> TaskState:
    try:
        return TaskState(name.upper())
    except ValueError:
        names = ", ".join(state.value for state in TaskState if state is not TaskState.UNSPECIFIED)
        raise _UsageError(f"--state takes one of {names}; not {name!r}") from None


async def _run(args: argparse.Namespace, printer: Printer) -> None:
    headers = _headers(args.header)
    credentials = _credentials(args)
    # Checked before anything is sent: a mistake in the command line is exit 2.
    status = _state(args.state) if getattr(args, "state", None) else TaskState.UNSPECIFIED
    client = await A2AClient.connect(
        args.url,
        bindings=[_BINDINGS[args.binding]] if args.binding else None,
        versions=[args.version] if args.version else None,
        credentials=credentials,
        headers=headers,
        timeout=args.timeout,
        extended_card=getattr(args, "extended", False),
    )
    async with client:
        verb = args.verb
        if verb == "card":
            assert client.card is not None
            printer.value(client.card)
        elif verb == "send" and args.stream:
            async for received in client.stream(
                args.text, task_id=args.task_id, context_id=args.context_id
            ):
                printer.event(received)
        elif verb == "send":
            printer.value(
                await client.send(
                    args.text,
                    task_id=args.task_id,
                    context_id=args.context_id,
                    return_immediately=args.no_wait,
                )
            )
        elif verb == "get":
            printer.value(await client.get_task(args.task_id, history_length=args.history))
        elif verb == "list":
            request = ListTasksRequest(
                context_id=args.context_id or "",
                status=status,
                page_size=args.page_size,
                page_token=args.page_token or "",
            )
            printer.value(await client.list_tasks(request))
        elif verb == "cancel":
            printer.value(await client.cancel_task(args.task_id))
        elif verb == "subscribe":
            async for received in client.subscribe(args.task_id, last_event_id=args.last_event_id):
                printer.event(received)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the command line; the exit code."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage error (or --help)
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    if args.verb == "serve":
        return _serve(args, out, err)
    printer = Printer(out, err, json_output=args.output == "json")
    try:
        anyio.run(_run, args, printer)
    except _UsageError as exc:
        printer.error(f"a2aserve: {exc}")
        return EXIT_USAGE
    except AgentError as exc:
        printer.agent_error(exc)
        return EXIT_AGENT_ERROR
    except NotInDialectError as exc:
        printer.error(f"a2aserve: {exc}; choose another interface (--a2a-version 1.0)")
        return EXIT_USAGE
    except ClientError as exc:  # its message may quote the agent's card or reply
        printer.error(f"a2aserve: {exc}")
        return EXIT_UNREACHABLE
    except KeyboardInterrupt:
        return 130
    return EXIT_OK


def _serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    printer = Printer(out, err, json_output=False)
    try:
        settings = settings_from(args)
        # Before the module is imported: what it logs on import shows at the level asked.
        configure_logging(settings.log_level)
        card_spec = args.card or os.environ.get("A2ASERVE_CARD") or None
        card = load_card(card_spec) if card_spec else None
        target = load_target(args.target)
        server = server_for(target, settings, spec=args.target, card=card)
    except SettingsError as exc:
        printer.error(f"a2aserve serve: {exc}")
        return EXIT_USAGE
    try:
        run_server(server, settings, out=out)
    except SettingsError as exc:
        printer.error(f"a2aserve serve: {exc}")
        return EXIT_USAGE
    except ListenError as exc:  # before anything started: one line, whatever the adapter
        printer.error(f"a2aserve serve: {exc}")
        return EXIT_SERVE_FAILED
    except OSError as exc:  # a companion's bind (gRPC), say
        printer.error(f"a2aserve serve: could not serve on {settings.host}:{settings.port}: {exc}")
        return EXIT_SERVE_FAILED
    except KeyboardInterrupt:
        return 130
    return EXIT_OK
