"""With `palinode-vault serve` running, the MCP server's writes go through the sidecar: its
journal, its undo, and the plugin (a socket connection) is told with `wrote`."""

from __future__ import annotations

import asyncio
from pathlib import Path

from conftest import tree_digest
from mcp_helpers import call, copy_sample, mcp_client, refused
from sidecar_helpers import SidecarClient, journal_entries, spawn_serve, stop_process


def test_writes_go_through_the_running_sidecar(tmp_path: Path) -> None:
    root = copy_sample(tmp_path)
    original = tree_digest(root)
    proc, _ = spawn_serve(root, "--no-auto-fix")  # only the MCP writes change files
    try:

        async def go():
            async with await SidecarClient.open(root) as plugin, mcp_client(root) as agent:
                await plugin.call("status")
                saved = await call(
                    agent,
                    "palinode_save",
                    {
                        # a fact no note is close to (by keywords or meaning), so it is an ADD whether or
                        # not the sidecar's index has its vectors yet (a fact about clinics answering
                        # reminders was an UPDATE of the SMS insight once the vectors were in)
                        "type": "Insight",
                        "title": "Waiting-room tablets need drop-rated cases",
                        "text": "The waiting-room tablets at the pilot clinics need cases rated for two-metre drops.",
                        "entities": ["project/pilot-launch"],
                        "confidence": 0.8,
                    },
                )
                wrote = await plugin.wait_for("wrote", path=saved["path"], timeout=30)
                message = await refused(
                    agent, "palinode_save", {"type": "Insight", "title": "x", "text": "y z", "entities": ["person/nobody-here"]}
                )
                ended = await call(
                    agent,
                    "palinode_session_end",
                    {"summary": "Looked at how fast clinics answer reminders.", "project": "project/reminder-sms"},
                )
                undo1 = await plugin.call("undo")
                undo2 = await plugin.call("undo")
                return saved, wrote, message, ended, undo1, undo2

        saved, wrote, message, ended, undo1, undo2 = asyncio.run(go())
    finally:
        stop_process(proc)
    assert saved["via"] == "sidecar" and saved["op"] == "ADD" and saved["path"].startswith("insights/")
    assert saved["path"] in wrote.params["paths"] and "agent.save mcp:test-agent" == wrote.params["reason"]
    assert "person/nobody-here" in message  # refused by the sidecar, said to the agent as a tool error
    assert ended["via"] == "sidecar" and ended["daily"].startswith("daily/")
    written = {e["path"] for e in journal_entries(root)}
    assert saved["path"] in written and ended["daily"] in written  # in the sidecar's journal
    assert undo1["restored"] and undo2["restored"]
    assert tree_digest(root) == original  # the sidecar's undo reverted both MCP writes
