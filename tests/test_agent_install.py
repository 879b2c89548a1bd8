"""`palinode-vault agent install|doctor|hook`, and Claude Code's transcript JSONL."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import tree_digest
from mcp_helpers import copy_sample
from sidecar_helpers import cli_env, palinode_vault_cmd

from palinode_vault.memory.extraction.transcript import ASSISTANT, USER, parse_transcript


def run(*args, home: Path, stdin: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**cli_env(), "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "APPDATA": str(home / "AppData")}
    return subprocess.run(
        [*palinode_vault_cmd(), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        input=stdin if stdin is not None else "",
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


def test_install_claude_code_project_writes_entry_and_hooks_then_doctor_starts_it(tmp_path: Path, home: Path) -> None:
    root = copy_sample(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    dry = run("agent", "install", "--vault", root, "--client", "claude-code", "--project", project, "--dry-run", home=home)
    assert dry.returncode == 0, dry.stderr
    assert "+++ " + str(project / ".mcp.json") in dry.stdout and "nothing written" in dry.stdout
    assert not (project / ".mcp.json").exists()
    done = run("agent", "install", "--vault", root, "--client", "claude-code", "--project", project, home=home)
    assert done.returncode == 0, done.stderr
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["palinode-vault"]
    assert entry["type"] == "stdio" and entry["args"][-3:] == ["mcp", "--vault", str(root)]
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    assert "agent hook session-start" in hooks["SessionStart"][0]["hooks"][0]["command"]
    assert "agent hook session-end" in hooks["SessionEnd"][0]["hooks"][0]["command"]
    again = run("agent", "install", "--vault", root, "--client", "claude-code", "--project", project, home=home)
    assert "already configured" in again.stdout
    doctor = run("agent", "doctor", "--client", "claude-code", "--project", project, home=home)
    assert doctor.returncode == 0, doctor.stderr
    assert "ok: the server started and lists 11 tools" in doctor.stdout


def test_existing_config_keeps_other_servers_and_needs_consent(tmp_path: Path, home: Path) -> None:
    root = copy_sample(tmp_path)
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir(parents=True)
    mine = {"mcpServers": {"other": {"command": "other-server", "args": ["--x"]}}, "theme": "dark"}
    config.write_text(json.dumps(mine, indent=4))
    original = config.read_bytes()
    refused = run("agent", "install", "--vault", root, "--client", "cursor", home=home)
    assert refused.returncode != 0 and "--yes" in refused.stderr
    assert '+    "palinode-vault"' in refused.stdout.replace("  ", " ") or "palinode-vault" in refused.stdout  # the diff
    assert config.read_bytes() == original  # not changed without consent
    ok = run("agent", "install", "--vault", root, "--client", "cursor", "--yes", home=home)
    assert ok.returncode == 0, ok.stderr
    data = json.loads(config.read_text())
    assert data["mcpServers"]["other"] == mine["mcpServers"]["other"] and data["theme"] == "dark"
    assert data["mcpServers"]["palinode-vault"]["args"][-3:] == ["mcp", "--vault", str(root)]
    assert config.with_name("mcp.json.bak").read_bytes() == original


def test_codex_toml_and_claude_desktop(tmp_path: Path, home: Path) -> None:
    root = copy_sample(tmp_path)
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('model = "o4"\n\n[mcp_servers.other]\ncommand = "x"\n')
    assert run("agent", "install", "--vault", root, "--client", "codex", "--yes", home=home).returncode == 0
    data = tomllib.loads(config.read_text())
    assert data["model"] == "o4" and data["mcp_servers"]["other"]["command"] == "x"
    assert data["mcp_servers"]["palinode-vault"]["args"][-3:] == ["mcp", "--vault", str(root)]
    assert run("agent", "install", "--vault", root, "--client", "codex", home=home).stdout.startswith(
        "codex is already configured"
    )
    assert run("agent", "install", "--vault", root, "--client", "claude-desktop", home=home).returncode == 0
    desktop = home / ".config" / "Claude" / "claude_desktop_config.json"
    if os.name == "nt":
        desktop = home / "AppData" / "Claude" / "claude_desktop_config.json"
    assert json.loads(desktop.read_text())["mcpServers"]["palinode-vault"]["command"]


def test_broken_config_is_named_not_overwritten(tmp_path: Path, home: Path) -> None:
    root = copy_sample(tmp_path)
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"mcpServers": {,}')
    result = run("agent", "install", "--vault", root, "--client", "cursor", "--yes", home=home)
    assert result.returncode != 0 and str(config) in result.stderr and "not valid JSON" in result.stderr
    assert "Traceback" not in result.stderr
    assert config.read_text() == '{"mcpServers": {,}'
    missing = run("agent", "doctor", "--client", "codex", home=home)
    assert missing.returncode != 0 and "agent install" in missing.stderr


def test_session_start_hook_prints_the_core_set(tmp_path: Path, home: Path) -> None:
    root = copy_sample(tmp_path)
    result = run("agent", "hook", "session-start", "--vault", root, home=home)
    assert result.returncode == 0, result.stderr
    assert "## people/noor-haddad.md" in result.stdout and "palinode_session_end" in result.stdout


CLAUDE_CODE_LINES = [
    {"type": "summary", "summary": "Reminder wording", "leafUuid": "u0"},
    {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "sessionId": "s1",
        "uuid": "u1",
        "message": {"role": "user", "content": "Hana wants the reminder texts to name the clinic first."},
    },
    {
        "parentUuid": "u1",
        "isSidechain": False,
        "type": "assistant",
        "sessionId": "s1",
        "uuid": "u2",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "the person wants..."},
                {"type": "text", "text": "Understood: clinic name first."},
                {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "x"}},
            ],
        },
    },
    {
        "parentUuid": "u2",
        "isSidechain": False,
        "type": "user",
        "sessionId": "s1",
        "uuid": "u3",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
    },
    {
        "parentUuid": "u3",
        "isSidechain": False,
        "type": "user",
        "isMeta": True,
        "sessionId": "s1",
        "uuid": "u4",
        "message": {"role": "user", "content": "<command-name>/clear</command-name>"},
    },
    {
        "parentUuid": "u3",
        "isSidechain": True,
        "type": "assistant",
        "sessionId": "s1",
        "uuid": "u5",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "sub-agent chatter"}]},
    },
]


def claude_code_transcript(path: Path, lines=CLAUDE_CODE_LINES) -> Path:
    path.write_text("\n".join(json.dumps(x) for x in lines) + '\n{"type": "user", "mess', encoding="utf-8")
    return path


def test_claude_code_transcript_turns(tmp_path: Path) -> None:
    text = claude_code_transcript(tmp_path / "t.jsonl").read_text()
    turns = parse_transcript(text)
    assert [(t.role, t.content) for t in turns] == [
        (USER, "Hana wants the reminder texts to name the clinic first."),
        (ASSISTANT, "Understood: clinic name first."),
    ]  # tool calls and results, thinking, meta and sidechain entries and a cut last line skipped
    # the older formats still parse as before
    assert [t.role for t in parse_transcript('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}')] == [
        USER,
        ASSISTANT,
    ]


def test_session_end_hook_files_the_session(tmp_path: Path, home: Path) -> None:
    root = copy_sample(tmp_path)
    transcript = claude_code_transcript(tmp_path / "session.jsonl")
    before = tree_digest(root)
    hook_input = json.dumps(
        {
            "session_id": "s1",
            "transcript_path": str(transcript),
            "hook_event_name": "SessionEnd",
            "cwd": str(tmp_path),
            "reason": "exit",
        }
    )
    result = run("agent", "hook", "session-end", "--vault", root, home=home, stdin=hook_input, timeout=600)
    assert result.returncode == 0, result.stderr
    after = tree_digest(root)
    daily = [p for p in after if p.startswith("daily/") and p not in before]
    assert len(daily) == 1
    log = (root / "logs" / "operations.jsonl").read_text().splitlines()
    assert any('"SESSION_END"' in line and '"mcp:claude-code"' in line for line in log)
    bad = run("agent", "hook", "session-end", "--vault", root, home=home, stdin="not json")
    assert bad.returncode != 0 and "not JSON" in bad.stderr and "Traceback" not in bad.stderr
