"""Agent commands: `mcp` (the MCP server over stdio), `agent install`, `agent doctor`, and the
Claude Code hooks `agent hook session-start|session-end`."""

from __future__ import annotations

import difflib
import json
import os
import sys
from pathlib import Path

import click

from palinode_vault.cli.group import main
from palinode_vault.cli.options import resolve_vault, vault_option


@main.command("mcp")
@vault_option
@click.option(
    "--embedding-model",
    envvar="PALINODE_EMBEDDING_MODEL",
    metavar="PATH",
    help="A GGUF embedding model instead of the default all-MiniLM-L6-v2.",
)
def mcp_command(vault: Path, embedding_model: str | None) -> None:
    """Serve the vault to an AI agent over MCP (stdio): PROGRAM.md's palinode_* tools."""
    from palinode_vault.mcp.server import run_stdio

    run_stdio(resolve_vault(vault), embedding_model)


@main.group()
def agent() -> None:
    """Connect AI agents (Claude Code, Cursor, Codex, Claude Desktop) to the vault over MCP."""


_CLIENT = click.option(
    "--client",
    required=True,
    type=click.Choice(["claude-code", "cursor", "codex", "claude-desktop"]),
    help="The agent to configure.",
)
_PROJECT = click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Configure this project folder only (default: the client's user-wide config).",
)


def _diff(change) -> str:
    old = (change.old or "").splitlines(keepends=True)
    new = change.new.splitlines(keepends=True)
    label = str(change.path)
    return "".join(difflib.unified_diff(old, new, label if change.old is not None else "/dev/null", label))


def _write(path: Path, text: str) -> None:
    """Write a config atomically (temp file beside it, then rename); the old one is kept as .bak."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        backup = path.with_name(path.name + ".bak")
        backup.write_bytes(path.read_bytes())
    tmp = path.with_name(f".{path.name}.palinode-tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@agent.command("install")
@vault_option
@_CLIENT
@_PROJECT
@click.option("--dry-run", is_flag=True, help="Print what would change; write nothing.")
@click.option("--yes", is_flag=True, help="Change existing config files without asking (the diff is still shown).")
def agent_install(vault: Path, client: str, project: Path | None, dry_run: bool, yes: bool) -> None:
    """Add palinode-vault to CLIENT's MCP servers (and, for Claude Code, the session hooks).

    A config that exists is never changed without showing the diff first; other entries stay."""
    from palinode_vault.mcp.clients import ConfigError, plan

    root = resolve_vault(vault)
    try:
        changes = plan(client, root, project.resolve() if project else None)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    todo = [c for c in changes if c.changed]
    if not todo:
        click.echo(f"{client} is already configured for {root}")
        return
    for change in todo:
        click.echo(_diff(change), nl=False)
    if dry_run:
        click.echo(f"dry run: {len(todo)} file(s) would change; nothing written")
        return
    existing = [c for c in todo if c.old is not None]
    if existing and not yes:
        if not sys.stdin.isatty():
            raise click.ClickException("existing config would change (diff above); rerun with --yes to accept it")
        if not click.confirm(f"change {', '.join(str(c.path) for c in existing)}?", default=False):
            raise click.ClickException("nothing written")
    for change in todo:
        _write(change.path, change.new)
        click.echo(f"wrote {change.path}" + (" (previous version kept as .bak)" if change.old is not None else ""))
    click.echo(f"check it with: palinode-vault agent doctor --client {client}" + (f" --project {project}" if project else ""))


@agent.command("doctor")
@_CLIENT
@_PROJECT
def agent_doctor(client: str, project: Path | None) -> None:
    """Check that CLIENT's config starts the palinode-vault MCP server and that it answers."""
    from palinode_vault.mcp.clients import ConfigError, config_path, configured

    try:
        entry = configured(client, project.resolve() if project else None)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    path = config_path(client, project.resolve() if project else None)
    if entry is None:
        raise click.ClickException(f"no palinode-vault entry in {path}; run palinode-vault agent install --client {client}")
    command, args = entry
    click.echo(f"config: {path}")
    click.echo(f"command: {command} {' '.join(args)}")
    import asyncio  # here, not at the top: every other command starts faster without it

    try:
        tools = asyncio.run(_probe(command, args))
    except Exception as exc:  # noqa: BLE001 - the doctor reports, never a traceback
        raise click.ClickException(f"the server did not start or answer: {type(exc).__name__}: {exc}") from exc
    missing = sorted({"palinode_session_start", "palinode_save", "palinode_search"} - set(tools))
    if missing:
        raise click.ClickException(f"the server answered but lacks {', '.join(missing)}")
    click.echo(f"ok: the server started and lists {len(tools)} tools")


async def _probe(command: str, args: list[str]) -> list[str]:
    import asyncio

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=command, args=args)
    async with asyncio.timeout(120):
        async with Client(params) as client:
            result = await client.list_tools()
    return [t.name for t in result.tools]


@agent.group("hook")
def hook() -> None:
    """Claude Code hooks (installed by `agent install --client claude-code`)."""


@hook.command("session-start")
@vault_option
def hook_session_start(vault: Path) -> None:
    """SessionStart: print the core memories, which Claude Code adds to the session's context."""
    from palinode_vault.cli.vault_cmds import open_vault
    from palinode_vault.mcp.reads import session_start
    from palinode_vault.memory.weekly import access

    v = open_vault(vault, quiet=True)
    result = session_start(v, access.new_session("hook"))
    click.echo("# Core memories (palinode-vault)\n")
    for note in result["core"]:
        click.echo(f"## {note['path']}\n\n{note['text'].rstrip()}\n")
    click.echo(result["next"])


@hook.command("session-end")
@vault_option
def hook_session_end(vault: Path) -> None:
    """SessionEnd: read the hook's JSON on stdin (`transcript_path`, `session_id`) and file the
    session: extraction over the transcript, daily note, session memory (one journaled run)."""
    from palinode_vault.mcp.ops import AgentError, SessionEndRequest, client_source
    from palinode_vault.mcp.server import VaultService

    try:
        data = json.loads(sys.stdin.read() or "{}")
    except ValueError as exc:
        raise click.ClickException(f"the hook input on stdin is not JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("transcript_path"), str):
        raise click.ClickException("the hook input has no transcript_path")
    req = SessionEndRequest(transcript_path=data["transcript_path"], session_id=str(data.get("session_id") or "")[:200])
    root = resolve_vault(vault)
    service = VaultService(root)

    from palinode_vault.memory.extraction.extract import load_generator
    from palinode_vault.memory.update.planned import MemoGenerator
    from palinode_vault.program import load_program

    # One memory of the model's answers for the call, so a re-plan (a note changed while the model
    # ran; memory/update/planned.py) does not ask the model again.
    model = MemoGenerator(lambda: load_generator(None, load_program(root)))

    def local(v, index, write):
        from palinode_vault.mcp.ops import session_end

        return session_end(v, req, client_source("claude-code"), generator=model, index=index, write=write)

    import asyncio

    try:
        result = asyncio.run(service.write("agent.session_end", {**req.model_dump(), "client": "claude-code"}, local))
    except AgentError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        service.close()
    click.echo(f"palinode-vault: {result.get('summary')}", err=True)
