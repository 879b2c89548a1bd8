"""Vault commands: scan, lint, fix, undo, graph."""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import sys
from pathlib import Path

import click

from palinode_vault.cli.group import main
from palinode_vault.cli.options import resolve_vault, vault_option


def now_option(func):
    return click.option(
        "--now",
        type=click.DateTime(formats=["%Y-%m-%d"]),
        default=None,
        help="Treat this date (YYYY-MM-DD) as today for date-based checks.",
    )(func)


def _progress(quiet: bool):
    if quiet or not sys.stderr.isatty():
        return None

    def progress(phase: str, done: int, total: int) -> None:
        click.echo(f"\r{phase}: {done}/{total}", err=True, nl=done == total)

    return progress


def no_cyclic_gc() -> None:
    """For a one-shot command that loads the whole vault and exits (scan, lint, fix, graph).

    It builds a large acyclic heap (notes, links, findings); the cyclic collector's full passes
    over it cost a tenth of a cold scan and would free nothing before the process exits.
    """
    import gc

    gc.disable()


def open_vault(vault: Path, now: dt.datetime | None = None, quiet: bool = False, load: bool = True):
    """A Vault for a one-shot command (loaded, with a progress line on a terminal)."""
    from palinode_vault.settings import Settings
    from palinode_vault.vault import Vault

    settings = Settings(vault=resolve_vault(vault), now=now.date() if now else None)
    v = Vault(settings)
    if load:
        try:
            v.load(_progress(quiet))
        except Exception as exc:  # noqa: BLE001 - a person gets a sentence, not a traceback
            raise click.ClickException(f"cannot read the vault {settings.vault}: {exc}") from exc
    return v


def note_paths(v, paths: tuple[str, ...], command: str) -> list[str]:
    """The vault-relative notes named by `paths` (a note or a folder, vault-relative or not).

    A path that does not exist, lies outside the vault, or names no note palinode-vault reads (not
    Markdown, excluded, in a dot-folder) is a usage error with one line naming it: never a silent
    "0 findings".
    """
    out: list[str] = []
    known = set(v.state.notes) | set(v.state.unreadable)
    for raw in paths:
        given = Path(raw).expanduser()
        candidates = [given] if given.is_absolute() else [Path.cwd() / given, v.root / given]
        found = next((c for c in candidates if c.exists()), None)
        if found is None:
            raise click.ClickException(f"{command}: {raw}: no such file or folder (in {Path.cwd()} or the vault {v.root})")
        try:
            rel = found.resolve().relative_to(v.root).as_posix()
        except ValueError:
            raise click.ClickException(f"{command}: {raw} is not inside the vault {v.root}") from None
        if found.is_dir():
            prefix = "" if rel == "." else rel + "/"
            inside = sorted(p for p in known if p.startswith(prefix))
            if not inside:
                raise click.ClickException(f"{command}: {raw}: no notes of the vault in this folder")
            out += inside
        elif rel in known:
            out.append(rel)
        else:
            why = (
                "not a Markdown note" if not rel.lower().endswith(".md") else "excluded or hidden (see PROGRAM.md ignore_folders)"
            )
            raise click.ClickException(f"{command}: {raw} is not a note palinode-vault reads ({why})")
    return list(dict.fromkeys(out))


def _program_error(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


def read_only_error(root: Path, exc: OSError) -> click.ClickException:
    """One line for a vault (or its .palinode/ folder) that cannot be written."""
    where = exc.filename or root
    return click.ClickException(
        f"cannot write to {where}: the vault {root} is read-only ({exc.strerror or exc}); "
        "nothing was changed. Make it writable, or use --dry-run to see the fixes."
    )


def _print_findings(findings) -> None:
    for f in findings:
        click.echo(f"{f.path}:{f.line}: {f.severity} {f.check}: {f.message}")


@main.command()
@vault_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@now_option
def scan(vault: Path, as_json: bool, now) -> None:
    """Count notes, links, unresolved links, orphans and findings per check."""
    no_cyclic_gc()
    from palinode_vault import quick_scan
    from palinode_vault.files import walk_with_problems

    root = resolve_vault(vault)
    walked = walk_with_problems(root)
    key = quick_scan.fingerprint(root, now.date() if now else dt.date.today(), walked)
    summary = quick_scan.stored_summary(root, key)  # nothing changed: no parser, no pydantic
    if summary is None:
        from palinode_vault.core.program import ProgramError
        from palinode_vault.maintenance import vault_report

        v = open_vault(vault, now, quiet=as_json, load=False)
        v.use_walk(walked)  # the files as fingerprinted: walked once
        try:
            _, summary = vault_report(v, _progress(as_json))
        except ProgramError as exc:
            raise _program_error(exc) from None
        quick_scan.store_summary(root, key, summary)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(f"vault: {root}")
    for key in ("markdown_files", "memory_files", "attachments", "links", "unresolved", "orphans"):
        click.echo(f"  {key.replace('_', ' ')}: {summary[key]}")
    click.echo("  findings:" + ("" if summary["findings"] else " none"))
    for check, n in summary["findings"].items():
        click.echo(f"    {check}: {n}")


@main.command()
@vault_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--check", "checks", multiple=True, metavar="NAME", help="Only this check (repeatable).")
@click.argument("paths", nargs=-1)
@now_option
def lint(vault: Path, as_json: bool, checks: tuple[str, ...], paths: tuple[str, ...], now) -> None:
    """Report findings: drift, broken links, schema problems, stale memories and more.

    Exit status 1 when a finding of severity error exists.
    """
    no_cyclic_gc()
    from palinode_vault.core.findings import CHECKS
    from palinode_vault.core.lint import has_errors
    from palinode_vault.core.program import ProgramError
    from palinode_vault.maintenance import LintReport, vault_report
    from palinode_vault.maintenance import lint as run_lint

    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise click.BadParameter(f"unknown check {', '.join(unknown)}; known: {', '.join(CHECKS)}", param_hint="--check")
    v = open_vault(vault, now, quiet=as_json, load=bool(paths))
    try:
        if paths:
            report = run_lint(v, note_paths(v, paths, "lint"), checks or None)
        else:
            report, _ = vault_report(v, _progress(as_json))
            if checks:
                report = LintReport(report.total_files, [f for f in report.findings if f.check in set(checks)])
    except ProgramError as exc:
        raise _program_error(exc) from None
    if as_json:
        data = report.to_json()
        from palinode_vault.index import add_lint_candidates  # repair candidates, when indexed

        add_lint_candidates(v, data)
        click.echo(json.dumps(data, indent=2, default=str))
    else:
        _print_findings(report.findings)
        summary = ", ".join(f"{k} {n}" for k, n in report.to_json()["counts"].items()) or "no findings"
        click.echo(f"{len(report.findings)} findings in {v.root.name} ({summary})", err=True)
    sys.exit(1 if has_errors(report.findings) else 0)


@main.command()
@vault_option
@click.option("--dry-run", is_flag=True, help="Print the unified diffs; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.argument("paths", nargs=-1)
@now_option
def fix(vault: Path, dry_run: bool, as_json: bool, paths: tuple[str, ...], now) -> None:
    """Apply the safe fixes to memory-tier notes: entities, label links, footers, cross_refs."""
    no_cyclic_gc()
    from palinode_vault.core.program import ProgramError
    from palinode_vault.maintenance import fix as run_fix

    v = open_vault(vault, now, quiet=as_json)
    if not dry_run and not os.access(v.root, os.W_OK):
        # Each unwritable note is skipped with its reason; a vault that is read-only as a whole
        # is said once, up front, and fails the command.
        raise read_only_error(v.root, PermissionError(errno.EACCES, "permission denied", str(v.root)))
    try:
        result = run_fix(v, note_paths(v, paths, "fix") if paths else None, dry_run=dry_run)
    except ProgramError as exc:
        raise _program_error(exc) from None
    except PermissionError as exc:
        raise read_only_error(v.root, exc) from None
    if as_json:
        data = result.to_json()
        if dry_run:
            data["would_write"] = sorted(result.diffs)
            data["diff"] = result.diff
        else:
            data["run"] = result.run  # what `undo --run` takes
        click.echo(json.dumps(data, indent=2))
        return
    if dry_run:
        click.echo(result.diff, nl=False)
        click.echo(f"{len(result.diffs)} files would change; nothing written (dry run)", err=True)
    else:
        for path in result.written:
            click.echo(f"fixed {path}: {'; '.join(result.reasons.get(path, []))}")
        click.echo(f"{len(result.written)} written, {result.unchanged} unchanged, {len(result.skipped)} skipped", err=True)
    for item in result.skipped:
        click.echo(f"skipped {item['path']}: {item['reason']}", err=True)


@main.command()
@vault_option
@click.option(
    "--run",
    "run_id",
    metavar="RUN",
    help="Revert this run (an id `fix --json`, a review or `undo --json` printed) even when others came "
    "after it; the sidecar's upkeep of its files is reverted with it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def undo(vault: Path, run_id: str | None, as_json: bool) -> None:
    """Restore the files changed by the last fix run (or consolidation, review, sidecar batch)."""
    from palinode_vault.writer import undo_last, undo_run

    root = resolve_vault(vault)
    result = undo_run(root, run_id) if run_id else undo_last(root)
    if result.refused:
        raise click.ClickException(f"not undone: {result.refused}")
    if as_json:
        click.echo(
            json.dumps(
                {
                    "run": result.run,
                    "label": result.label,
                    "restored": result.restored,
                    "skipped": [{"path": p, "reason": r} for p, r in result.skipped],
                },
                indent=2,
            )
        )
        return
    if result.run is None:
        click.echo("nothing to undo")
        return
    for path in result.restored:
        click.echo(f"restored {path}")
    for path, why in result.skipped:
        click.echo(f"skipped {path}: {why}", err=True)
    click.echo(f"undid {result.label} run {result.run}", err=True)


@main.command()
@vault_option
@click.option("--format", "fmt", type=click.Choice(["json", "graphml"]), default="json", show_default=True)
def graph(vault: Path, fmt: str) -> None:
    """Export the link graph: notes, attachments and unresolved targets with typed edges."""
    no_cyclic_gc()
    from palinode_vault.core.graph import build_graph, to_graphml, to_json

    v = open_vault(vault, quiet=True)
    g = build_graph(v.state)
    if fmt == "json":
        click.echo(json.dumps(to_json(g), indent=2))
    else:
        click.echo(to_graphml(g))
