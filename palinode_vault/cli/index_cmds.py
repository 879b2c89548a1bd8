"""Index commands: search, dedup, repair, related, reindex.

Each command brings `VAULT/.palinode/index.db` up to date first (only new or changed text is
embedded; an unchanged vault costs a stat per file), then asks it. Long work shows a progress
bar on a terminal and can be interrupted with Ctrl-C and resumed by running again.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import NoReturn

import click

from palinode_vault.cli.group import main
from palinode_vault.cli.options import resolve_vault, vault_option

_MODEL_HELP = "A GGUF embedding model instead of the default all-MiniLM-L6-v2."
#: How long `search` embeds new text before it answers: a first search on a big vault answers
#: by keywords at once instead of embedding for half an hour (`reindex` or the sidecar fills in).
SEARCH_EMBED_SECONDS = 5.0


def _model_option(func):
    return click.option("--embedding-model", envvar="PALINODE_EMBEDDING_MODEL", metavar="PATH", help=_MODEL_HELP)(func)


def _json_option(func):
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")(func)


def _no_update_option(func):
    return click.option("--no-update", is_flag=True, help="Use the index as it is; do not bring it up to date first.")(func)


class ProgressBar:
    """A one-line progress bar on stderr (only on a terminal): phase, count, rate, time left."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.started: dict[str, float] = {}

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        start = self.started.setdefault(phase, now)
        width = 28
        filled = int(width * done / total)
        rate = done / (now - start) if now > start else 0.0
        left = f" {int((total - done) / rate) // 60}m{int((total - done) / rate) % 60:02d}s left" if rate and done < total else ""
        label = {"scan": "reading notes", "index": "indexing", "embed": "embedding"}.get(phase, phase)
        click.echo(
            f"\r{label:<13} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
            f"{f' {rate:.0f}/s' if phase == 'embed' and rate else ''}{left}   ",
            err=True,
            nl=done >= total,
        )


def open_vault_index(
    vault: Path, embedding_model: str | None, *, update: bool = True, quiet: bool = False, embed_seconds: float | None = None
):
    """(Vault, Index) for a one-shot command, the index brought up to date unless `update` is False
    (keywords fully; embedding for at most `embed_seconds`, None: all of it)."""
    from palinode_vault.index import open_index, refresh
    from palinode_vault.settings import Settings
    from palinode_vault.store import StoreError
    from palinode_vault.vault import Vault

    root = resolve_vault(vault)
    v = Vault(Settings(vault=root, embedding_model=embedding_model))
    bar = ProgressBar(not quiet and sys.stderr.isatty())
    try:
        index = open_index(root, model_path=embedding_model)
    except (StoreError, OSError) as exc:  # OSError: a symlinked index.db, refused (pathsafe)
        raise click.ClickException(f"the search index cannot be opened: {exc}") from exc
    try:
        if update:
            refresh(index, v, bar, embed_seconds=embed_seconds)
        else:
            v.load(bar)
    except KeyboardInterrupt:
        _interrupted(index, "run the command again to resume")
    return v, index


def _interrupted(index, resume: str) -> NoReturn:
    """Ctrl-C during indexing: what is embedded stays (committed in batches); say how to go on."""
    counts = index.counts()
    index.close()
    click.echo(f"\ninterrupted: {counts['vectors']} chunk texts embedded, {counts['pending']} to go; {resume}", err=True)
    sys.exit(130)


def _note_or_fail(v, path: str) -> str:
    rel = path.replace("\\", "/").lstrip("./") if not Path(path).is_absolute() else None
    if rel is None:
        try:
            rel = Path(path).resolve().relative_to(v.root).as_posix()
        except ValueError:
            raise click.ClickException(f"{path} is outside the vault {v.root}") from None
    if rel not in v.state.notes:
        if rel + ".md" in v.state.notes:
            return rel + ".md"
        raise click.ClickException(f"no note at {rel} in {v.root} (give a vault-relative path such as people/alice.md)")
    return rel


@main.command("search")
@vault_option
@click.argument("query")
@_json_option
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 200))
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "keyword", "vector"]),
    default=None,
    help="Default: hybrid when an embedding model is available, else keyword.",
)
@click.option("--category", help="Only notes of this category (person, project, decision, ...).")
@click.option("--status", help="Only notes with this status.")
@click.option("--folder", help="Only notes under this vault folder.")
@click.option("--since", metavar="YYYY-MM-DD", help="Only notes dated on or after this day.")
@click.option("--until", metavar="YYYY-MM-DD", help="Only notes dated on or before this day.")
@click.option("--include-daily", is_flag=True, help="Rank daily logs as high as memories.")
@click.option("--include-archived", is_flag=True, help="Include notes whose status is archived.")
@click.option(
    "--embed-seconds",
    type=click.FloatRange(0),
    default=SEARCH_EMBED_SECONDS,
    show_default=True,
    help="Embed new text for at most this long before answering (the rest: reindex or the sidecar).",
)
@_no_update_option
@_model_option
def search_command(
    vault: Path,
    query: str,
    as_json: bool,
    limit: int,
    mode: str | None,
    category: str | None,
    status: str | None,
    folder: str | None,
    since: str | None,
    until: str | None,
    include_daily: bool,
    include_archived: bool,
    embed_seconds: float,
    no_update: bool,
    embedding_model: str | None,
) -> None:
    """Hybrid search: keywords (BM25) and meaning (vectors), blended as PROGRAM.md search.fusion says.

    Never waits for a whole vault to be embedded: keywords are brought up to date, new text is
    embedded for a few seconds at most, and the answer says how much of the vault has vectors."""
    from palinode_vault.index import search
    from palinode_vault.memory.weekly import access

    v, index = open_vault_index(
        vault, embedding_model, update=not no_update, quiet=as_json, embed_seconds=0 if mode == "keyword" else embed_seconds
    )
    with index:
        result = search(
            index,
            query,
            limit=limit,
            mode=mode,
            category=category,
            status=status,
            folder=folder,
            since=since,
            until=until,
            include_daily=include_daily,
            include_archived=include_archived,
        )
    # what sessions find, for the weekly core-drift check (memory/weekly/access.py)
    access.record(v.root, "search", access.cli_session(v.root), [r.get("path") for r in result["results"]])
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        return
    if result.get("note"):
        click.echo(f"note: {result['note']}", err=True)
        if result["vectors"]["with_vectors"] < result["vectors"]["notes"]:
            click.echo("note: palinode-vault reindex --keep embeds the rest (or keep the sidecar running)", err=True)
    for i, item in enumerate(result["results"], 1):
        click.echo(f"{i:>2}. {item['path']}  ({item['title']}, {item['score']:.4f})")
        if item["snippet"]:
            click.echo(f"    {item['snippet']}")
    if not result["results"]:
        click.echo("no results", err=True)


@main.command("dedup")
@vault_option
@click.option("--file", "file", type=click.Path(dir_okay=False, path_type=Path), help="A draft note file.")
@click.option("--text", help="A draft memory as text.")
@click.option("--category", help="Only compare with notes of this category.")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(1, 100))
@_json_option
@_no_update_option
@_model_option
def dedup_command(
    vault: Path,
    file: Path | None,
    text: str | None,
    category: str | None,
    limit: int,
    as_json: bool,
    no_update: bool,
    embedding_model: str | None,
) -> None:
    """Existing notes close in meaning to a draft, ranked; 'strong' at PROGRAM.md's
    update.strong_duplicate (usually an UPDATE, not an ADD)."""
    from palinode_vault.index import NoVectors, dedup

    if (file is None) == (text is None):
        raise click.UsageError("give exactly one of --file F or --text T")
    if file is not None:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise click.ClickException(f"cannot read {file}: {exc}") from exc
    v, index = open_vault_index(vault, embedding_model, update=not no_update, quiet=as_json)
    exclude = None
    if file is not None:
        try:
            exclude = file.resolve().relative_to(v.root).as_posix()
        except ValueError:
            exclude = None
    with index:
        try:
            found = dedup(index, text or "", category=category, limit=limit, exclude_path=exclude)
        except NoVectors as exc:
            raise click.ClickException(f"dedup needs an embedding model: {exc}") from exc
    if as_json:
        click.echo(json.dumps({"results": [s.to_json() for s in found]}, indent=2))
        return
    for s in found:
        click.echo(f"{s.similarity:.3f}  {s.path}{'  STRONG duplicate' if s.strong else ''}")


@main.command("repair")
@vault_option
@click.argument("link_text")
@click.option("--path", "source", help="The note that holds the broken link (for context and --apply).")
@click.option("--apply", "apply_to", metavar="TARGET", help="Rewrite the broken links to this note.")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(1, 50))
@_json_option
@_no_update_option
@_model_option
def repair_command(
    vault: Path,
    link_text: str,
    source: str | None,
    apply_to: str | None,
    limit: int,
    as_json: bool,
    no_update: bool,
    embedding_model: str | None,
) -> None:
    """Candidates for a broken link (name similarity blended with meaning); --apply rewrites it."""
    from palinode_vault.index import repair_candidates, text_reader

    v, index = open_vault_index(vault, embedding_model, update=not no_update, quiet=as_json)
    rel_source = _note_or_fail(v, source) if source else None
    if apply_to:
        index.close()
        result = apply_repair(v, link_text, _note_or_fail(v, apply_to), rel_source)
        if as_json:
            click.echo(json.dumps(result, indent=2))
        else:
            click.echo(result["diff"], nl=False)
            for path in result["written"]:
                click.echo(f"repaired {path}", err=True)
            if not result["written"]:
                click.echo(f"no broken link written as '{link_text}' found", err=True)
        return
    with index:
        found, note = repair_candidates(index, v.state, link_text, path=rel_source, read=text_reader(v), limit=limit)
    data = {"target": link_text, "candidates": [{"path": c.path, "score": c.score, "why": c.why} for c in found]}
    if note:
        data["note"] = note
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    if note:
        click.echo(f"note: {note}", err=True)
    for c in found:
        click.echo(f"{c.score:.3f}  {c.path}  ({c.why})")


def apply_repair(v, link_text: str, new_path: str, source: str | None) -> dict:
    """Rewrite the links written as `link_text` (in `source`, or every note with that broken
    link) to point at `new_path`; one journaled run that `undo` reverts."""
    from palinode_vault.maintenance import repair_links

    return repair_links(v, link_text, new_path, [source] if source else None)


@main.command("related")
@vault_option
@click.argument("note")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 100))
@_json_option
@_no_update_option
@_model_option
def related_command(vault: Path, note: str, limit: int, as_json: bool, no_update: bool, embedding_model: str | None) -> None:
    """Notes close in meaning to NOTE that are not linked with it either way (link proposals)."""
    from palinode_vault.index import NoVectors, related

    v, index = open_vault_index(vault, embedding_model, update=not no_update, quiet=as_json)
    rel = _note_or_fail(v, note)
    with index:
        try:
            found = related(index, v.state, rel, limit=limit)
        except NoVectors as exc:
            raise click.ClickException(f"related needs an embedding model: {exc}") from exc
    if as_json:
        click.echo(json.dumps({"results": [{"path": s.path, "similarity": s.similarity} for s in found]}, indent=2))
        return
    for s in found:
        click.echo(f"{s.similarity:.3f}  {s.path}")


@main.command("reindex")
@vault_option
@click.option("--keep", is_flag=True, help="Keep the index and only bring it up to date (resume).")
@_json_option
@_model_option
def reindex_command(vault: Path, keep: bool, as_json: bool, embedding_model: str | None) -> None:
    """Rebuild the search index from the files (vectors of unchanged text are kept unless the
    model changed). Ctrl-C stops it; running again resumes."""
    from palinode_vault.index import open_index, refresh
    from palinode_vault.index.worker import Pace
    from palinode_vault.settings import Settings
    from palinode_vault.vault import Vault

    root = resolve_vault(vault)
    v = Vault(Settings(vault=root, embedding_model=embedding_model))
    try:
        index = open_index(root, model_path=embedding_model)
    except OSError as exc:  # a symlinked index.db, refused (pathsafe)
        raise click.ClickException(f"the search index cannot be opened: {exc}") from exc
    # the person asked for this and waits for it: every core, unless other programs need one
    index.threads_now = Pace()
    bar = ProgressBar(sys.stderr.isatty())
    if not keep:
        index.forget_notes()  # vectors stay (by hash): unchanged text is not embedded again
    try:
        report = refresh(index, v, bar)
    except KeyboardInterrupt:
        _interrupted(index, "run palinode-vault reindex --keep to resume")
    data = {**report.to_json(), **index.describe()}
    index.close()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(
        f"indexed {report.indexed} notes ({data['chunks']} chunks), embedded {report.embedded} texts "
        f"in {report.seconds:.1f} s; mode {data['mode']}"
    )
    if data["reason"]:
        click.echo(f"keyword-only: {data['reason']}", err=True)
