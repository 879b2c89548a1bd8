"""A loopback HTTP forwarder that adds `Authorization: Bearer TOKEN` to every request, as an agent
host configured with our token does. For clients that cannot send a header, such as the MCP
conformance suite (`conformance server --url` has no header option).

Everything else passes through unchanged, Host and Origin included, so our own Host and Origin
checks still see what the client sent. Responses are streamed (SSE). Run alone:

    python tests/bearer_proxy.py TARGET_URL TOKEN [PORT]
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx2

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "upgrade", "te", "trailer"}
OWN = {"date", "server"}  # uvicorn writes its own


def app(target: str, token: str) -> Any:
    """An ASGI app forwarding to `target` (scheme://host:port, no path)."""
    client = httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=None))

    async def forward(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in scope["headers"]
            if k.decode("latin-1").lower() not in HOP_BY_HOP | {"authorization"}
        ]
        headers.append(("Authorization", f"Bearer {token}"))
        url = target + scope["raw_path"].decode("latin-1")
        if scope.get("query_string"):
            url += "?" + scope["query_string"].decode("latin-1")
        request = client.build_request(scope["method"], url, headers=headers, content=body)
        response = await client.send(request, stream=True)

        async def pump() -> None:
            out = [
                (k.encode("latin-1"), v.encode("latin-1"))
                for k, v in response.headers.multi_items()
                if k.lower() not in HOP_BY_HOP | OWN
            ]
            await send({"type": "http.response.start", "status": response.status_code, "headers": out})
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})

        async def disconnected() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        try:
            tasks = {asyncio.create_task(pump()), asyncio.create_task(disconnected())}
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            for task in done:
                if task.exception() is not None and not isinstance(task.exception(), OSError):
                    raise task.exception()
        finally:
            await response.aclose()

    forward.client = client  # type: ignore[attr-defined]
    return forward


@contextlib.asynccontextmanager
async def bearer_proxy(target_url: str, token: str, port: int = 0) -> AsyncIterator[str]:
    """Serve the forwarder on 127.0.0.1 in this event loop; yields the URL to give the client
    (the target's path on the forwarder's port)."""
    import uvicorn

    scheme, rest = target_url.split("://", 1)
    hostport, _, path = rest.partition("/")
    forward = app(f"{scheme}://{hostport}", token)
    server = uvicorn.Server(uvicorn.Config(forward, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    server.install_signal_handlers = lambda: None
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{bound}/{path}"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(task, 5)
        await forward.client.aclose()


async def _main(target: str, token: str, port: int) -> None:
    async with bearer_proxy(target, token, port) as url:
        print(url, flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0))
