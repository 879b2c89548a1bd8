"""Helpers for the MCP tests: the real `palinode-vault mcp` process driven by the `mcp` SDK's own
client (a client we did not write), over stdio."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TextIO

from conftest import SAMPLE_VAULT
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Implementation
from sidecar_helpers import cli_env, palinode_vault_cmd

CLIENT_NAME = "test-agent"


def copy_sample(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".palinode"))
    return root


@contextlib.asynccontextmanager
async def mcp_client(root: Path, errlog: TextIO | None = None, name: str = CLIENT_NAME) -> AsyncIterator[Client]:
    """The SDK's Client on `palinode-vault mcp --vault ROOT` (a real subprocess, stdio)."""
    cmd = palinode_vault_cmd()
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp", "--vault", str(root)], env=cli_env())
    transport = stdio_client(params, errlog=errlog) if errlog is not None else stdio_client(params)
    async with Client(transport, client_info=Implementation(name=name, version="1.0"), read_timeout_seconds=600) as client:
        yield client


async def call(client: Client, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """A tool call that must succeed: its structured result."""
    result = await client.call_tool(tool, args or {})
    assert not result.is_error, f"{tool} failed: {result.content[0].text if result.content else result}"
    assert result.structured_content is not None, f"{tool} gave no structured content"
    # the text content carries the same JSON for clients that read only text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def refused(client: Client, tool: str, args: dict[str, Any]) -> str:
    """A tool call that must be refused: its error message."""
    result = await client.call_tool(tool, args)
    assert result.is_error, f"{tool} was not refused: {result.structured_content}"
    text = result.content[0].text
    assert "Traceback" not in text
    return text
