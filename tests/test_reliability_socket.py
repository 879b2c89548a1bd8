"""Socket security through the real `palinode-vault serve` (issue 7, items 5 and 7).

tests/test_server_*.py check the socket layer on its own; here every request goes to the real
sidecar process over the loopback network: handshakes without or with a wrong token, a foreign
Origin, a DNS-rebinding Host, oversized and malformed messages, unknown methods, paths that
leave the vault, a bounded flood, and 20 clients at once. After each, `/health` still answers.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
from reliability_helpers import Rpc, discovery, snapshot, start_serve, stop

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("socket") / "vault"
    shutil.copytree(REPO / "sample-vault", root, ignore=shutil.ignore_patterns(".palinode"))
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# secret\n")
    os.symlink(outside / "secret.md", root / "people" / "leak.md")
    os.symlink(outside, root / "projects" / "outdir")
    proc = start_serve(root, "--no-auto-fix", stderr_path=root.parent / "serve.err")
    try:
        yield root
    finally:
        stop(proc)


def http(port: int, request: bytes, timeout: float = 30.0) -> tuple[int, bytes]:
    """Send raw HTTP on loopback; return (status, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), 0)
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    return int(head.split(b" ")[1]), body


def upgrade(port: int, path: str, host: str | None = None, extra: dict[str, str] | None = None) -> tuple[int, bytes]:
    headers = {
        "Host": host or f"127.0.0.1:{port}",
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
        "Sec-WebSocket-Version": "13",
        **(extra or {}),
    }
    lines = [f"GET {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in headers.items()]
    return http(port, ("\r\n".join(lines) + "\r\n\r\n").encode())


def health(port: int, host: str | None = None) -> tuple[int, bytes]:
    return http(port, f"GET /health HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\n\r\n".encode())


def assert_healthy(port: int) -> None:
    status, body = health(port)
    assert status == 200 and json.loads(body)["ok"] is True


@pytest.mark.parametrize(
    "name, path, host, extra, status, words",
    [
        ("no token", "/rpc", None, {}, 401, b"token missing"),
        ("wrong token", "/rpc?token=not-the-token", None, {}, 401, b"wrong token"),
        ("wrong bearer", "/rpc", None, {"Authorization": "Bearer nope"}, 401, b"wrong token"),
        ("right and wrong token", "/rpc?token={token}&token=bad", None, {}, 401, b"wrong token"),
        ("foreign origin", "/rpc?token={token}", None, {"Origin": "https://evil.example"}, 403, b"Origin"),
        ("null origin", "/rpc?token={token}", None, {"Origin": "null"}, 403, b"Origin"),
        ("look-alike origin", "/rpc?token={token}", None, {"Origin": "http://localhost.evil.example"}, 403, b"Origin"),
        ("rebinding host", "/rpc?token={token}", "evil.example:{port}", {}, 403, b"Host"),
        ("look-alike host", "/rpc?token={token}", "127.0.0.1.evil.example", {}, 403, b"Host"),
        ("lan host", "/rpc?token={token}", "192.168.1.5:{port}", {}, 403, b"Host"),
        ("unknown path", "/admin?token={token}", None, {}, 404, b"no such path"),
    ],
)
def test_handshake_refusals(served, name, path, host, extra, status, words):
    info = discovery(served)
    port, token = info["port"], info["token"]
    got, body = upgrade(port, path.format(token=token), host.format(port=port) if host else None, extra)
    assert got == status, (name, got, body)
    assert words in body, body
    assert token.encode() not in body
    assert_healthy(port)


def test_health_tells_nothing_private_and_checks_host(served):
    info = discovery(served)
    status, body = health(info["port"])
    assert status == 200
    data = json.loads(body)
    assert set(data) == {"ok", "version"}
    assert health(info["port"], host="evil.example")[0] == 403
    # The right token with a loopback Host and an allowed Origin is accepted.
    assert upgrade(info["port"], f"/rpc?token={info['token']}", extra={"Origin": "app://obsidian.md"})[0] == 101


def test_discovery_file_is_private(served):
    assert (served / ".palinode" / "sidecar.json").stat().st_mode & 0o077 == 0


def test_oversized_message_closes_that_connection_only(served):
    from websockets.exceptions import ConnectionClosed

    info = discovery(served)
    with Rpc(served) as rpc:
        with pytest.raises(ConnectionClosed) as closed:
            rpc.ws.send("x" * (5 * 1024 * 1024))
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                rpc.ws.recv(timeout=30)  # notifications may come first; then the close
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    with Rpc(served) as other:
        assert other.result("status")["pid"] > 0
    assert_healthy(info["port"])


def _raw_reply(rpc: Rpc, text: str) -> object:
    rpc.ws.send(text)
    while True:
        reply = json.loads(rpc.ws.recv(timeout=30))
        if not (isinstance(reply, dict) and "method" in reply):
            return reply


@pytest.mark.parametrize(
    "text, code",
    [
        ("{not json", -32700),
        ("\x00\x01\x02", -32700),
        ('"a string"', -32600),
        ("[]", -32600),
        ("42", -32600),
        ('{"jsonrpc": "1.0", "id": 1, "method": "status"}', -32600),
        ('{"jsonrpc": "2.0", "id": 1}', -32600),
        ('{"jsonrpc": "2.0", "id": 1, "method": 5}', -32600),
        ('{"jsonrpc": "2.0", "id": 1, "method": "no.such.method"}', -32601),
        ('{"jsonrpc": "2.0", "id": 1, "method": "__init__"}', -32601),
        ('{"jsonrpc": "2.0", "id": 1, "method": "note.info", "params": {"path": 5}}', -32602),
        ('{"jsonrpc": "2.0", "id": 1, "method": "note.info", "params": [1, 2]}', -32602),
        ('{"jsonrpc": "2.0", "id": 1, "method": "lint", "params": {"checks": ["rm -rf"]}}', -32602),
        ('{"jsonrpc": "2.0", "id": 1, "method": "status", "params": {"x": "' + "y" * 100_000 + '"}}', -32602),
    ],
)
def test_malformed_json_rpc_is_a_clear_error(served, text, code):
    with Rpc(served) as rpc:
        reply = _raw_reply(rpc, text)
        items = reply if isinstance(reply, list) else [reply]
        assert items and all(item["error"]["code"] == code for item in items), reply
        message = items[0]["error"]["message"]
        assert message and "Traceback" not in message and len(message) < 400
        assert rpc.result("status")["pid"] > 0  # the connection still works
    assert_healthy(discovery(served)["port"])


ESCAPES = [
    "../../etc/passwd",
    "/etc/passwd",
    "people/../../outside/secret.md",
    "people/leak.md",
    "projects/outdir/secret.md",
    "..",
    "people\\..\\..\\x.md",
    "C:/Windows/x.md",
    "people/\x00.md",
    ".palinode/sidecar.json",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_paths_that_leave_the_vault_are_refused(served, path):
    outside = served.parent / "outside" / "secret.md"
    before = outside.read_bytes()
    calls = [
        ("note.info", {"path": path}),
        ("note.findings", {"path": path}),
        ("lint", {"path": path}),
        ("fix", {"path": path}),
        ("link.repair", {"path": path, "target": "x", "new_target": "y"}),
        ("graph.neighbourhood", {"path": path}),
    ]
    with Rpc(served) as rpc:
        for method, params in calls:
            reply = rpc.call(method, params)
            assert "error" in reply, (method, path, reply)
            assert reply["error"]["code"] in (-32010, -32602), (method, path, reply)
            assert "secret" not in json.dumps(reply).replace(path, "")
    assert outside.read_bytes() == before


def test_write_methods_refuse_escapes_and_write_nothing(served):
    before = snapshot(served)
    with Rpc(served) as rpc:
        for params in (
            {"old_path": "people/ana.md", "new_path": "../../etc/x.md"},
            {"old_path": "/etc/passwd", "new_path": "people/x.md"},
        ):
            reply = rpc.call("rename", params)
            assert reply["error"]["code"] == -32010, reply
        reply = rpc.call("editor.state", {"active": "../../x.md", "open": []})
        assert reply["error"]["code"] == -32010
    assert snapshot(served) == before


def test_bounded_flood_then_health(served):
    """2,000 pipelined requests on one connection and 200 connects in a row, then /health."""
    info = discovery(served)
    with Rpc(served) as rpc:
        n = 2000
        for i in range(n):
            rpc.ws.send(json.dumps({"jsonrpc": "2.0", "id": 10_000 + i, "method": "status"}))
        answers: dict[int, dict] = {}
        deadline = time.monotonic() + 120
        while len(answers) < n and time.monotonic() < deadline:
            reply = json.loads(rpc.ws.recv(timeout=60))
            if "id" in reply and "method" not in reply:
                answers[reply["id"]] = reply
        assert len(answers) == n, "every request gets an answer, a result or 'busy'"
        busy = [a for a in answers.values() if "error" in a]
        assert all(a["error"]["code"] == -32014 for a in busy)
    for _ in range(200):
        status, _ = upgrade(info["port"], "/rpc?token=wrong")
        assert status == 401
    assert_healthy(info["port"])
    with Rpc(served) as rpc:
        assert rpc.result("status")["pid"] > 0


def test_more_connections_than_the_limit_are_refused_cleanly(served):
    from websockets.exceptions import InvalidStatus

    held, refused = [], 0
    try:
        for _ in range(70):
            try:
                held.append(Rpc(served))
            except InvalidStatus as exc:
                assert exc.response.status_code == 503
                refused += 1
        assert refused >= 1 and len(held) <= 64
    finally:
        for rpc in held:
            rpc.close()
    assert_healthy(discovery(served)["port"])
    with Rpc(served) as rpc:
        assert rpc.result("status")["pid"] > 0


def test_twenty_clients_at_once(served):
    """20 clients each call status, lint, note.info and graph at the same time; all answered."""
    errors: list[str] = []
    start = threading.Barrier(20)

    def client(i: int) -> None:
        try:
            with Rpc(served) as rpc:
                start.wait(30)
                for _ in range(5):
                    assert rpc.result("status")["pid"] > 0
                    assert rpc.result("lint")["total_files"] > 0
                    assert rpc.result("note.info", {"path": "people/elena-vasquez.md"})["path"] == "people/elena-vasquez.md"
                    assert rpc.result("graph.neighbourhood", {"path": "people/elena-vasquez.md"})["nodes"]
        except Exception as exc:  # noqa: BLE001 - collected and reported below
            errors.append(f"client {i}: {exc!r}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not errors, errors
    assert_healthy(discovery(served)["port"])
