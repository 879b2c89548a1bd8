"""`palinode-vault mcp` over stdio, driven by the `mcp` SDK's own client: the tools with their
schemas, the PROGRAM.md resource and prompt, and bad input refused with a clear tool error and
no write."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from conftest import tree_digest
from mcp_helpers import call, copy_sample, mcp_client, refused

TOOLS = {
    "palinode_session_start",
    "palinode_search",
    "palinode_read",
    "palinode_list",
    "palinode_dedup_suggest",
    "palinode_orphan_repair",
    "palinode_save",
    "palinode_session_end",
    "palinode_related",
    "palinode_lint",
    "palinode_consolidate",
}


def test_tools_resource_and_prompt(tmp_path: Path) -> None:
    root = copy_sample(tmp_path)

    async def go():
        async with mcp_client(root) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == TOOLS  # nothing approves or rejects inbox notes
            for tool in tools.values():
                assert tool.description and len(tool.description) > 40, tool.name
                assert tool.input_schema["type"] == "object", tool.name
                assert tool.output_schema is not None, tool.name  # structured results
            save = tools["palinode_save"].input_schema
            assert {"type", "title", "text"} <= set(save["required"])
            assert {"entities", "rationale", "alternatives", "confidence", "supersedes"} <= set(save["properties"])
            assert tools["palinode_search"].annotations.read_only_hint is True
            assert tools["palinode_save"].annotations.read_only_hint is False
            resources = (await client.list_resources()).resources
            assert [str(r.uri) for r in resources] == ["palinode://program"]
            text = (await client.read_resource("palinode://program")).contents[0].text
            assert "palinode-settings" in text and "## Update logic" in text
            prompts = (await client.list_prompts()).prompts
            assert [p.name for p in prompts] == ["memory-manager"]
            prompt = await client.get_prompt("memory-manager")
            assert "## What to remember" in prompt.messages[0].content.text
            listed = await call(client, "palinode_list", {"category": "decision"})
            assert "decisions/sms-provider-choice.md" in [n["path"] for n in listed["notes"]]
            note = await call(client, "palinode_read", {"path": "people/tariq-benali.md"})
            assert note["frontmatter"]["id"] == "person-tariq-benali" and note["text"].startswith("---")

    asyncio.run(go())


SECRET = "AKIAQ7RZ3KD2EXAMPLEX"


def test_bad_input_is_a_tool_error_and_writes_nothing(tmp_path: Path) -> None:
    root = copy_sample(tmp_path)
    before = tree_digest(root)
    errors = io.StringIO()
    log = tmp_path / "server-stderr.txt"

    async def go():
        with open(log, "w", encoding="utf-8") as errlog:
            async with mcp_client(root, errlog=errlog) as client:
                out = {}
                out["outside"] = await refused(client, "palinode_read", {"path": "../../etc/passwd"})
                out["absolute"] = await refused(client, "palinode_read", {"path": "/etc/passwd"})
                out["dot"] = await refused(client, "palinode_read", {"path": ".palinode/sidecar.json"})
                out["type"] = await refused(client, "palinode_save", {"type": "Meeting", "title": "Standup", "text": "We met."})
                out["secret"] = await refused(
                    client,
                    "palinode_save",
                    {
                        "type": "Decision",
                        "title": "Use the new S3 bucket",
                        "text": f"We use the deploy key {SECRET} for the reminders bucket.",
                        "confidence": 0.9,
                    },
                )
                out["entity"] = await refused(
                    client,
                    "palinode_save",
                    {
                        "type": "Decision",
                        "title": "Hire a contractor",
                        "text": "We hire a contractor for the Android app.",
                        "entities": ["person/nobody-by-that-name"],
                    },
                )
                out["kind"] = await refused(
                    client,
                    "palinode_save",
                    {"type": "Insight", "title": "Tables", "text": "Tables help.", "entities": ["meeting/standup"]},
                )
                out["supersedes"] = await refused(
                    client,
                    "palinode_save",
                    {
                        "type": "Decision",
                        "title": "Drop SMS",
                        "text": "We drop SMS reminders.",
                        "supersedes": ["decisions/no-such-decision.md"],
                    },
                )
                out["history"] = await refused(
                    client,
                    "palinode_save",
                    {
                        "type": "Decision",
                        "title": "Billing through Mollie",
                        "text": "Clinics are billed through Mollie from January.",
                        "supersedes": ["decisions/stripe-for-billing.md"],  # replaced by Paddle already
                    },
                )
                out["size"] = await refused(
                    client,
                    "palinode_save",
                    {"type": "Insight", "title": "A whole report", "text": "Clinics reply to texts. " * 500},
                )
                out["schema"] = await refused(
                    client, "palinode_save", {"type": "Insight", "title": "x", "text": "y", "confidence": 7}
                )
                out["session"] = await refused(client, "palinode_session_end", {"summary": f"token {SECRET}"})
                out["transcript"] = await refused(
                    client, "palinode_session_end", {"transcript_path": str(tmp_path / "missing.jsonl")}
                )
                out["not_transcript"] = await refused(
                    client, "palinode_session_end", {"transcript_path": str(root / "attachments" / "harbor-booking-flow.svg")}
                )
                return out

    out = asyncio.run(go())
    assert "inside the vault" in out["outside"] and "inside the vault" in out["absolute"]
    assert ".palinode/" in out["dot"] and "not a note" in out["dot"]
    assert "unknown type 'Meeting'" in out["type"] and "Decision" in out["type"]
    assert "secret (AWS Access Key)" in out["secret"] and "nothing was written" in out["secret"]
    assert "person/nobody-by-that-name" in out["entity"] and "refused" in out["entity"]
    assert "canonical ref" in out["kind"]
    assert "decisions/no-such-decision.md" in out["supersedes"] and "names no note" in out["supersedes"]
    assert "replaced already by decisions/paddle-for-billing.md" in out["history"] and "nothing was written" in out["history"]
    assert "agent.max_content_chars (8000)" in out["size"]
    assert "confidence" in out["schema"]
    assert "secret" in out["session"]
    assert "cannot read the transcript" in out["transcript"]
    assert "must be a transcript file" in out["not_transcript"]
    assert tree_digest(root) == before  # no note, no daily line, no operations log line
    assert not (root / ".palinode" / "journal").exists() or not list((root / ".palinode" / "journal").iterdir())
    for path in list(root.rglob("*")) + [log]:
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path  # the value is nowhere, not even in a log
    _ = errors


def test_vault_must_exist(tmp_path: Path) -> None:
    from sidecar_helpers import cli

    result = cli("mcp", "--vault", tmp_path / "nope")
    assert result.returncode != 0 and "vault folder not found" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("tool", ["palinode_lint", "palinode_consolidate"])
def test_read_only_tools_write_nothing(tmp_path: Path, tool: str) -> None:
    root = copy_sample(tmp_path)
    before = tree_digest(root)

    async def go():
        async with mcp_client(root) as client:
            return await call(client, tool)

    result = asyncio.run(go())
    assert tree_digest(root) == before
    if tool == "palinode_consolidate":
        assert result["dry_run"] is True and isinstance(result["operations"], list)
    else:
        assert result["total_files"] > 20 and isinstance(result["findings"], list)


def test_person_fact_replaced_moves_to_the_history_note(tmp_path: Path) -> None:
    """SUPERSEDE in a note that collects facts: the old line moves to `{base}-history.md`."""
    root = copy_sample(tmp_path)

    async def go():
        async with mcp_client(root) as client:
            return await call(
                client,
                "palinode_save",
                {
                    "type": "PersonMemory",
                    "title": "Tariq Benali",
                    "text": "Prefers a short daily standup now that the sync engine work needs quick decisions.",
                    "replaces": "Prefers async updates over standups",
                    "confidence": 0.9,
                },
            )

    result = asyncio.run(go())
    assert result["op"] == "SUPERSEDE" and result["path"] == "people/tariq-benali.md"
    note = (root / "people/tariq-benali.md").read_text()
    history = (root / "people/tariq-benali-history.md").read_text()
    assert "Prefers async updates over standups" not in note and "short daily standup" in note
    assert "Prefers async updates over standups" in history and "status: archived" in history
