"""The socket methods an MCP server sends an agent's writes to: `agent.save` and
`agent.session_end` (docs/PROTOCOL.md, "MCP tools").

When a sidecar serves the vault, `palinode-vault mcp` routes its write tools here, so the
writes happen under the sidecar's lock (planned without it while models work), in its journal (undo reverts them), are remembered as
its own writes by the watcher and announced to the plugin with `wrote`, like `extract`. The work
itself is `palinode_vault.mcp.ops`, the same code the MCP server runs when no sidecar is up.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from palinode_vault import results as r
from palinode_vault.server import Connection, Dispatcher, PalinodeError

INVALID_PARAMS = -32602
BUSY = -32014


def register_agent(dispatcher: Dispatcher, sidecar: Any) -> None:
    from palinode_vault.mcp import ops
    from palinode_vault.mcp.ops import AgentError, SaveRequest, SessionEndRequest, client_source
    from palinode_vault.memory.update.planned import MemoGenerator, StalePlan
    from palinode_vault.sidecar.memory_methods import planned_pass

    class SaveParams(SaveRequest):
        client: str = Field(default="", max_length=200)

    class EndParams(SessionEndRequest):
        client: str = Field(default="", max_length=200)

    def index():
        worker = getattr(sidecar, "index_worker", None)
        return getattr(worker, "reader", None) if worker is not None else None

    async def agent_write(label: str, client: str, run_pass) -> dict:
        """Plan the pass with no lock held, write under it (memory/update/planned.py), announce the writes."""
        await sidecar.ready.wait()
        try:
            result = await planned_pass(sidecar, run_pass)
        except AgentError as exc:
            raise PalinodeError(INVALID_PARAMS, str(exc)) from None
        except StalePlan as exc:
            raise PalinodeError(BUSY, str(exc)) from None
        await sidecar.after_write(result["written"], f"{label} {client_source(client)}")
        return result

    async def save(params: SaveParams, conn: Connection) -> dict:
        req = SaveRequest(**params.model_dump(exclude={"client"}))
        source = client_source(params.client)
        # the statement embeddings of the update logic are computed with no lock held
        return await agent_write(
            "agent.save", params.client, lambda snap, write: ops.save(snap, req, source, index=index(), write=write)
        )

    async def session_end(params: EndParams, conn: Connection) -> dict:
        req = SessionEndRequest(**params.model_dump(exclude={"client"}))
        generator = getattr(sidecar, "memory_generator", None)
        memo = MemoGenerator(generator) if generator is not None else None
        source = client_source(params.client)
        # the model reads the transcript with no lock held
        return await agent_write(
            "agent.session_end",
            params.client,
            lambda snap, write: ops.session_end(snap, req, source, generator=memo, index=index(), write=write),
        )

    dispatcher.register("agent.save", save, SaveParams, r.AgentSaveResult)
    dispatcher.register("agent.session_end", session_end, EndParams, r.AgentSessionEndResult)
    from palinode_vault.mcp.http import start_with_sidecar

    start_with_sidecar(sidecar)  # MCP over streamable HTTP, with PALINODE_MCP_HTTP=1
