"""Lint, fix, scan and undo over a loaded Vault: what the CLI commands and the sidecar call."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from palinode_vault.core.findings import Finding
from palinode_vault.core.fix import fixable, plan_fix
from palinode_vault.core.lint import Analysis, LintContext, analysis_for, counts, lint_vault
from palinode_vault.core.note import Note
from palinode_vault.core.text import apply_spans
from palinode_vault.core.vault_state import Unreadable
from palinode_vault.kinds import is_memory_path
from palinode_vault.program import load_program
from palinode_vault.vault import NoteText, Vault, fork_context, gc_paused, is_note
from palinode_vault.writer import Edit, Run, UndoResult, clean_temp_files, sha256_bytes, undo_last, undo_run


def lint_context(vault: Vault) -> LintContext:
    return LintContext(vault.settings.today(), load_program(vault.root).settings)


@dataclass
class LintReport:
    total_files: int
    findings: list[Finding]

    def to_json(self) -> dict[str, Any]:
        return {
            "total_files": self.total_files,
            "findings": [f.to_json() for f in self.findings],
            "counts": counts(self.findings),
        }


# Below this many memory notes, forking costs more than it saves: their checks (cross_refs
# mentions, lifecycle, schema) are most of lint, about 0.2 ms a note against 0.03 ms for
# any other note (docs/BENCHMARKS.md, session 26).
PARALLEL_LINT_MIN = 2000
_FORKED_LINT: tuple | None = None  # what a forked lint process inherits: (state, ctx, analysis)


def lint(
    vault: Vault,
    paths: Iterable[str] | None = None,
    checks: Iterable[str] | None = None,
    analysis: Analysis | None = None,
    workers: int = 1,
) -> LintReport:
    """Findings for the vault (or some notes), optionally only some checks.

    `total_files` counts memory-tier files, the set the frontmatter contract covers. With
    `workers` > 1 (one-shot commands only: it forks), a vault with many memory notes is linted on
    two processes.
    """
    ctx = lint_context(vault)
    memory_files = memory_file_count(vault.state)
    if paths is None and workers > 1 and memory_files >= PARALLEL_LINT_MIN and fork_context():
        findings = _lint_on_two_processes(vault.state, ctx, analysis_for(vault.state, analysis))
    else:
        findings = lint_vault(vault.state, ctx, analysis, paths)
    if checks:
        wanted = set(checks)
        findings = [f for f in findings if f.check in wanted]
    return LintReport(memory_files, findings)


def _lint_forked(paths: list[str]) -> list[Finding]:
    assert _FORKED_LINT is not None, "set by the parent before it forks"
    state, ctx, analysis = _FORKED_LINT
    return lint_vault(state, ctx, analysis, paths)


def _lint_on_two_processes(state, ctx: LintContext, analysis: Analysis) -> list[Finding]:
    """Lint half the notes in a forked process (which shares the loaded state) and half here."""
    global _FORKED_LINT
    paths = sorted(set(state.notes) | set(state.unreadable))
    # Interleave, so each half gets a fair share of the large notes.
    theirs, ours = paths[0::2], paths[1::2]
    _FORKED_LINT = (state, ctx, analysis)
    try:
        with ProcessPoolExecutor(1, mp_context=fork_context()) as pool:
            future = pool.submit(_lint_forked, theirs)
            findings = lint_vault(state, ctx, analysis, ours)
            findings += future.result()
    finally:
        _FORKED_LINT = None
    findings.sort(key=lambda f: (f.path, f.line, f.check))
    return findings


def memory_file_count(state) -> int:
    """Memory-tier files, readable or not: the set the frontmatter contract covers."""
    return sum(1 for p in list(state.notes) + list(state.unreadable) if is_memory_path(p))


@dataclass
class FixResult:
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    run: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"written": self.written, "unchanged": self.unchanged, "skipped": self.skipped}

    @property
    def diff(self) -> str:
        return "".join(self.diffs[p] for p in sorted(self.diffs))


def note_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def odd_entities(note: Note) -> str | None:
    """Why `entities:` is left alone: a value that is not a ref or a list of refs (`{a: 1}`,
    `[1, null, true]`) was written by a person for a reason we cannot see; it is reported, and
    the note is not rewritten (None when the value is a plain ref list)."""
    from palinode_vault.core.entities import odd_entities_value

    why = odd_entities_value(note.frontmatter)
    return (
        None
        if why is None
        else f"{why.replace('left as written (fix it by hand)', 'fix it by hand first')} (line {note.key_line('entities')})"
    )


def plan_edits(
    vault: Vault, paths: Iterable[str] | None = None, result: FixResult | None = None, allow: set[str] | None = None
) -> tuple[list[Edit], FixResult]:
    """Compute the fixes for memory-tier notes (all, or `paths`) without writing anything.

    `allow` limits which kinds of fix are planned (core.fix: ENTITIES, CROSS_REFS, LABELS,
    FOOTER; the sidecar's automatic mode allows only MACHINE_OWNED).
    """
    result = result or FixResult()
    state = vault.state
    candidates = sorted(set(paths) if paths is not None else set(state.notes) | set(state.unreadable))
    # Make sure every note we are about to fix matches the disk.
    reread: dict[str, NoteText] = {}
    stale = set()
    for path in candidates:
        if not is_memory_path(path) or path not in state.notes:
            continue
        fresh = vault.read(path)
        if isinstance(fresh, NoteText):
            reread[path] = fresh
            if fresh.text_hash != state.notes[path].text_hash:
                stale.add(path)
    if stale:
        vault.refresh(stale)
    analysis = analysis_for(state)
    edits: list[Edit] = []
    for path in candidates:
        if path in state.unreadable and is_memory_path(path):
            result.skipped.append({"path": path, "reason": state.unreadable[path].message})
            continue
        note = state.notes.get(path)
        if note is None or not is_note(path):
            continue
        if (vault.root / path).is_symlink():
            # Replacing it would turn the link into a copy; the note it points to is fixed instead.
            if is_memory_path(path):
                result.skipped.append({"path": path, "reason": "a symlink; fix the note it points to"})
            continue
        why_not = fixable(note) or odd_entities(note)
        if why_not is not None:
            if is_memory_path(path):
                result.skipped.append({"path": path, "reason": why_not})
            else:
                result.unchanged += 1
            continue
        read: NoteText | Unreadable | None = reread.get(path)
        if read is None or isinstance(read, Unreadable) or read.text_hash != note.text_hash:
            read = vault.read(path)
            if isinstance(read, Unreadable) or read.text_hash != note.text_hash:
                result.skipped.append({"path": path, "reason": "changed while being fixed; run again"})
                continue
        plan = plan_fix(state, note, read.text, analysis)
        spans = plan.spans
        if allow is not None:
            spans = plan.only(allow)
        if not spans:
            result.unchanged += 1
            continue
        new_raw = apply_spans(read.raw, read.shape, spans)
        if new_raw == read.raw:
            result.unchanged += 1
            continue
        edits.append(Edit(path, sha256_bytes(read.raw_bytes), new_raw.encode("utf-8"), "; ".join(plan.reasons)))
        result.diffs[path] = note_diff(path, read.raw, new_raw)
        result.reasons[path] = plan.reasons
    return edits, result


def fix(
    vault: Vault, paths: Iterable[str] | None = None, dry_run: bool = False, label: str = "fix", allow: set[str] | None = None
) -> FixResult:
    """Apply the safe fixes (or, with dry_run, only compute their diffs). One journaled run."""
    if not dry_run:
        clean_temp_files(vault.root)  # left by a writer that was killed; live writers' are kept
    edits, result = plan_edits(vault, paths, allow=allow)
    if dry_run or not edits:
        return result
    with Run(vault.root, label) as run:
        for edit in edits:
            if not run.write(edit):
                reason = run.failed.get(edit.path) or "changed on disk while being fixed; run again"
                result.skipped.append({"path": edit.path, "reason": reason})
                result.diffs.pop(edit.path, None)
    result.written = sorted(run.written)
    result.run = run.id if run.written else None
    vault.refresh(set(run.written))
    return result


def repair_links(
    vault: Vault, link_text: str, new_path: str, sources: list[str] | None = None, dry_run: bool = False
) -> dict[str, Any]:
    """Point the links written as `link_text` at `new_path`, in `sources` or in every note where
    that link is broken; one journaled run that `undo` reverts (nothing written with dry_run).

    Returns `{"written", "unchanged", "skipped", "diff", "run"}`.
    """
    from palinode_vault.core.fix import plan_link_repair

    state = vault.state
    if sources is None:
        sources = sorted(
            p
            for p, note in state.notes.items()
            if any(
                t is None and link_text in (link.target, link.target + (f"#{link.subpath}" if link.subpath else ""))
                for link, t in zip(note.links, state.resolved.get(p) or [])
            )
        )
    run = Run(vault.root, "repair")
    written: list[str] = []
    skipped: list[dict[str, str]] = []
    diffs: list[str] = []
    unchanged = 0
    for rel in sources:
        read = vault.read(rel)
        note = state.notes.get(rel)
        if isinstance(read, NoteText) and note is not None and note.text_hash != read.text_hash:
            vault.refresh({rel})
            note = state.notes.get(rel)
        if not isinstance(read, NoteText) or note is None or note.text_hash != read.text_hash:
            skipped.append({"path": rel, "reason": "changed while being read; run again"})
            continue
        if note.fm_error is not None:
            skipped.append({"path": rel, "reason": f"frontmatter does not parse (line {note.fm_error.line})"})
            continue
        plan = plan_link_repair(state, note, read.text, link_text, new_path)
        if not plan.spans:
            unchanged += 1
            continue
        new_raw = apply_spans(read.raw, read.shape, plan.spans)
        diffs.append(note_diff(rel, read.raw, new_raw))
        if dry_run:
            continue
        if run.write(Edit(rel, sha256_bytes(read.raw_bytes), new_raw.encode("utf-8"), "; ".join(plan.reasons))):
            written.append(rel)
        else:
            skipped.append({"path": rel, "reason": run.failed.get(rel) or "changed on disk while being repaired; run again"})
    run.close()
    if written:
        vault.refresh(set(written))
    return {
        "written": written,
        "unchanged": unchanged,
        "skipped": skipped,
        "diff": "".join(diffs),
        "run": run.id if written else None,
    }


def undo(vault: Vault, run: str | None = None) -> UndoResult:
    """Revert the run `run` (the sidecar's later upkeep of its files with it), or without it the
    last journaled run; then bring the state up to date."""
    result = undo_run(vault.root, run) if run else undo_last(vault.root)
    if result.restored:
        vault.refresh(set(result.restored))
    return result


def vault_report(vault: Vault, progress=None) -> tuple[LintReport, dict[str, Any]]:
    """The whole vault's lint report and scan summary, reused when nothing changed.

    The results are stored with a fingerprint of every file's stat, PROGRAM.md and today's
    date; a run over an unchanged vault reads them back without loading a single note.
    """
    from palinode_vault.cache import ParseCache, Undecodable, decode_report, encode_report
    from palinode_vault.core.text import sha256_text

    program = load_program(vault.root)
    fingerprint = vault.fingerprint(sha256_text(program.text), vault.settings.today().isoformat())
    cache = ParseCache(vault.root)
    try:
        blob = cache.result("report", fingerprint)
        if blob is not None:
            try:
                total, findings, summary = decode_report(blob)
                return LintReport(total, findings), {**summary, "parsed": 0}
            except Undecodable:
                pass  # crafted, foreign or corrupt: computed again below
        with gc_paused():
            if not vault.loaded:
                vault.load(progress)
            report = lint(vault, workers=min(vault.settings.workers, os.cpu_count() or 1))
            summary = scan_summary(vault, report)
        cache.store_result("report", fingerprint, encode_report(report.total_files, report.findings, summary))
        return report, summary
    finally:
        cache.close()


def scan_summary(vault: Vault, report: LintReport | None = None) -> dict[str, Any]:
    """Counts for `scan --json` and the sidecar's status."""
    state = vault.state
    report = report or lint(vault)
    links = sum(len(n.links) for n in state.notes.values())
    unresolved = sum(1 for targets in state.resolved.values() for t in targets if t is None)
    return {
        "markdown_files": len(state.notes) + len(state.unreadable),
        "memory_files": report.total_files,
        "attachments": sum(1 for p in state.files() if not is_note(p)),
        "links": links,
        "unresolved": unresolved,
        "orphans": sum(1 for f in report.findings if f.check == "orphan"),
        "findings": counts(report.findings),
        "parsed": vault.parsed_last_load,
    }
