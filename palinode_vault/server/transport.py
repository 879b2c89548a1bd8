"""The WebSocket server: loopback only, token, Host and Origin checks, /health, bounded load.

Every refusal happens in the opening handshake (`process_request`), before a connection can
send a single JSON-RPC message. See docs/PROTOCOL.md, "Discovery and connection".
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
import secrets
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from palinode_vault import __version__
from palinode_vault.server import rpc
from palinode_vault.server.rpc import Connection, Dispatcher

__all__ = ["RpcServer", "new_token", "MAX_MESSAGE_BYTES", "ALLOWED_ORIGINS"]

log = logging.getLogger(__name__)
# The library's own logger: at DEBUG it prints request lines and headers, which carry the
# token (`?token=`, `Authorization`), so it never goes below WARNING.
_wire_log = logging.getLogger(__name__ + ".wire")
_wire_log.setLevel(logging.WARNING)

HOST = "127.0.0.1"
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
MAX_CONNECTIONS = 64
MAX_IN_FLIGHT = 32
#: Connections accepted but not through the opening handshake yet. An unauthenticated client
#: holding many sockets half-open must not use up the process's file descriptors (the
#: watcher needs them to read the person's saves); past this many, the oldest pending one is
#: dropped (a real client finishes its handshake in milliseconds; an idle socket never does).
MAX_PENDING_HANDSHAKES = 32
#: Seconds a connection may take to finish its opening handshake.
HANDSHAKE_TIMEOUT = 5.0
STOP_GRACE_SECONDS = 5.0

# Exact origins; the last two also with any port. Anything else is a web page we do not trust.
ALLOWED_ORIGINS = ("app://obsidian.md", "capacitor://localhost", "http://localhost", "http://127.0.0.1")
_ORIGIN_WITH_PORT = re.compile(r"^http://(localhost|127\.0\.0\.1):\d{1,5}$")
# Loopback names only: a DNS-rebinding page reaches 127.0.0.1 under its own host name.
_LOOPBACK_HOST = re.compile(r"^(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?$", re.IGNORECASE)


def new_token() -> str:
    """A fresh connection token: 32 random bytes as 43 url-safe characters."""
    return secrets.token_urlsafe(32)


def origin_allowed(origin: str | None) -> bool:
    """True when the Origin header is absent (not a browser) or one of the allowed origins."""
    if origin is None:
        return True
    return origin in ALLOWED_ORIGINS or bool(_ORIGIN_WITH_PORT.match(origin))


def host_allowed(host: str | None) -> bool:
    """True when the Host header is a loopback name, with or without a port."""
    return host is not None and bool(_LOOPBACK_HOST.match(host.strip()))


class RpcServer:
    """JSON-RPC 2.0 over a WebSocket at `ws://127.0.0.1:{port}/rpc`, plus `GET /health`.

    `await server.start()` binds (port 0 picks a free port), `server.port` and `server.token`
    then say where and how to connect, `await server.stop()` closes every connection. Use
    `broadcast` for notifications to every client and `request` to ask one client something
    (the sidecar's `apply_edit`). It holds no vault state: discovery and the lock live in
    `palinode_vault.server.discovery` and `.lock`, composed by `open_server`.
    """

    def __init__(
        self,
        dispatcher: Dispatcher,
        *,
        port: int = 0,
        token: str | None = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        max_connections: int = MAX_CONNECTIONS,
        max_in_flight: int = MAX_IN_FLIGHT,
        version: str = __version__,
    ) -> None:
        self.dispatcher = dispatcher
        self.token = token or new_token()
        self.version = version
        self.max_message_bytes = max_message_bytes
        self.max_connections = max_connections
        self.max_in_flight = max_in_flight
        self._requested_port = port
        self._server: Server | None = None
        self._connections: dict[ServerConnection, Connection] = {}
        self._sockets: dict[ServerConnection, None] = {}  # every accepted TCP connection, oldest first
        self.max_pending = MAX_PENDING_HANDSHAKES
        self._tasks: set[asyncio.Task[Any]] = set()
        self._health = json.dumps({"ok": True, "version": version}).encode()

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind 127.0.0.1 and start accepting connections."""
        if self._server is not None:
            raise RuntimeError("server already started")
        self._server = await serve(
            self._serve_connection,
            HOST,
            self._requested_port,
            process_request=self._check_handshake,
            max_size=self.max_message_bytes,
            # Keep frames buffered per connection small: at most a few max-size messages.
            max_queue=4,
            server_header=None,
            logger=_wire_log,
            open_timeout=HANDSHAKE_TIMEOUT,
            create_connection=_counted_connection(self),
        )

    async def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """Close every connection, let running handlers finish for `grace` seconds, then cancel."""
        if self._server is None:
            return
        server, self._server = self._server, None
        server.close(close_connections=True)
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1.0)
        await server.wait_closed()

    async def __aenter__(self) -> RpcServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @property
    def port(self) -> int:
        """The bound port (after `start`)."""
        if self._server is None:
            raise RuntimeError("server not started")
        return self._server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        """The WebSocket URL without the token."""
        return f"ws://{HOST}:{self.port}/rpc"

    @property
    def connections(self) -> list[Connection]:
        """The open client connections."""
        return [conn for conn in self._connections.values() if not conn.closed]

    # -- server to client ------------------------------------------------------------------

    def broadcast(self, method: str, params: Any = None) -> int:
        """Send a notification to every open connection; returns how many it went to.

        Does not wait for slow clients (a stuck client cannot hold up the others). Call it
        from the event loop's thread; from another thread use `loop.call_soon_threadsafe`.
        """
        targets = [ws for ws, conn in self._connections.items() if not conn.closed]
        if targets:
            broadcast(targets, rpc.encode_notification(method, params))
        return len(targets)

    async def request(self, connection: Connection, method: str, params: Any = None, timeout: float = 10.0) -> Any:
        """Ask one client (`connection`) something and return its result.

        Raises `TimeoutError`, `rpc.ClientError` (the client answered an error) or
        `rpc.ConnectionGone` (it disconnected first).
        """
        return await connection.request(method, params, timeout=timeout)

    # -- handshake -------------------------------------------------------------------------

    def _check_handshake(self, ws: ServerConnection, request: Request) -> Response | None:
        """Refuse (status and one line) or return None to accept the WebSocket."""
        headers = request.headers
        if not host_allowed(_single(headers, "Host")):
            return _refuse(ws, HTTPStatus.FORBIDDEN, "Host must be a loopback name (127.0.0.1, localhost or [::1])")
        origins = headers.get_all("Origin")
        if len(origins) > 1 or not origin_allowed(origins[0] if origins else None):
            return _refuse(ws, HTTPStatus.FORBIDDEN, "Origin not allowed; only the Obsidian app and localhost may connect")

        url = urlsplit(request.path)
        if url.path == "/health":
            return _json_response(ws, self._health)
        if url.path != "/rpc":
            return _refuse(ws, HTTPStatus.NOT_FOUND, f"no such path {url.path!r}; connect to /rpc or GET /health")

        presented = parse_qs(url.query).get("token", [])
        authorization = _single(headers, "Authorization")
        if authorization is not None:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() == "bearer":
                presented.append(value.strip())
        if not presented:
            return _refuse(ws, HTTPStatus.UNAUTHORIZED, "token missing; read it from .palinode/sidecar.json")
        expected = self.token.encode()
        # Every token presented must match, so a wrong one never hides behind a right one.
        if not all(hmac.compare_digest(candidate.encode(), expected) for candidate in presented):
            return _refuse(ws, HTTPStatus.UNAUTHORIZED, "wrong token; re-read .palinode/sidecar.json")
        if len(self._connections) >= self.max_connections:
            return _refuse(
                ws, HTTPStatus.SERVICE_UNAVAILABLE, f"too many connections (limit {self.max_connections}); retry later"
            )
        return None

    # -- one connection --------------------------------------------------------------------

    async def _serve_connection(self, ws: ServerConnection) -> None:
        """Read messages until the client leaves; nothing a client sends can stop the server."""
        if len(self._connections) >= self.max_connections:
            # Handshakes that raced past the check in _check_handshake.
            await ws.close(1013, "too many connections; retry later")
            return
        conn = Connection(send=_sender(ws), remote=_remote(ws), origin=ws.request.headers.get("Origin") if ws.request else None)
        self._connections[ws] = conn
        in_flight: set[asyncio.Task[Any]] = set()
        log.debug("connection %s from %s", conn.id, conn.remote)
        try:
            async for text in ws:
                await self._receive(conn, text, in_flight)
        except ConnectionClosed:
            pass  # includes 1009 for an oversized message: the library already closed it
        except Exception:
            log.exception("connection %s failed; closing it", conn.id)
            await ws.close(1011, "internal error")
        finally:
            del self._connections[ws]
            conn.close()
            log.debug("connection %s closed", conn.id)

    async def _receive(self, conn: Connection, text: str | bytes, in_flight: set[asyncio.Task[Any]]) -> None:
        try:
            message = rpc.decode(text)
        except ValueError as exc:
            await _send(conn, rpc.encode(rpc.error_response(None, rpc.PARSE_ERROR, str(exc))))
            return
        if rpc.is_response(message):
            if not conn.resolve(message):
                log.info("connection %s answered an unknown or expired request id %r", conn.id, message.get("id"))
            return
        if isinstance(message, list) and any(rpc.is_response(item) for item in message):
            # Answers to our requests may arrive batched; requests in the same batch run normally.
            for item in message:
                if rpc.is_response(item):
                    conn.resolve(item)
            message = [item for item in message if not rpc.is_response(item)]
            if not message:
                return
        if len(in_flight) >= self.max_in_flight:
            ids = rpc.request_ids(message)
            busy = [
                rpc.error_response(
                    i, rpc.BUSY, f"busy: {self.max_in_flight} requests already running on this connection; retry later"
                )
                for i in ids
            ]
            if busy:
                await _send(conn, rpc.encode(busy if isinstance(message, list) else busy[0]))
            else:
                log.info("connection %s: dropped a notification, too many requests in flight", conn.id)
            return
        task = asyncio.create_task(self._dispatch(conn, message))
        in_flight.add(task)
        self._tasks.add(task)
        task.add_done_callback(in_flight.discard)
        task.add_done_callback(self._tasks.discard)

    async def _dispatch(self, conn: Connection, message: Any) -> None:
        try:
            response = await self.dispatcher.handle(message, conn)
        except Exception:
            # Dispatcher.handle converts handler errors; this is a bug in the dispatcher itself.
            log.exception("dispatch failed on connection %s", conn.id)
            errors = [
                rpc.error_response(i, rpc.INTERNAL_ERROR, "internal error in the dispatcher") for i in rpc.request_ids(message)
            ]
            response = None
            if errors:
                response = rpc.encode(errors if isinstance(message, list) else errors[0])
        if response is not None:
            await _send(conn, response)


def _counted_connection(owner: RpcServer) -> type[ServerConnection]:
    """A `ServerConnection` that counts itself, and drops itself at once when too many
    connections are still in their opening handshake (half-open sockets cost a descriptor each)."""

    class CountedConnection(ServerConnection):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            owner._sockets[self] = None
            pending = [c for c in owner._sockets if c not in owner._connections and c is not self]
            if len(pending) >= owner.max_pending:
                log.info("dropped the oldest of %d pending handshakes", len(pending))
                owner._sockets.pop(pending[0], None)
                pending[0].transport.abort()

        def connection_lost(self, exc: Exception | None) -> None:
            owner._sockets.pop(self, None)
            super().connection_lost(exc)

    return CountedConnection


def _sender(ws: ServerConnection) -> rpc.Send:
    """`ws.send` that raises `rpc.ConnectionGone`, so handlers need not know websockets."""

    async def send(text: str) -> None:
        try:
            await ws.send(text)
        except ConnectionClosed as exc:
            raise rpc.ConnectionGone(f"connection closed ({exc.rcvd.code if exc.rcvd else 'no close frame'})") from None

    return send


async def _send(conn: Connection, text: str) -> None:
    """Send, ignoring a connection that closed meanwhile (its reader loop cleans up)."""
    try:
        await conn.send(text)
    except rpc.ConnectionGone:
        pass


def _single(headers: Headers, name: str) -> str | None:
    values = headers.get_all(name)
    return values[0] if len(values) == 1 else None


def _refuse(ws: ServerConnection, status: HTTPStatus, reason: str) -> Response:
    log.info("refused handshake: %d %s", status.value, reason)  # never log the path: it holds the token
    return ws.respond(status, reason + "\n")


def _json_response(ws: ServerConnection, body: bytes) -> Response:
    headers = Headers(
        [
            ("Connection", "close"),
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
        ]
    )
    return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, headers, body)


def _remote(ws: ServerConnection) -> str:
    address = ws.remote_address
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) and len(address) >= 2 else str(address)
