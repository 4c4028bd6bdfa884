"""examples/secured.py as users run it: a subprocess per adapter behind a JWKS that the test
serves on 127.0.0.1 (from a thread), with keys and tokens made here."""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from a2a_core.signing import verify_agent_card
from examples.test_examples import ADAPTERS, CARD_PATH, EXAMPLES, free_port
from helpers.auth import public_jwk, rsa_key

KEY = rsa_key()
SIGNING_KEY = ec.generate_private_key(ec.SECP256R1())
AUDIENCE = "https://secured.test"


@pytest.fixture(scope="module")
def jwks_url() -> Iterator[str]:
    body = json.dumps({"keys": [public_jwk(KEY, "k1")]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module", params=ADAPTERS)
def agent(request: pytest.FixtureRequest, jwks_url: str, tmp_path_factory: Any) -> Iterator[str]:
    import subprocess

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log: Path = tmp_path_factory.mktemp("secured") / "log"
    command = [sys.executable, str(EXAMPLES / "secured.py"), "--adapter", str(request.param)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--jwks-url", jwks_url]
    command += ["--issuer", "https://issuer.test", "--audience", AUDIENCE, "--api-key", "k-123"]
    signing_key = log.parent / "card-key.pem"
    signing_key.write_bytes(signing_key_pem())
    command += ["--signing-key", str(signing_key)]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=EXAMPLES.parent, stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if httpx.get(url + CARD_PATH, timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        else:
            raise AssertionError(log.read_text())
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def signing_key_pem() -> bytes:
    """The card signing key, as the PEM file ``--signing-key`` reads."""
    return SIGNING_KEY.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def token(sub: str) -> str:
    now = int(time.time())
    claims = {"iss": "https://issuer.test", "aud": AUDIENCE, "sub": sub, "exp": now + 300}
    return jwt.encode(claims, KEY, algorithm="RS256", headers={"kid": "k1"})


def call(url: str, method: str, params: Any, **headers: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(url + "/", json=body, headers={"a2a-version": "1.0", **headers}, timeout=10)


def send(url: str, **headers: str) -> httpx.Response:
    msg = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    return call(url, "SendMessage", {"message": msg}, **headers)


def test_secured_example(agent: str) -> None:
    card = httpx.get(agent + CARD_PATH).json()
    anonymous = send(agent)
    alice = {"authorization": f"Bearer {token('alice')}"}
    by_jwt = send(agent, **alice)
    by_key = send(agent, **{"x-api-key": "k-123"})
    wrong_key = send(agent, **{"x-api-key": "nope"})
    tid = by_jwt.json()["result"]["task"]["id"]
    bob = {"authorization": f"Bearer {token('bob')}"}
    bob_get = call(agent, "GetTask", {"id": tid}, **bob)
    bob_list = call(agent, "ListTasks", {}, **bob)
    alice_list = call(agent, "ListTasks", {}, **alice)
    assert set(card["securitySchemes"]) == {"bearer", "apiKey"}
    assert card["capabilities"]["pushNotifications"] is True
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"].startswith("Bearer ")
    assert by_jwt.json()["result"]["task"]["artifacts"][0]["parts"] == [{"text": "hi"}]
    assert by_key.status_code == 200 and "result" in by_key.json()
    assert wrong_key.status_code == 401
    assert bob_get.json()["error"]["code"] == -32001
    assert bob_list.json()["result"]["totalSize"] == 0
    assert alice_list.json()["result"]["totalSize"] == 1


def test_the_signed_card_verifies_without_credentials(agent: str) -> None:
    """The card and the JWKS its signature names are public; the rest asks for
    credentials."""
    card = httpx.get(agent + CARD_PATH)
    jwks = httpx.get(agent + "/.well-known/jwks.json")
    assert jwks.status_code == 200
    assert jwks.headers["cache-control"] == card.headers["cache-control"]
    keys = {k["kid"]: k for k in jwks.json()["keys"]}
    assert verify_agent_card(card.content, keys).name == "Secured echo"
    assert send(agent).status_code == 401
