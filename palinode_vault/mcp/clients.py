"""Where each agent client keeps its MCP servers, and the entry `agent install` writes there.

- claude-code: `.mcp.json` in the project (`--project DIR`) or `~/.claude.json` (user scope),
  key `mcpServers`; its hooks in `.claude/settings.json` of the project (or `~/.claude/`):
  SessionStart prints the core set into the context, SessionEnd files the session from the
  transcript the hook names on stdin.
- cursor: `.cursor/mcp.json` in the project or `~/.cursor/mcp.json`, key `mcpServers`.
- claude-desktop: `claude_desktop_config.json` in the app's folder (per platform), `mcpServers`.
- codex: `~/.codex/config.toml` (or `.codex/config.toml` in the project), table
  `[mcp_servers.palinode-vault]`.

Nothing here writes: `plan` returns (path, old text, new text) for each file, the CLI shows the
diff and writes only what the person accepts. Other entries and keys of a config stay as they were.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLIENTS = ("claude-code", "cursor", "codex", "claude-desktop")
ENTRY = "palinode-vault"


class ConfigError(ValueError):
    """A client config that cannot be read or changed safely (named, with why)."""


@dataclass
class Change:
    path: Path
    old: str | None
    new: str

    @property
    def changed(self) -> bool:
        return self.old != self.new


def executable() -> list[str]:
    """How a client starts palinode-vault: the console script next to this Python, else on PATH,
    else this Python running the CLI."""
    folder = Path(sys.executable).parent
    for name in ("palinode-vault", "palinode-vault.exe"):
        if (folder / name).is_file():
            return [str(folder / name)]
    found = shutil.which("palinode-vault")
    return [found] if found else [sys.executable, "-c", "from palinode_vault.cli import main; main()"]


def server_command(vault: Path) -> tuple[str, list[str]]:
    exe = executable()
    return exe[0], exe[1:] + ["mcp", "--vault", str(vault)]


def hook_command(vault: Path, event: str) -> str:
    exe = executable()
    quoted = " ".join(_quote(x) for x in exe + ["agent", "hook", event, "--vault", str(vault)])
    return quoted


def _quote(arg: str) -> str:
    return arg if re.fullmatch(r"[\w@%+=:,./\\-]+", arg) else json.dumps(arg)


def desktop_config_path() -> Path:
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if os.name == "nt":
        return Path(os.environ.get("APPDATA", home / "AppData" / "Roaming")) / "Claude" / "claude_desktop_config.json"
    return Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "Claude" / "claude_desktop_config.json"


def config_path(client: str, project: Path | None) -> Path:
    """The file holding the client's MCP servers."""
    home = Path.home()
    if client == "claude-code":
        return project / ".mcp.json" if project else home / ".claude.json"
    if client == "cursor":
        return (project or home) / ".cursor" / "mcp.json"
    if client == "codex":
        return (project or home) / ".codex" / "config.toml"
    if client == "claude-desktop":
        return desktop_config_path()
    raise ConfigError(f"unknown client {client!r}; one of {', '.join(CLIENTS)}")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def _load_json(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path}:{getattr(exc, 'lineno', '?')}: not valid JSON ({exc}); fix it or move it aside first") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level is not a JSON object")
    return data


def _json_entry(path: Path, vault: Path, stdio_type: bool) -> Change:
    old = _read(path)
    data = _load_json(path, old)
    servers = data.get("mcpServers")
    if servers is None:
        servers = data["mcpServers"] = {}
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: mcpServers is not an object")
    command, args = server_command(vault)
    entry: dict[str, Any] = {"type": "stdio"} if stdio_type else {}
    entry.update({"command": command, "args": args})
    servers[ENTRY] = entry
    return Change(path, old, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _codex_entry(path: Path, vault: Path) -> Change:
    old = _read(path)
    command, args = server_command(vault)
    block = f"[mcp_servers.{ENTRY}]\ncommand = {json.dumps(command)}\nargs = [{', '.join(json.dumps(a) for a in args)}]\n"
    text = old or ""
    header = re.compile(rf"^\[mcp_servers\.(?:\"{ENTRY}\"|{ENTRY})\][ \t]*$", re.M)
    m = header.search(text)
    if m:
        nxt = re.compile(r"^\[", re.M).search(text, m.end())
        end = nxt.start() if nxt else len(text)
        new = text[: m.start()] + block + ("\n" if nxt else "") + text[end:]
    else:
        if text and not text.endswith("\n"):
            text += "\n"
        new = text + ("\n" if text else "") + block
    return Change(path, old, new)


def _claude_hooks(path: Path, vault: Path) -> Change:
    old = _read(path)
    data = _load_json(path, old)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f"{path}: hooks is not an object")
    for event, name in (("SessionStart", "session-start"), ("SessionEnd", "session-end")):
        command = hook_command(vault, name)
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"{path}: hooks.{event} is not a list")
        # ours is recognised by its command; replaced in place, the person's hooks stay
        kept = [
            g
            for g in groups
            if not (
                isinstance(g, dict)
                and any(isinstance(h, dict) and f"agent hook {name}" in str(h.get("command", "")) for h in g.get("hooks", []))
            )
        ]
        kept.append({"hooks": [{"type": "command", "command": command, "timeout": 600 if name == "session-end" else 60}]})
        hooks[event] = kept
    return Change(path, old, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def plan(client: str, vault: Path, project: Path | None = None) -> list[Change]:
    """The files `agent install` would write for `client`, with their old and new text."""
    path = config_path(client, project)
    if client == "codex":
        return [_codex_entry(path, vault)]
    changes = [_json_entry(path, vault, stdio_type=client == "claude-code")]
    if client == "claude-code":
        settings = (project / ".claude" / "settings.json") if project else Path.home() / ".claude" / "settings.json"
        changes.append(_claude_hooks(settings, vault))
    return changes


def configured(client: str, project: Path | None = None) -> tuple[str, list[str]] | None:
    """(command, args) of our entry in the client's config, or None when there is none."""
    path = config_path(client, project)
    text = _read(path)
    if text is None:
        return None
    if client == "codex":
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc})") from exc
        entry = (data.get("mcp_servers") or {}).get(ENTRY)
    else:
        entry = (_load_json(path, text).get("mcpServers") or {}).get(ENTRY)
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return None
    return entry["command"], [str(a) for a in entry.get("args") or []]
