"""``python -m a2a_sql upgrade URL [--prefix a2a_]``: create or upgrade the schema."""

from __future__ import annotations

import argparse
import asyncio

from .migrate import upgrade


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run it."""
    parser = argparse.ArgumentParser(prog="python -m a2a_sql")
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("upgrade", help="create the schema or upgrade it to this version")
    up.add_argument("url", help="an SQLAlchemy async URL, e.g. postgresql+asyncpg://host/db")
    up.add_argument("--prefix", default="a2a_", help="table-name prefix (default a2a_)")
    args = parser.parse_args(argv)
    revision = asyncio.run(upgrade(args.url, args.prefix))
    print(f"a2aserve-sql schema (prefix {args.prefix!r}) is at revision {revision}")


if __name__ == "__main__":
    main()
