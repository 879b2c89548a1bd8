"""The MCP Inspector's CLI (npm `@modelcontextprotocol/inspector --cli`, installed by
scripts/setup into tests/mcp-inspector/) lists and calls every tool of `palinode-vault mcp`.
Skipped, with the reason, when npm or that install is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp_helpers import copy_sample
from sidecar_helpers import cli_env, palinode_vault_cmd
from test_mcp_stdio import TOOLS

BIN = (
    Path(__file__).parent
    / "mcp-inspector"
    / "node_modules"
    / ".bin"
    / ("mcp-inspector.cmd" if os.name == "nt" else "mcp-inspector")
)

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (the MCP Inspector runs on Node.js)"),
    pytest.mark.skipif(
        not BIN.exists(), reason="the MCP Inspector is not installed: run bash scripts/setup (npm ci in tests/mcp-inspector)"
    ),
]


def inspector(root: Path, *args: str) -> dict:
    cmd = [str(BIN), "--cli", *palinode_vault_cmd(), "mcp", "--vault", str(root), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=cli_env())
    # the CLI prints the JSON answer first (an error line may follow it)
    text = done.stdout
    decoder = json.JSONDecoder()
    answer, _ = decoder.raw_decode(text[text.index("{") :])
    return answer


CALLS = {
    "palinode_session_start": [],
    "palinode_search": ["query=SMS provider", "limit=3"],
    "palinode_read": ["path=people/tariq-benali.md"],
    "palinode_list": ["category=person"],
    "palinode_dedup_suggest": ["text=Reminders go through an EU SMS provider"],
    "palinode_orphan_repair": ["link_text=Tariq"],
    "palinode_save": [
        "type=Insight",
        "title=Clinics read reminders in the morning",
        "text=Clinics read reminder replies first thing in the morning.",
        'entities=["project/reminder-sms"]',
        "confidence=0.7",
    ],
    "palinode_session_end": ["summary=Checked when clinics read replies.", "project=project/reminder-sms"],
    "palinode_related": ["path=decisions/sms-provider-choice.md"],
    "palinode_lint": ["path=people/tariq-benali.md"],
    "palinode_consolidate": [],
}


def test_inspector_lists_and_calls_every_tool(tmp_path: Path) -> None:
    root = copy_sample(tmp_path)
    listed = inspector(root, "--method", "tools/list")
    assert {t["name"] for t in listed["tools"]} == TOOLS == set(CALLS)
    for tool, args in CALLS.items():
        extra = ["--tool-arg", *args] if args else []
        answer = inspector(root, "--method", "tools/call", "--tool-name", tool, *extra)
        assert answer.get("isError") is False, (tool, answer)
        assert isinstance(answer["structuredContent"], dict), tool
    refused = inspector(root, "--method", "tools/call", "--tool-name", "palinode_read", "--tool-arg", "path=../../etc/passwd")
    assert refused["isError"] is True and "inside the vault" in refused["content"][0]["text"]
    resources = inspector(root, "--method", "resources/list")
    assert [r["uri"] for r in resources["resources"]] == ["palinode://program"]
    prompts = inspector(root, "--method", "prompts/list")
    assert [p["name"] for p in prompts["prompts"]] == ["memory-manager"]
