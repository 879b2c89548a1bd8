"""MCP over streamable HTTP from the running sidecar (`PALINODE_MCP_HTTP=1`): the SDK's own
client with the sidecar's token, and the same Bearer, Host and Origin checks as the WebSocket."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import call, copy_sample, refused
from sidecar_helpers import SidecarClient, discovery, running_sidecar

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}


async def _url(root: Path) -> str:
    target = root / ".palinode" / "mcp-http.json"
    for _ in range(200):
        if target.is_file():
            return json.loads(target.read_text())["url"]
        await asyncio.sleep(0.05)
    raise AssertionError("mcp-http.json never appeared")


def test_streamable_http_on_the_sidecar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PALINODE_MCP_HTTP", "1")
    root = copy_sample(tmp_path)

    async def go():
        async with running_sidecar(root, auto_fix=False):
            url = await _url(root)
            token = discovery(root)["token"]
            port = url.split(":")[2].split("/")[0]
            out = {}
            async with httpx2.AsyncClient(timeout=30) as raw:
                headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
                out["no_token"] = (await raw.post(url, json=INIT, headers=headers)).status_code
                out["wrong_token"] = (
                    await raw.post(url, json=INIT, headers={**headers, "Authorization": "Bearer nope"})
                ).status_code
                bearer = {**headers, "Authorization": f"Bearer {token}"}
                out["rebinding"] = (
                    await raw.post(url, json=INIT, headers={**bearer, "Host": f"attacker.example:{port}"})
                ).status_code
                out["origin"] = (
                    await raw.post(url, json=INIT, headers={**bearer, "Origin": "https://attacker.example"})
                ).status_code
                out["path"] = (await raw.post(url.replace("/mcp", "/other"), json=INIT, headers=bearer)).status_code
                out["ok"] = (await raw.post(url, json=INIT, headers=bearer)).status_code
            client_http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=600))
            async with (
                await SidecarClient.open(root) as plugin,
                client_http,
                Client(streamable_http_client(url, http_client=client_http)) as agent,
            ):
                tools = {t.name for t in (await agent.list_tools()).tools}
                saved = await call(
                    agent,
                    "palinode_save",
                    {
                        # a fact no note is close to (by keywords or meaning), so it is an ADD whether or
                        # not the sidecar's index has its vectors yet
                        "type": "Insight",
                        "title": "Field tablets need drop-rated cases",
                        "text": "Field tablets for the pilot clinics need cases rated for two-metre drops.",
                        "entities": ["project/pilot-launch"],
                    },
                )
                wrote = await plugin.wait_for("wrote", path=saved["path"], timeout=30)
                listed = await call(agent, "palinode_list", {"category": "insight"})
                message = await refused(agent, "palinode_read", {"path": "../outside.md"})
            return out, tools, saved, wrote, listed, message

    out, tools, saved, wrote, listed, message = asyncio.run(go())
    assert out["no_token"] == 401 and out["wrong_token"] == 401
    assert out["rebinding"] == 403 and out["origin"] == 403 and out["path"] == 404
    assert out["ok"] == 200
    assert "palinode_save" in tools and len(tools) == 11
    assert saved["via"] == "sidecar" and saved["op"] == "ADD" and saved["path"] in wrote.params["paths"]
    assert saved["path"] in [n["path"] for n in listed["notes"]]
    assert "inside the vault" in message
    assert not (root / ".palinode" / "mcp-http.json").exists()  # removed when the sidecar stopped
