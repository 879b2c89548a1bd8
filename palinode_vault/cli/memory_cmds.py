"""Memory commands: extract, consolidate, core (PROGRAM.md's passes from the command line)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import click

from palinode_vault.cli.group import main
from palinode_vault.cli.options import vault_option
from palinode_vault.cli.vault_cmds import now_option, open_vault
from palinode_vault.kinds import MEMORY_TYPES, type_named


def _program_or_fail(root: Path):
    from palinode_vault.core.program import ProgramError
    from palinode_vault.program import load_program

    try:
        return load_program(root)
    except ProgramError as exc:
        raise click.ClickException(str(exc)) from exc


@main.command()
@vault_option
@click.argument("transcript", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--dry-run", is_flag=True, help="Show what would be filed, and the diffs; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--model",
    "model",
    default=None,
    help="Generation model: a registered name (smollm2, the default) or a GGUF path; "
    "with --model-server, the server's name for the model.",
)
@click.option(
    "--model-server",
    "model_server",
    default=None,
    metavar="URL",
    help="An OpenAI-compatible chat server to extract with (Ollama: http://127.0.0.1:11434/v1); "
    "overrides PROGRAM.md's generation.model_server.",
)
def extract(vault: Path, transcript: str, dry_run: bool, as_json: bool, model: str | None, model_server: str | None) -> None:
    """Turn a conversation into memories (markdown speaker turns, JSONL of {role, content}, Claude
    Code's transcript JSONL, or text)."""
    from palinode_vault.memory.extraction.extract import extract_text, load_generator, server_settings
    from palinode_vault.memory.update.planned import MemoGenerator, StalePlan, plan_then_write
    from palinode_vault.models import ModelUnavailable

    v = open_vault(vault, quiet=as_json)
    program = _program_or_fail(v.root)
    generator: Any = model  # a name or path, or the chat server's generator
    if model_server:
        from palinode_vault.models.chat_server import ChatServerGenerator

        configured = server_settings(program) or {}
        try:
            generator = ChatServerGenerator(model_server, model=model, timeout=configured.get("timeout_seconds", 120.0))
        except ModelUnavailable as exc:
            raise click.ClickException(str(exc)) from exc
    if transcript == "-":
        text, source = sys.stdin.read(), "stdin"
    else:
        path = Path(transcript)
        if not path.is_file():
            raise click.ClickException(f"transcript not found: {transcript}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise click.ClickException(f"{transcript}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
        source = path.name
    # planned on a snapshot, written only if no note it read changed while the model ran
    memo = MemoGenerator(lambda: load_generator(generator, program))
    try:
        result = plan_then_write(
            v, lambda snap, write: extract_text(snap, text, generator=memo, source=source, dry_run=dry_run, write=write)
        )
    except (ModelUnavailable, StalePlan) as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    if not result.outcomes:
        click.echo("nothing worth keeping" + (" (dry run)" if dry_run else ""))
    for o in result.outcomes:
        conf = f"{o.confidence:.2f}" if o.confidence is not None else "-"
        click.echo(f"{o.op:9} {o.type:15} {o.path or '-'}  ({conf}) {o.reason}")
    if result.withheld_secrets:
        click.echo(f"withheld {result.withheld_secrets} secret(s); logged without the value", err=True)
    for why in result.dropped:
        click.echo(f"dropped: {why}", err=True)
    if result.finish_reason != "stop":
        click.echo(f"the model gave no usable answer ({result.finish_reason}); nothing extracted", err=True)
    if dry_run:
        for changed in sorted(result.diffs):
            click.echo(result.diffs[changed], nl=False)
    elif result.written:
        click.echo(f"wrote {len(result.written)} file(s); palinode-vault undo reverts this pass")
    if result.conflicts:
        click.echo(f"not written (changed on disk meanwhile): {', '.join(result.conflicts)}", err=True)


@main.command()
@vault_option
@click.option("--dry-run", is_flag=True, help="Show every planned operation and diff; write nothing.")
@now_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--model", "model", default=None, help="Generation model for judgement calls (default smollm2).")
@click.option("--no-model", is_flag=True, help="Use only the rules in code (supersession stays 'unclear').")
def consolidate(vault: Path, dry_run: bool, now, as_json: bool, model: str | None, no_model: bool) -> None:
    """The weekly consolidation pass of PROGRAM.md (one journaled run: palinode-vault undo reverts it)."""
    from palinode_vault.memory.extraction.extract import load_generator
    from palinode_vault.memory.update.planned import MemoGenerator, StalePlan, plan_then_write
    from palinode_vault.memory.weekly.consolidate import consolidate as run_consolidation
    from palinode_vault.models import ModelUnavailable

    v = open_vault(vault, now, quiet=as_json)
    _program_or_fail(v.root)
    generator = False if no_model else MemoGenerator(lambda: load_generator(model))
    try:
        result = plan_then_write(
            v, lambda snap, write: run_consolidation(snap, dry_run=dry_run, generator=generator, write=write)
        )
    except (ModelUnavailable, StalePlan) as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    for op in result.operations:
        click.echo(f"{op['op']:11} {op.get('path') or '-'}  {op['reason']}")
    if dry_run:
        for path in sorted(result.diffs):
            click.echo(result.diffs[path], nl=False)
        click.echo(f"dry run: {len(result.diffs)} file(s) would change; nothing written")
    else:
        click.echo(f"wrote {len(result.written)} file(s); palinode-vault undo reverts this consolidation")
    if result.conflicts:
        click.echo(f"not written (changed on disk meanwhile): {', '.join(result.conflicts)}", err=True)


@main.command()
@vault_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@now_option
def core(vault: Path, as_json: bool, now) -> None:
    """The core memory set (core: true notes) for a session start, within core.max_chars."""
    from palinode_vault.memory.weekly import access
    from palinode_vault.memory.weekly.core_memory import core_set

    v = open_vault(vault, now, quiet=as_json)
    _program_or_fail(v.root)
    result = core_set(v)
    # a session starts here: recorded for the weekly core-drift check (memory/weekly/access.py)
    access.record(v.root, "core", access.cli_session(v.root, start=True), [f["path"] for f in result.files])
    if as_json:
        data = result.to_json()
        click.echo(json.dumps(data, indent=2))
        return
    for f in result.files:
        click.echo(f"{f['path']}  {f['title']}")
    click.echo(f"{result.chars} of {result.max_chars} characters")
    for f in result.left_out:
        click.echo(f"left out: {f['path']} ({f['chars']} chars): {f['reason']}", err=True)


@main.group()
def inbox() -> None:
    """The memories waiting in inbox/ for your review: list, approve, reject."""


@inbox.command("list")
@vault_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def inbox_list(vault: Path, as_json: bool) -> None:
    """The inbox notes waiting for review, oldest first."""
    from palinode_vault.memory.review import waiting

    items = waiting(open_vault(vault, quiet=as_json))
    if as_json:
        click.echo(json.dumps({"items": items}, indent=2))
        return
    for x in items:
        conf = f"{x['confidence']:.2f}" if isinstance(x["confidence"], (int, float)) else "-"
        who = "  (about whom? approve it --about NAME)" if x["needs_about"] else ""
        if x["may_replace"]:
            old = x["may_replace"][0]
            who += f"  (does it replace {old}? approve it --supersedes {old}, or --keep-active if it adds to it)"
        click.echo(f"{x['path']}  {x['type']}  ({conf}, since {x['since'] or '?'})  {x['title']}{who}")
    if not items:
        click.echo("nothing waits for review")


def _vault_path(root: Path, note: str) -> str:
    """`note` as a path inside the vault: a file path given from anywhere, or the vault path itself."""
    path = Path(note)
    if path.is_absolute() or path.exists():
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError as exc:
            raise click.ClickException(f"{note} is not inside the vault {root}") from exc
    return note


def _review(
    vault: Path,
    note: str,
    as_json: bool,
    action: str,
    as_type: str | None = None,
    supersedes: tuple[str, ...] = (),
    keep_active: bool = False,
    about: str | None = None,
) -> None:
    from palinode_vault.memory import review

    v = open_vault(vault, quiet=as_json)
    _program_or_fail(v.root)
    note = _vault_path(v.root, note)
    replaced = [_vault_path(v.root, old) for old in supersedes]
    try:
        if action == "approve":
            result = review.approve(v, note, as_type=as_type, supersedes=replaced, keep_active=keep_active, about=about)
        else:
            result = review.reject(v, note)
    except review.ReviewError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    done = "rejected" if action == "reject" else f"approved as {type_named(as_type)}" if as_type else "approved"
    click.echo(f"{done}: {note} -> {result.path}; palinode-vault undo reverts it")
    if result.conflicts:
        click.echo(f"not written (changed on disk meanwhile): {', '.join(result.conflicts)}", err=True)


@inbox.command("approve")
@vault_option
@click.argument("note")
@click.option(
    "--as",
    "as_type",
    metavar="TYPE",
    default=None,
    help=f"File it as this memory type instead ({', '.join(MEMORY_TYPES)}; any case): it is re-written "
    "in that type's keys and sections from its own words first.",
)
@click.option(
    "--supersedes",
    "supersedes",
    metavar="DECISION",
    multiple=True,
    help="The active decision (decisions/x.md) this decision replaces; repeatable. It is retired "
    "(status: archived, superseded_by) in the same run; the review reason names the closest one.",
)
@click.option(
    "--keep-active",
    is_flag=True,
    help="This decision replaces none of the decisions its review_supersedes or review_may_supersede "
    "names (it adds to them): they stay active.",
)
@click.option(
    "--about",
    metavar="NAME",
    default=None,
    help="Who or what this person or project memory is about: their note (people/x.md), or a name "
    "(an existing one's name or alias, else a new note of that name). Needed when its review_about is empty.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def inbox_approve(
    vault: Path,
    note: str,
    as_type: str | None,
    supersedes: tuple[str, ...],
    keep_active: bool,
    about: str | None,
    as_json: bool,
) -> None:
    """Keep NOTE (inbox/x.md): it moves into its folder, or merges into the person's or project's note."""
    _review(vault, note, as_json, "approve", as_type, supersedes, keep_active, about)


@inbox.command("reject")
@vault_option
@click.argument("note")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def inbox_reject(vault: Path, note: str, as_json: bool) -> None:
    """Do not keep NOTE (inbox/x.md): it is archived in archive/inbox/, never deleted."""
    _review(vault, note, as_json, "reject")


_ = dt  # dates arrive through now_option
