"""Composition of the sidecar: lock, socket server, vault state, watcher; run until stopped."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from watchfiles import awatch

from palinode_vault.results import check_notification
from palinode_vault.server import Dispatcher, RpcServer, open_server, stop_on_signals
from palinode_vault.server.rpc import CHECK_RESULTS
from palinode_vault.settings import Settings
from palinode_vault.sidecar.app import Sidecar
from palinode_vault.sidecar.methods import register
from palinode_vault.sidecar.watch import VaultFilter, relative_changes

log = logging.getLogger(__name__)


async def _watch(sidecar: Sidecar, stop: asyncio.Event, debounce_ms: int, step_ms: int) -> None:
    keep = VaultFilter(sidecar.root)
    async for changes in awatch(
        sidecar.root,
        watch_filter=keep,
        stop_event=stop,
        debounce=debounce_ms,
        step=step_ms,
        recursive=True,
        ignore_permission_denied=True,
    ):
        added, modified, deleted = relative_changes(sidecar.root, changes, keep)
        try:
            await sidecar.on_changes(added, modified, deleted)
        except Exception as exc:  # noqa: BLE001 - one bad batch must not stop the watcher
            sidecar.last_error = f"processing changes failed: {exc}"
            log.exception("processing a batch of changes failed")


async def run_sidecar(
    settings: Settings,
    *,
    port: int = 0,
    token: str | None = None,
    stop_event: asyncio.Event | None = None,
    on_ready: Callable[[RpcServer, Sidecar], Any] | None = None,
    debounce_ms: int = 300,
    step_ms: int = 20,
) -> None:
    """Serve one vault until `stop_event` is set or SIGINT/SIGTERM arrives."""
    stop = stop_event or asyncio.Event()
    holder: dict[str, RpcServer] = {}
    loop = asyncio.get_running_loop()

    def notify(method: str, params: dict) -> None:
        """Push a notification; vault work runs in worker threads, the socket in the loop."""
        if CHECK_RESULTS:  # tests: what is pushed is what palinode_vault/results.py says
            check_notification(method, params)
        server = holder.get("server")
        if server is None:
            return
        try:
            in_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            in_loop = False
        if in_loop:
            server.broadcast(method, params)
        else:
            loop.call_soon_threadsafe(server.broadcast, method, params)

    sidecar = Sidecar(settings, notify)
    dispatcher = Dispatcher()
    register(dispatcher, sidecar, lambda: holder["server"].port if "server" in holder else None)
    async with open_server(sidecar.root, dispatcher, port=port, token=token) as server:
        holder["server"] = server
        sidecar.request_edit = lambda conn, params: server.request(conn, "apply_edit", params, timeout=5.0)
        with stop_on_signals(stop):
            watcher = asyncio.create_task(_watch(sidecar, stop, debounce_ms, step_ms), name="palinode-watch")
            try:
                await sidecar.start()
                if on_ready is not None:
                    result = on_ready(server, sidecar)
                    if asyncio.iscoroutine(result):
                        await result
                await stop.wait()
            finally:
                stop.set()
                await sidecar.stop()
                watcher.cancel()
                try:
                    await watcher
                except (asyncio.CancelledError, Exception):  # noqa: BLE001
                    pass
