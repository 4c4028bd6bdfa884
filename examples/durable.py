"""Durable: a slow agent whose work survives a crash or a deploy of the server running it.

    uv run python examples/durable.py --sql sqlite+aiosqlite:///durable.db --recovery resume

The agent works in steps (``--steps``, ``--step-seconds`` each) and streams one artifact,
``steps``, one chunk per step: ``step {i} attempt {a}``. It completes with ``done after {a}
attempts``. Kill the server (``kill -9``) or stop it (SIGTERM) while it works, start it
again (or let another replica on the same database or Redis take over), and the task goes
on, by ``--recovery``:

- ``fail`` (the default): the task is FAILED, saying why;
- ``retry``: the agent runs again from step 1 (its artifact starts over: a chunk that is
  not appended replaces the artifact of the same id);
- ``resume``: the agent checkpoints ``{"next": i + 1}`` after each step and a later attempt
  starts at the checkpoint's step, appending to the artifact.

``--lease-ttl`` shortens the backend's lease (how soon a lost replica's tasks are taken
over), ``--shutdown-grace`` the time running agents get at a stop before they are handed
off, and ``--replica-id`` names this replica (stable across restarts, as a pod name: a
restarted replica takes back its previous run's tasks at once). See docs/durability.md.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
from _common import backend_options, card, console_options, parse_args, public_url, serve

from a2a_core.server import A2AServer, ExecutionGuards, TaskContext
from a2a_core.types import AgentSkill

ARTIFACT_ID = "steps"


def make_agent(steps: int, step_seconds: float) -> Any:
    """The agent: ``steps`` steps of ``step_seconds`` each (see the module docstring)."""

    async def durable_agent(ctx: TaskContext) -> None:
        """Works in steps, checkpointing after each one."""
        attempt = ctx.attempt
        checkpoint = ctx.checkpoint_value
        first = checkpoint["next"] if isinstance(checkpoint, dict) else 1
        task = ctx.task
        # Resumed: the chunks of the steps already done stay, and this attempt appends.
        # From scratch: the first chunk replaces whatever an earlier attempt streamed.
        append = checkpoint is not None and any(
            artifact.artifact_id == ARTIFACT_ID for artifact in (task.artifacts if task else [])
        )
        await ctx.working(f"attempt {attempt}: steps {first} to {steps}")
        for i in range(first, steps + 1):
            await anyio.sleep(step_seconds)
            await ctx.artifact(
                f"step {i} attempt {attempt}\n",
                artifact_id=ARTIFACT_ID,
                name="steps",
                append=append,
                last_chunk=i == steps,
            )
            append = True
            await ctx.checkpoint({"next": i + 1})
        await ctx.complete(f"done after {attempt} attempts")

    return durable_agent


def _backend(args: argparse.Namespace) -> dict[str, Any]:
    """The backend of ``--sql`` or ``--redis``, with ``--lease-ttl`` and ``--replica-id``
    when given (otherwise as ``a2aserve serve`` builds it)."""
    options = backend_options(args)
    settings = args.settings
    if args.lease_ttl is None and args.replica_id is None and args.sql_prefix == "a2a_":
        return options
    lease: dict[str, Any] = {}
    if args.lease_ttl is not None:
        lease = {"lease_ttl": args.lease_ttl, "reap_interval": min(args.lease_ttl / 4, 0.5)}
    if settings.sql:
        from a2a_sql import SqlBackend

        options["backend"] = SqlBackend(
            settings.sql, prefix=args.sql_prefix, replica_id=args.replica_id, **lease
        )
    elif settings.redis:
        from a2aserve_redis import RedisBackend

        options["backend"] = RedisBackend(
            settings.redis, prefix=settings.redis_prefix, replica_id=args.replica_id, **lease
        )
    return options


def main() -> None:
    def extra(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--steps", type=int, default=10, help="steps per task (default 10)")
        parser.add_argument(
            "--step-seconds", type=float, default=1.0, help="seconds per step (default 1.0)"
        )
        parser.add_argument(
            "--lease-ttl", type=float, default=None, help="the backend's lease, in seconds"
        )
        parser.add_argument(
            "--shutdown-grace",
            type=float,
            default=5.0,
            help="seconds running agents get at a stop before they are handed off (or failed)",
        )
        parser.add_argument(
            "--replica-id", default=None, help="this replica's name (random by default)"
        )
        parser.add_argument(
            "--sql-prefix", default="a2a_", help="the SQL tables' prefix (default a2a_)"
        )

    args = parse_args("Serve the durable agent.", extra)
    server = A2AServer(
        make_agent(args.steps, args.step_seconds),
        card=card(
            "Durable",
            "Works in steps; its work survives a crash or a deploy of the server.",
            AgentSkill(
                id="steps",
                name="Steps",
                description="Works through a number of steps, one chunk of output each.",
                tags=["durable"],
                examples=["go"],
            ),
        ),
        base_url=public_url(args),
        guards=ExecutionGuards(shutdown_grace=args.shutdown_grace),
        **_backend(args),
        **console_options(args),
    )
    serve(server, args)


if __name__ == "__main__":
    main()
