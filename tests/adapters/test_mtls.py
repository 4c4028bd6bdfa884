"""Mutual TLS through the adapters: the client certificate reaches a ``mutualTLS`` scheme's
verifier (`ClientCertificate`) as ``HttpRequest.peer_certificate``.

aiohttp over a real TLS connection on 127.0.0.1 (a CA, a server and two client
certificates made here); the Starlette adapter in process with the ASGI ``tls`` extension,
since uvicorn does not provide it. Two certificates are two owners; none is a 401.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import ssl
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from a2a_aiohttp import add_routes
from a2a_core.auth import ClientCertificate
from a2a_core.server import A2AServer, InputRequired
from a2a_core.types import (
    AgentCard,
    HTTPAuthSecurityScheme,
    MutualTlsSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a_starlette import A2AStarlette
from adapters.contract import make_card, send_params

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(
    subject: str, key: ec.EllipticCurvePrivateKey, issuer: tuple[str, Any] | None, *, ca: bool
) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    issuer_name, issuer_key = issuer if issuer is not None else (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    # What Python 3.13's strict verification (VERIFY_X509_STRICT) asks of a certificate.
    builder = builder.add_extension(
        x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
    ).add_extension(
        x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
        critical=False,
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    else:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        ).add_extension(
            x509.ExtendedKeyUsage(
                [x509.oid.ExtendedKeyUsageOID.SERVER_AUTH, x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _write(path: Path, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> None:
    path.with_suffix(".crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    path.with_suffix(".key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, a server certificate for 127.0.0.1 and two client certificates."""
    root = tmp_path_factory.mktemp("pki")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("Test CA", ca_key, None, ca=True)
    _write(root / "ca", ca, ca_key)
    for name in ("server", "alice", "bob"):
        key = ec.generate_private_key(ec.SECP256R1())
        _write(root / name, _certificate(name, key, ("Test CA", ca_key), ca=False), key)
    return root


def mtls_card() -> AgentCard:
    return msgspec.structs.replace(
        make_card(),
        security_schemes={"cert": SecurityScheme(mtls_security_scheme=MutualTlsSecurityScheme())},
        security_requirements=[SecurityRequirement(schemes={"cert": StringList()})],
    )


def client(pki: Path, who: str | None) -> httpx.AsyncClient:
    context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    if who is not None:
        context.load_cert_chain(str(pki / f"{who}.crt"), str(pki / f"{who}.key"))
    return httpx.AsyncClient(verify=context, timeout=10, headers={"A2A-Version": "1.0"})


def rpc(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def test_client_certificates_are_identities_over_tls_on_aiohttp(pki: Path) -> None:
    server = A2AServer(
        lambda ctx: InputRequired("more?"),
        card=mtls_card(),
        base_url="https://127.0.0.1",
        authenticators={"cert": ClientCertificate()},
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(pki / "ca.crt"))
    context.load_cert_chain(str(pki / "server.crt"), str(pki / "server.key"))
    context.verify_mode = ssl.CERT_OPTIONAL  # a client without one gets the A2A 401
    app = web.Application()
    add_routes(app, server)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    try:
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        url = f"https://127.0.0.1:{port}/"
        async with client(pki, "alice") as alice, client(pki, "bob") as bob:
            async with client(pki, None) as anonymous:
                refused = await anonymous.post(url, json=rpc("SendMessage", send_params()))
            sent = (await alice.post(url, json=rpc("SendMessage", send_params()))).json()
            task_id = sent["result"]["task"]["id"]
            own = (await alice.post(url, json=rpc("GetTask", {"id": task_id}))).json()
            other = (await bob.post(url, json=rpc("GetTask", {"id": task_id}))).json()
        stored = await server.backend.store.get(task_id)
    finally:
        await runner.cleanup()
    assert refused.status_code == 401
    assert own["result"]["id"] == task_id
    assert other["error"]["code"] == -32001  # bob's certificate is another owner
    assert stored is not None and "CN=alice" in stored.owner


def _asgi_scope(body: bytes, chain: list[str]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "https",
        "path": "/",
        "raw_path": b"/",
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"testserver"),
            (b"content-type", b"application/json"),
            (b"a2a-version", b"1.0"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 443),
        "state": {},
        "extensions": {"tls": {"server_cert": None, "client_cert_chain": chain}},
    }


async def _call_asgi(app: A2AStarlette, body: bytes, chain: list[str]) -> tuple[int, Any]:
    sent: list[dict[str, Any]] = []
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return chunks.pop(0) if chunks else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(_asgi_scope(body, chain), receive, send)
    status = sent[0]["status"]
    payload = b"".join(m.get("body", b"") for m in sent[1:])
    return status, json.loads(payload)


async def test_the_starlette_adapter_reads_the_asgi_tls_extension(pki: Path) -> None:
    server = A2AServer(
        lambda ctx: InputRequired("more?"),
        card=mtls_card(),
        base_url="https://testserver",
        authenticators={"cert": ClientCertificate()},
    )
    app = A2AStarlette(server)
    alice = [(pki / "alice.crt").read_text()]
    body = json.dumps(rpc("SendMessage", send_params())).encode()
    async with server:
        refused = await _call_asgi(app, body, [])
        status, sent = await _call_asgi(app, body, alice)
    assert refused[0] == 401
    assert (
        status == 200 and sent["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    )


async def test_a_custom_identify_keys_certificates_its_own_way(pki: Path) -> None:
    seen: list[bytes] = []

    def by_fingerprint(der: bytes) -> str:
        seen.append(der)
        return x509.load_der_x509_certificate(der).fingerprint(hashes.SHA256()).hex()

    server = A2AServer(
        lambda ctx: "ok",
        card=mtls_card(),
        base_url="https://testserver",
        authenticators={"cert": ClientCertificate(by_fingerprint)},
    )
    app = A2AStarlette(server)
    pem = (pki / "bob.crt").read_text()
    body = json.dumps(rpc("SendMessage", send_params())).encode()
    async with server:
        status, _ = await _call_asgi(app, body, [pem])
    assert status == 200
    assert seen == [ssl.PEM_cert_to_DER_cert(pem)]


async def test_a_certificate_verifier_on_another_kind_of_scheme_is_refused() -> None:
    bearer_card = msgspec.structs.replace(
        make_card(),
        security_schemes={
            "bearer": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer")
            )
        },
        security_requirements=[SecurityRequirement(schemes={"bearer": StringList()})],
    )
    with pytest.raises(ValueError, match="ClientCertificate cannot verify"):
        A2AServer(
            lambda ctx: "ok", card=bearer_card, authenticators={"bearer": ClientCertificate()}
        )
