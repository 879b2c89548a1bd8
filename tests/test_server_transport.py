"""The real WebSocket server on loopback: handshake security, /health, limits, server push."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import BaseModel
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from palinode_vault import __version__
from palinode_vault.server import (
    BUSY,
    ClientError,
    Connection,
    ConnectionGone,
    Dispatcher,
    RpcServer,
    open_server,
    read_discovery,
)


class Progress(BaseModel):
    phase: str
    done: int
    total: int


def run(coro, timeout: float = 20.0):
    """Run one async test body with a hard bound, so a hang fails instead of stalling."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def make_dispatcher() -> Dispatcher:
    dispatcher = Dispatcher()

    async def echo(params, conn):
        return params

    async def slow(params, conn):
        await asyncio.sleep(params.get("seconds", 0.005))
        return "done"

    dispatcher.register("echo", echo)
    dispatcher.register("slow", slow)
    return dispatcher


async def http(port: int, path: str, headers: dict[str, str] | None = None, upgrade: bool = True) -> tuple[int, str]:
    """Send one raw HTTP request and return (status, body): exact control over Host and Origin."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"GET {path} HTTP/1.1"]
    base = {"Host": f"127.0.0.1:{port}"}
    if upgrade:
        base.update(
            {
                "Upgrade": "websocket",
                "Connection": "Upgrade",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                "Sec-WebSocket-Version": "13",
            }
        )
    base.update(headers or {})
    lines += [f"{k}: {v}" for k, v in base.items() if v is not None]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.decode().split("\r\n"):
        if line.lower().startswith("content-length:"):
            length = int(line.split(":", 1)[1])
    body = await reader.readexactly(length) if length else b""
    writer.close()
    return status, body.decode()


async def call(ws, method: str, params=None, id=1):
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    await ws.send(json.dumps(message))
    return json.loads(await ws.recv())


# -- handshake -------------------------------------------------------------------------------


def test_health_without_token_tells_only_version(tmp_path: Path):
    async def body():
        async with open_server(tmp_path, make_dispatcher()) as server:
            status, text = await http(server.port, "/health", upgrade=False)
            assert status == 200
            assert json.loads(text) == {"ok": True, "version": __version__}
            assert server.token not in text

    run(body())


@pytest.mark.parametrize(
    ("headers", "path", "status", "reason"),
    [
        ({}, "/rpc", 401, "token missing"),
        ({}, "/rpc?token=wrong", 401, "wrong token"),
        ({"Authorization": "Bearer wrong"}, "/rpc", 401, "wrong token"),
        ({"Origin": "https://evil.example"}, "/rpc?token={token}", 403, "Origin"),
        ({"Origin": "null"}, "/rpc?token={token}", 403, "Origin"),
        ({"Origin": "http://localhost.evil.example"}, "/rpc?token={token}", 403, "Origin"),
        ({"Host": "evil.example"}, "/rpc?token={token}", 403, "Host"),
        ({"Host": "evil.example:{port}"}, "/rpc?token={token}", 403, "Host"),
        ({"Host": "evil.example"}, "/health", 403, "Host"),
        ({}, "/other?token={token}", 404, "no such path"),
        ({}, "/rpc/?token={token}", 404, "no such path"),
    ],
)
def test_handshake_refusals(tmp_path: Path, headers, path, status, reason):
    async def body():
        async with open_server(tmp_path, make_dispatcher()) as server:
            fill = {"token": server.token, "port": server.port}
            got_status, text = await http(server.port, path.format(**fill), {k: v.format(**fill) for k, v in headers.items()})
            assert got_status == status
            assert reason in text
            assert text.count("\n") == 1  # one line of plain text
            assert server.token not in text

    run(body())


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Origin": "app://obsidian.md"},
        {"Origin": "capacitor://localhost"},
        {"Origin": "http://localhost"},
        {"Origin": "http://localhost:5173"},
        {"Origin": "http://127.0.0.1:8080"},
        {"Host": "localhost"},
        {"Host": "LOCALHOST:9"},
        {"Host": "[::1]:{port}"},
    ],
)
def test_handshake_accepts_loopback_hosts_and_allowed_origins(tmp_path: Path, headers):
    async def body():
        async with open_server(tmp_path, make_dispatcher()) as server:
            fill = {"port": server.port}
            status, _ = await http(server.port, f"/rpc?token={server.token}", {k: v.format(**fill) for k, v in headers.items()})
            assert status == 101

    run(body())


def test_token_as_bearer_header_and_query(tmp_path: Path):
    async def body():
        async with open_server(tmp_path, make_dispatcher()) as server:
            info = read_discovery(tmp_path)
            async with connect(
                f"ws://127.0.0.1:{server.port}/rpc", additional_headers={"Authorization": f"Bearer {server.token}"}
            ) as ws:
                assert (await call(ws, "echo", {"x": 1}))["result"] == {"x": 1}
            async with connect(info.url, origin="app://obsidian.md") as ws:
                assert (await call(ws, "echo", {"x": 2}))["result"] == {"x": 2}
            # a right query token does not excuse a wrong header token
            status, _ = await http(server.port, f"/rpc?token={server.token}", {"Authorization": "Bearer nope"})
            assert status == 401

    run(body())


def test_too_many_connections_refused_with_503(tmp_path: Path):
    async def body():
        async with open_server(tmp_path, make_dispatcher(), max_connections=2) as server:
            url = read_discovery(tmp_path).url
            async with connect(url) as a, connect(url) as b:
                await call(a, "echo", {})
                await call(b, "echo", {})
                status, text = await http(server.port, f"/rpc?token={server.token}")
                assert status == 503 and "too many connections" in text
            await asyncio.sleep(0.05)
            async with connect(url) as c:
                assert (await call(c, "echo", {"ok": 1}))["result"] == {"ok": 1}

    run(body())


# -- limits and robustness ---------------------------------------------------------------------


def test_oversized_message_closes_1009_and_server_lives(tmp_path: Path):
    async def body():
        async with open_server(tmp_path, make_dispatcher()) as server:
            url = read_discovery(tmp_path).url
            async with connect(url, max_size=None) as ws:
                big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"x": "a" * (4 * 1024 * 1024)}})
                await ws.send(big)
                with pytest.raises(ConnectionClosed) as closed:
                    await ws.recv()
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
            status, _ = await http(server.port, "/health", upgrade=False)
            assert status == 200
            async with connect(url, max_size=None) as ws:  # just under the limit still works
                near = {"x": "a" * (4 * 1024 * 1024 - 200)}
                assert (await call(ws, "echo", near))["result"] == near

    run(body())


def test_configurable_message_limit(tmp_path: Path):
    async def body():
        async with open_server(tmp_path, make_dispatcher(), max_message_bytes=1024) as server:
            async with connect(read_discovery(tmp_path).url) as ws:
                await ws.send("x" * 2000)
                with pytest.raises(ConnectionClosed) as closed:
                    await ws.recv()
                assert closed.value.rcvd.code == 1009
            assert (await http(server.port, "/health", upgrade=False))[0] == 200

    run(body())


def test_bounded_flood_all_answered_or_busy(tmp_path: Path):
    async def client(url: str, n: int) -> list[dict]:
        async with connect(url) as ws:
            for i in range(n):
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": i, "method": "slow", "params": {"seconds": 0.002}}))
            return [json.loads(await ws.recv()) for _ in range(n)]

    async def body():
        async with open_server(tmp_path, make_dispatcher()) as server:
            url = read_discovery(tmp_path).url
            answers = await asyncio.gather(*(client(url, 100) for _ in range(20)))
            flat = [a for per in answers for a in per]
            assert len(flat) == 2000
            for per in answers:
                assert sorted(a["id"] for a in per) == list(range(100))
            results = sum(1 for a in flat if a.get("result") == "done")
            busy = sum(1 for a in flat if a.get("error", {}).get("code") == BUSY)
            assert results + busy == 2000
            assert results >= 20 * 32  # each connection ran at least its in-flight limit
            assert (await http(server.port, "/health", upgrade=False))[0] == 200
            async with connect(url) as ws:
                assert (await call(ws, "echo", {"after": True}))["result"] == {"after": True}

    run(body(), timeout=30)


def test_in_flight_limit_answers_busy(tmp_path: Path):
    async def body():
        gate = asyncio.Event()
        dispatcher = Dispatcher()

        async def wait(params, conn):
            await gate.wait()
            return "released"

        dispatcher.register("wait", wait)
        async with open_server(tmp_path, dispatcher, max_in_flight=3):
            async with connect(read_discovery(tmp_path).url) as ws:
                for i in range(3):
                    await ws.send(json.dumps({"jsonrpc": "2.0", "id": i, "method": "wait"}))
                reply = await call(ws, "wait", id=99)
                assert reply["id"] == 99 and reply["error"]["code"] == BUSY
                assert "retry later" in reply["error"]["message"]
                gate.set()
                done = [json.loads(await ws.recv()) for _ in range(3)]
                assert {d["result"] for d in done} == {"released"}

    run(body())


def test_client_vanishing_mid_request_does_not_hurt_server(tmp_path: Path):
    async def body():
        async with open_server(tmp_path, make_dispatcher()) as server:
            url = read_discovery(tmp_path).url
            ws = await connect(url)
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "slow", "params": {"seconds": 0.2}}))
            ws.transport.abort()  # no closing handshake
            await asyncio.sleep(0.3)
            async with connect(url) as ws2:
                await ws2.send(b"\xff\xfe binary garbage")
                assert json.loads(await ws2.recv())["error"]["code"] == -32700
                assert (await call(ws2, "echo", {}))["result"] == {}
            assert (await http(server.port, "/health", upgrade=False))[0] == 200

    run(body())


# -- server to client --------------------------------------------------------------------------


def test_broadcast_reaches_every_client(tmp_path: Path):
    async def body():
        async with open_server(tmp_path, make_dispatcher()) as server:
            url = read_discovery(tmp_path).url
            async with connect(url) as a, connect(url) as b:
                await call(a, "echo", {})
                await call(b, "echo", {})  # both handshakes done and registered
                sent = server.broadcast("progress", Progress(phase="scan", done=1, total=1))
                assert sent == 2
                for ws in (a, b):
                    note = json.loads(await ws.recv())
                    assert note == {"jsonrpc": "2.0", "method": "progress", "params": {"phase": "scan", "done": 1, "total": 1}}

    run(body())


def test_apply_edit_round_trip_from_a_handler(tmp_path: Path):
    async def body():
        dispatcher = Dispatcher()

        async def push(params, conn: Connection):
            return await conn.request("apply_edit", {"path": "a.md", "old_hash": "0" * 64, "new_text": "x"}, timeout=2)

        dispatcher.register("push", push)
        async with open_server(tmp_path, dispatcher):
            async with connect(read_discovery(tmp_path).url) as ws:
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "push"}))
                request = json.loads(await ws.recv())
                assert request["method"] == "apply_edit" and request["params"]["path"] == "a.md"
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"applied": True}}))
                reply = json.loads(await ws.recv())
                assert reply == {"jsonrpc": "2.0", "id": 7, "result": {"applied": True}}

    run(body())


def test_server_request_timeout_client_error_and_gone(tmp_path: Path):
    async def body():
        async with open_server(tmp_path, make_dispatcher()) as server:
            url = read_discovery(tmp_path).url
            async with connect(url) as ws:
                await call(ws, "echo", {})
                (conn,) = server.connections
                with pytest.raises(TimeoutError, match="apply_edit"):
                    await server.request(conn, "apply_edit", {"path": "a.md"}, timeout=0.2)
                await ws.recv()  # the request the client ignored

                asking = asyncio.create_task(server.request(conn, "apply_edit", {"path": "b.md"}, timeout=2))
                request = json.loads(await ws.recv())
                await ws.send(
                    json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32000, "message": "not open"}})
                )
                with pytest.raises(ClientError) as refused:
                    await asking
                assert refused.value.code == -32000 and refused.value.message == "not open"
                assert refused.value.method == "apply_edit"

                asking = asyncio.create_task(server.request(conn, "apply_edit", {"path": "c.md"}, timeout=5))
                await ws.recv()
            with pytest.raises(ConnectionGone):
                await asking
            with pytest.raises(ConnectionGone):
                await server.request(conn, "apply_edit", {}, timeout=1)

    run(body())


def test_rpcserver_standalone_start_stop(tmp_path: Path):
    async def body():
        server = RpcServer(make_dispatcher(), token="t" * 43)
        await server.start()
        port = server.port
        try:
            assert server.url == f"ws://127.0.0.1:{server.port}/rpc"
            async with connect(f"{server.url}?token={server.token}") as ws:
                assert (await call(ws, "echo", [1]))["error"]["code"] == -32602
        finally:
            await server.stop()
        with pytest.raises(OSError):
            await asyncio.open_connection("127.0.0.1", port)

    run(body())


def test_stop_cancels_handlers_that_outlive_the_grace(tmp_path: Path):
    async def body():
        started, cancelled = asyncio.Event(), asyncio.Event()
        dispatcher = Dispatcher()

        async def forever(params, conn):
            started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.set()
                raise

        dispatcher.register("forever", forever)
        server = RpcServer(dispatcher)
        await server.start()
        ws = await connect(f"{server.url}?token={server.token}")
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "forever"}))
        await started.wait()
        began = asyncio.get_running_loop().time()
        await server.stop(grace=0.1)
        assert asyncio.get_running_loop().time() - began < 3
        assert cancelled.is_set()
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd.code == 1001  # going away

    run(body())
