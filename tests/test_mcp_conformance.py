"""The server scenarios of the MCP conformance suite (npm `@modelcontextprotocol/conformance`,
installed by scripts/setup into tests/mcp-conformance/ with the Node 22 it needs) against MCP over
streamable HTTP on the running sidecar (`PALINODE_MCP_HTTP=1`).

The suite cannot send a header, so it talks to tests/bearer_proxy.py, which adds the sidecar's
token and passes everything else through (the dns-rebinding scenario's Host and Origin reach our
checks unchanged). The whole active suite runs; the scenarios that do not apply are the suite's
own expected-failures baseline (tests/mcp-conformance/not-applicable.yml), so a new failure or a
scenario that starts to pass fails the run. Skipped, with the reason, when the install is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest
from bearer_proxy import bearer_proxy
from mcp_helpers import copy_sample
from sidecar_helpers import discovery, running_sidecar

HERE = Path(__file__).parent / "mcp-conformance"
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
NODE = HERE / "node_modules" / ".bin" / ("node.cmd" if os.name == "nt" else "node")
BASELINE = HERE / "not-applicable.yml"

# Scenarios that test what we offer; each must report only SUCCESS checks. (tools-call-simple-text
# and tools-call-error also pass, but only because the suite's fixture tools are unknown to us and
# an unknown tool answers with an error in text: they say nothing about our server.)
APPLICABLE = {
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "prompts-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
}


def _node_major() -> int:
    try:
        out = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, timeout=60).stdout
        return int(out.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


pytestmark = [
    pytest.mark.skipif(
        not SUITE.exists(),
        reason="the MCP conformance suite is not installed: run bash scripts/setup (npm ci in tests/mcp-conformance)",
    ),
    pytest.mark.skipif(
        not NODE.exists() or _node_major() < 22,
        reason="the conformance suite needs Node 22 or later (fs.globSync); npm ci in tests/mcp-conformance brings one",
    ),
]


def test_conformance_server_scenarios(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PALINODE_MCP_HTTP", "1")
    root = copy_sample(tmp_path)
    results = tmp_path / "results"

    async def go() -> tuple[int, str]:
        async with running_sidecar(root, auto_fix=False):
            target = root / ".palinode" / "mcp-http.json"
            for _ in range(200):
                if target.is_file():
                    break
                await asyncio.sleep(0.05)
            url = json.loads(target.read_text())["url"]
            async with bearer_proxy(url, discovery(root)["token"]) as proxied:
                suite = await asyncio.create_subprocess_exec(
                    str(NODE),
                    str(SUITE),
                    "server",
                    "--url",
                    proxied,
                    "--expected-failures",
                    str(BASELINE),
                    "-o",
                    str(results),
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT,
                )
                out, _ = await asyncio.wait_for(suite.communicate(), 600)
                return suite.returncode, out.decode(errors="replace")

    code, out = asyncio.run(go())
    assert code == 0, out[-4000:]
    ran: dict[str, list[dict]] = {}
    for folder in results.iterdir():
        scenario = folder.name.removeprefix("server-").rsplit("-", 6)[0]  # server-NAME-YYYY-MM-DDTHH-MM-SS-mmmZ
        ran[scenario] = json.loads((folder / "checks.json").read_text())
    assert APPLICABLE <= set(ran), sorted(APPLICABLE - set(ran))
    for scenario in APPLICABLE:
        checks = ran[scenario]
        assert checks and all(c["status"] == "SUCCESS" for c in checks), (scenario, checks)
    # the baseline lists only scenarios that ran, so none is excused by a typo
    listed = [line.split("#")[0].strip().removeprefix("- ") for line in BASELINE.read_text().splitlines()]
    excused = {name for name in listed if name and name != "server:"}
    assert excused <= set(ran) and not excused & APPLICABLE
