"""Streamable HTTP for MCP from a running sidecar: `http://127.0.0.1:{port}/mcp`.

The sidecar's WebSocket server (websockets) only speaks GET and the WebSocket upgrade, so MCP's
POST-based streamable HTTP gets its own loopback port in the sidecar process (uvicorn, the SDK's
Starlette app), published in `.palinode/mcp-http.json` (`{"url", "pid"}`, no secret in it). It is
guarded exactly like the WebSocket (server/transport.py): the same token (`Authorization: Bearer`,
from sidecar.json), a loopback Host header and the same Origin allow-list, checked before the SDK
sees the request (the DNS-rebinding class of MCP SDK CVEs). Its tools are the stdio server's;
writes reach the sidecar as `agent.*` socket calls like every other MCP write.

Opt in with `PALINODE_MCP_HTTP=1` in the sidecar's environment.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
from pathlib import Path
from typing import Any

from palinode_vault.server.transport import host_allowed, origin_allowed

log = logging.getLogger(__name__)
ENV = "PALINODE_MCP_HTTP"
FILENAME = "mcp-http.json"
PATH = "/mcp"


def enabled() -> bool:
    return os.environ.get(ENV, "").strip() in ("1", "true", "yes", "on")


def info_path(root: Path) -> Path:
    return Path(root) / ".palinode" / FILENAME


class Guard:
    """ASGI middleware: token, Host and Origin, as the sidecar's WebSocket checks them."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers: dict[str, list[str]] = {}
        for key, value in scope.get("headers", []):
            headers.setdefault(key.decode("latin-1").lower(), []).append(value.decode("latin-1"))
        hosts = headers.get("host", [])
        if len(hosts) != 1 or not host_allowed(hosts[0]):
            return await _refuse(send, 403, "Host must be a loopback name (127.0.0.1, localhost or [::1])")
        if not all(origin_allowed(o) for o in headers.get("origin", [])):
            return await _refuse(send, 403, "Origin not allowed; only the Obsidian app and localhost may connect")
        if scope.get("path") != PATH:
            return await _refuse(send, 404, f"not found; MCP is at {PATH}")
        presented = headers.get("authorization", [])
        if len(presented) != 1 or not presented[0].startswith("Bearer "):
            return await _refuse(send, 401, "token missing: send Authorization: Bearer <token from .palinode/sidecar.json>")
        if not hmac.compare_digest(presented[0][7:].strip().encode(), self.token):
            return await _refuse(send, 401, "wrong token; re-read .palinode/sidecar.json")
        return await self.app(scope, receive, send)


async def _refuse(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def serve(root: Path, token: str) -> None:
    """Serve MCP over streamable HTTP until cancelled; publish and remove `mcp-http.json`."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from palinode_vault.mcp.server import build_server

    mcp_server = build_server(root)
    # The SDK's own DNS-rebinding check too, behind ours: loopback hosts on any port.
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["app://obsidian.md", "capacitor://localhost", "http://localhost:*", "http://127.0.0.1:*"],
    )
    app = Guard(mcp_server.streamable_http_app(streamable_http_path=PATH, transport_security=security), token)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    # The sidecar owns SIGINT/SIGTERM: uvicorn must not take them (capture_signals since 0.29,
    # install_signal_handlers before).
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    server.install_signal_handlers = lambda: None  # type: ignore[attr-defined]
    task = asyncio.create_task(server.serve())
    target = info_path(root)
    try:
        while not server.started:
            if task.done():
                task.result()
                return
            await asyncio.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        tmp = target.with_name(f".{FILENAME}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"url": f"http://127.0.0.1:{port}{PATH}", "pid": os.getpid()}), encoding="utf-8")
        os.replace(tmp, target)
        log.info("MCP over streamable HTTP at http://127.0.0.1:%d%s", port, PATH)
        await task
    finally:
        server.should_exit = True
        target.unlink(missing_ok=True)
        if not task.done():
            try:
                await asyncio.wait_for(task, 5)
            except (TimeoutError, asyncio.CancelledError, Exception):  # noqa: BLE001
                task.cancel()
        mcp_server.palinode_service.close()


def start_with_sidecar(sidecar: Any) -> None:
    """Called while the sidecar registers its methods: once it is ready, serve MCP over HTTP with
    its token. Does nothing unless `PALINODE_MCP_HTTP=1`."""
    if not enabled():
        return

    async def run() -> None:
        from palinode_vault.server import read_discovery

        await sidecar.ready.wait()
        info = None
        for _ in range(100):  # sidecar.json is written right after the socket binds
            info = read_discovery(sidecar.root)
            if info is not None:
                break
            await asyncio.sleep(0.05)
        if info is None:
            log.warning("MCP over HTTP not started: no sidecar.json")
            return
        try:
            await serve(sidecar.root, info.token)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the sidecar keeps serving; the error is visible in status
            sidecar.last_error = f"MCP over HTTP failed: {exc}"
            log.warning("MCP over HTTP failed: %s", exc)

    task = asyncio.get_running_loop().create_task(run(), name="palinode-mcp-http")
    sidecar._tasks.append(task)  # noqa: SLF001 - cancelled with the sidecar's own tasks when it stops
