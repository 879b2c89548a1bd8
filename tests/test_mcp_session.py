"""An agent's whole session over MCP on a copy of sample-vault/, with the real index (MiniLM on
llama.cpp, sqlite-vec) and the real extraction model for the transcript; then `undo` restores
the vault. The agent is the `mcp` SDK's client on the real `palinode-vault mcp` process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from conftest import tree_digest
from mcp_helpers import CLIENT_NAME, call, copy_sample, mcp_client, refused
from sidecar_helpers import cli
from test_agent_install import claude_code_transcript

SECRET = "sk_live_51HvT8qLz9XbC2mN4pR7sV0wY"


def frontmatter(root: Path, rel: str) -> dict:
    from palinode_vault.memory.update.workspace import frontmatter_of

    return frontmatter_of((root / rel).read_text(encoding="utf-8"))


@pytest.mark.requires_models  # session end reads the transcript with the local extraction model
def test_agent_session_end_to_end_then_undo(tmp_path: Path) -> None:
    root = copy_sample(tmp_path)
    original = tree_digest(root)
    transcript = claude_code_transcript(tmp_path / "claude-session.jsonl")

    async def session():
        async with mcp_client(root) as client:
            out: dict = {}
            out["start"] = await call(client, "palinode_session_start")
            out["search"] = await call(client, "palinode_search", {"query": "which SMS provider sends the reminders"})
            draft = "Reminder SMS moves to a Dutch SMS provider that keeps the clinic's name as sender ID."
            out["dedup"] = await call(client, "palinode_dedup_suggest", {"text": draft, "category": "decision"})
            out["supersede"] = await call(
                client,
                "palinode_save",
                {
                    "type": "Decision",
                    "title": "Send reminders through a Dutch SMS provider",
                    "text": draft + " Tariq Benali moves the sender IDs in January.",
                    "rationale": "The current provider stops supporting alphanumeric sender IDs in Portugal in January.",
                    "alternatives": "Staying with the current provider: texts would arrive from a number again.",
                    "entities": ["project/reminder-sms", "person/tariq-benali"],
                    "supersedes": ["decision/sms-provider-choice"],
                    "confidence": 0.9,
                },
            )
            out["noop"] = await call(
                client,
                "palinode_save",
                {
                    "type": "Decision",
                    "title": "Release every second Wednesday",
                    "text": "From December, Harbor releases every second Wednesday.",
                    "entities": ["project/harbor-app"],
                    "confidence": 0.9,
                },
            )
            before_secret = tree_digest(root)
            out["secret"] = await refused(
                client,
                "palinode_save",
                {
                    "type": "Decision",
                    "title": "Billing key",
                    "text": f"Billing uses the live key {SECRET}.",
                    "entities": ["project/billing-migration"],
                    "confidence": 0.9,
                },
            )
            out["after_secret_same"] = tree_digest(root) == before_secret
            out["end"] = await call(
                client,
                "palinode_session_end",
                {
                    "summary": "Moved reminder SMS to a Dutch provider; Tariq moves the sender IDs in January.",
                    "project": "project/reminder-sms",
                    "transcript_path": str(transcript),
                },
            )
            out["lint_new"] = await call(client, "palinode_lint", {"path": out["supersede"]["path"]})
            out["lint_old"] = await call(client, "palinode_lint", {"path": "decisions/sms-provider-choice.md"})
            return out

    out = asyncio.run(session())
    # session start: the core set, with text, and what to call next
    core = [n["path"] for n in out["start"]["core"]]
    assert "people/noor-haddad.md" in core and out["start"]["chars"] <= out["start"]["max_chars"]
    assert "palinode_save" in out["start"]["next"]
    # search and dedup find the decision about to be superseded
    assert "decisions/sms-provider-choice.md" in [r["path"] for r in out["search"]["results"][:3]]
    dedup = out["dedup"]["results"]
    assert dedup[0]["path"] == "decisions/sms-provider-choice.md" and out["dedup"]["strong_at"] == 0.90
    assert "strong" in dedup[0] and "meaning" in out["dedup"]["method"]
    # the superseding decision: new file, old one archived and naming its successor
    new = out["supersede"]["path"]
    assert out["supersede"]["op"] == "SUPERSEDE" and out["supersede"]["summary"] == f"SUPERSEDE {new}"
    assert out["supersede"]["via"] == "local" and new.startswith("decisions/")
    new_fm, old_fm = frontmatter(root, new), frontmatter(root, "decisions/sms-provider-choice.md")
    assert old_fm["status"] == "archived" and old_fm["superseded_by"] == new_fm["id"]
    assert new_fm["supersedes"] == ["decision-sms-provider-choice"] and new_fm["status"] == "active"
    assert set(new_fm["entities"]) == {"project/reminder-sms", "person/tariq-benali"}
    text = (root / new).read_text()
    assert "[[tariq-benali|Tariq Benali]]" in text  # linked inline where named
    assert "<!-- palinode:see-also -->\n## See also\n- [[reminder-sms]]\n" in text  # the rest in the footer
    assert out["lint_new"]["findings"] == [] and out["lint_old"]["findings"] == []
    # a restatement is a NOOP that names where the vault already has it
    assert out["noop"]["op"] == "NOOP" and out["noop"]["summary"] == "NOOP: already in decisions/biweekly-release-train.md"
    # the secret: refused naming the kind only, nothing written
    assert "secret (" in out["secret"] and SECRET not in out["secret"] and out["after_secret_same"]
    # session end: the daily note and the session on the project
    end = out["end"]
    assert end["turns"] == 2 and end["daily"].startswith("daily/")
    daily = (root / end["daily"]).read_text()
    assert "Summary: Moved reminder SMS to a Dutch provider" in daily and "[[reminder-sms]]" in daily
    assert "Session: Moved reminder SMS to a Dutch provider" in (root / "projects/reminder-sms.md").read_text()
    # every operation logged with the client's name, the secret nowhere
    log = [json.loads(x) for x in (root / "logs/operations.jsonl").read_text().splitlines()]
    ours = [x for x in log if x["source"] == f"mcp:{CLIENT_NAME}"]
    assert {"SUPERSEDE", "ARCHIVE", "NOOP", "SESSION_END"} <= {x["op"] for x in ours}
    for path in root.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    # undo, run by run (session end, NOOP, supersede), restores the vault byte for byte
    for _ in range(3):
        result = cli("undo", "--vault", root)
        assert result.returncode == 0, result.stderr
    assert tree_digest(root) == original
