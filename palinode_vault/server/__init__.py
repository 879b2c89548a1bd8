"""The sidecar's socket layer: JSON-RPC 2.0 over a loopback WebSocket, discovery and the lock.

Composition, for `palinode-vault serve`::

    dispatcher = Dispatcher()
    dispatcher.register("status", status_handler, StatusParams)
    asyncio.run(serve_forever(vault, dispatcher, on_ready=start_watcher))

`open_server` is the same thing as an async context manager, for tests and for callers that
run their own loop. The order is fixed: take the vault lock, bind, write sidecar.json; and on
the way out remove sidecar.json, close the connections, release the lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import signal
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

from palinode_vault.server.discovery import (
    SidecarInfo,
    discovery_path,
    read_discovery,
    remove_discovery,
    write_discovery,
)
from palinode_vault.server.lock import VaultLock, VaultLocked, holder
from palinode_vault.server.rpc import (
    BUSY,
    CONFLICT,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    NOT_AVAILABLE,
    NOT_FOUND,
    PATH_OUTSIDE_VAULT,
    ClientError,
    Connection,
    ConnectionGone,
    Dispatcher,
    PalinodeError,
)
from palinode_vault.server.transport import RpcServer, new_token

__all__ = [
    "BUSY",
    "CONFLICT",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "NOT_AVAILABLE",
    "NOT_FOUND",
    "PATH_OUTSIDE_VAULT",
    "ClientError",
    "Connection",
    "ConnectionGone",
    "Dispatcher",
    "PalinodeError",
    "RpcServer",
    "SidecarInfo",
    "VaultLock",
    "VaultLocked",
    "holder",
    "new_token",
    "open_server",
    "read_discovery",
    "serve_forever",
    "stop_on_signals",
]

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def open_server(
    vault_root: Path,
    dispatcher: Dispatcher,
    *,
    port: int = 0,
    token: str | None = None,
    **options: Any,
) -> AsyncIterator[RpcServer]:
    """Lock the vault, start an `RpcServer`, publish sidecar.json; undo all three on exit.

    Raises `VaultLocked` (naming the pid) when another sidecar serves this vault. `options`
    go to `RpcServer` (`max_message_bytes`, `max_connections`, `max_in_flight`, `version`).
    """
    vault = Path(vault_root).resolve()
    if not vault.is_dir():
        raise NotADirectoryError(f"vault {vault} is not a folder; pass the folder that holds the notes")
    with VaultLock(vault):
        # Under the lock no other sidecar writes here: a temp file left is from a killed one.
        for leftover in discovery_path(vault).parent.glob(".sidecar.json.*.tmp"):
            leftover.unlink(missing_ok=True)
        server = RpcServer(dispatcher, port=port, token=token, **options)
        await server.start()
        try:
            write_discovery(vault, port=server.port, token=server.token, version=server.version)
            log.info("listening on %s for %s", server.url, vault)
            try:
                yield server
            finally:
                remove_discovery(vault)
        finally:
            await server.stop()


async def serve_forever(
    vault_root: Path,
    dispatcher: Dispatcher,
    *,
    port: int = 0,
    token: str | None = None,
    on_ready: Callable[[RpcServer], Any] | None = None,
    stop_event: asyncio.Event | None = None,
    **options: Any,
) -> None:
    """Serve until `stop_event` is set or SIGINT/SIGTERM arrives, then shut down cleanly.

    `on_ready(server)` (plain or async) runs once sidecar.json is written: start the watcher
    there, keep `server` for `broadcast` and `request`. Run it with `asyncio.run(...)`.
    """
    stop = stop_event or asyncio.Event()
    async with open_server(vault_root, dispatcher, port=port, token=token, **options) as server:
        with stop_on_signals(stop):
            if on_ready is not None:
                result = on_ready(server)
                if inspect.isawaitable(result):
                    await result
            await stop.wait()
        log.info("stopping")


@contextlib.contextmanager
def stop_on_signals(stop: asyncio.Event, signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM set `stop` instead of killing the process.

    Only the main thread can own signal handlers; elsewhere this does nothing.
    """
    loop = asyncio.get_running_loop()
    installed = []
    for signum in signals:
        try:
            loop.add_signal_handler(signum, stop.set)
        except (ValueError, RuntimeError, NotImplementedError):
            continue  # not the main thread, or a loop without signal support
        installed.append(signum)
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
