"""Secured echo: the echo agent behind a card that requires a JWT (or an API key).

    uv run python examples/secured.py --adapter starlette --host 127.0.0.1 --port 8000 \\
        --jwks-url https://issuer.example/.well-known/jwks.json \\
        --issuer https://issuer.example --audience https://agent.example \\
        [--api-key-file key.txt] [--signing-key card-key.pem]

The card declares an HTTP bearer scheme (JWT, verified against the JWKS, the issuer and the
audience) and, with an API key (``--api-key-file`` or ``A2ASERVE_API_KEY``, or
``--api-key``, which the process list shows), an API-key scheme (header ``X-API-Key``) as an
alternative. Every call but the public card needs one of them (401 with a challenge
otherwise); each caller sees only its own tasks (ownership is on by default). Push
notifications are on, with the default SSRF guard. ``--signing-key`` signs the card and
serves its JWKS at ``/.well-known/jwks.json``. See ``docs/security.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import msgspec
from _common import (
    backend_options,
    card,
    console_options,
    parse_args,
    public_url,
    serve,
    signing_options,
)

from a2a_core.auth import ApiKey, JwtBearer
from a2a_core.protocol import ProtocolOptions
from a2a_core.server import A2AServer, TaskContext
from a2a_core.types import (
    AgentCard,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)


async def echo(ctx: TaskContext) -> str:
    """Reply with the text of the message (the caller is ``ctx.identity``)."""
    return ctx.text


def secured_card(api_key: bool) -> tuple[AgentCard, list[str]]:
    """The echo card with its security schemes and requirements."""
    schemes = {
        "bearer": SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                scheme="Bearer", bearer_format="JWT", description="A JWT from the issuer"
            )
        )
    }
    requirements = [SecurityRequirement(schemes={"bearer": StringList()})]
    if api_key:
        schemes["apiKey"] = SecurityScheme(
            api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-API-Key")
        )
        requirements.append(SecurityRequirement(schemes={"apiKey": StringList()}))
    base = card(
        "Secured echo",
        "Replies with the text it receives, to authenticated callers.",
        AgentSkill(id="echo", name="Echo", description="Echoes the message text.", tags=["echo"]),
    )
    secured = msgspec.structs.replace(
        base, security_schemes=schemes, security_requirements=requirements
    )
    return secured, list(schemes)


def api_key(args: argparse.Namespace) -> str | None:
    """The API key: a flag (``--api-key``, ``--api-key-file``), else ``A2ASERVE_API_KEY``
    (or the file ``A2ASERVE_API_KEY_FILE`` names), as every setting: a flag wins."""
    if args.api_key:
        print("warning: --api-key shows the key to anyone who lists processes; set "
              "A2ASERVE_API_KEY or use --api-key-file", file=sys.stderr)  # fmt: skip
        return str(args.api_key)
    file = args.api_key_file or os.environ.get("A2ASERVE_API_KEY_FILE", "").strip()
    if file:
        try:
            return Path(file).read_text().strip() or None
        except OSError as exc:
            message = f"error: cannot read the API key file {file!r}: {exc.strerror}"
            raise SystemExit(message) from None
    return os.environ.get("A2ASERVE_API_KEY", "").strip() or None


def main() -> None:
    def extra(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--jwks-url", required=True, help="the issuer's JWKS URL")
        parser.add_argument("--issuer", required=True, help="the trusted token issuer (iss)")
        parser.add_argument("--audience", required=True, help="this agent's audience (aud)")
        parser.add_argument(
            "--api-key",
            help="also accept this key in X-API-Key (its caller: 'api-key'); better from "
            "the environment, A2ASERVE_API_KEY, or a file, --api-key-file, which the "
            "process list does not show",
        )
        parser.add_argument("--api-key-file", help="a file holding that key")
        # --signing-key PEM (signs the card, serves the JWKS) comes with every example.

    args = parse_args("Serve the echo agent behind JWT (and API key) authentication.", extra)
    args.api_key = api_key(args)
    secured, _ = secured_card(bool(args.api_key))
    authenticators: dict[str, Any] = {
        "bearer": JwtBearer(jwks_url=args.jwks_url, issuer=args.issuer, audience=args.audience)
    }
    if args.api_key:
        authenticators["apiKey"] = ApiKey.of({args.api_key: "api-key"})
    server = A2AServer(
        echo,
        card=secured,
        base_url=public_url(args),
        authenticators=authenticators,
        protocol=ProtocolOptions(**signing_options(args)),
        **backend_options(args),
        **console_options(args),
    )
    serve(server, args)


if __name__ == "__main__":
    main()
