"""Files palinode-vault leaves alone: Obsidian's "Excluded files" and the folders the person lists.

Three sources, all read from the vault on every load (so an edit applies without a restart):

- `.obsidian/app.json` `userIgnoreFilters`: Obsidian's own Settings → Files and links → Excluded
  files. Obsidian treats an entry written `/…/` as a regular expression searched in the path and
  any other entry as a path prefix (`templates/`, `Archive`); we do the same.
- `.palinode/ignore`: one vault-relative folder per line (`#` starts a comment); the plugin's
  "Folders palinode-vault ignores" setting writes it, and a person may edit it by hand.
- PROGRAM.md's settings block, `ignore_folders: [templates, attachments]` (the CLI's setting).

Everything read here is untrusted: sizes are capped, a bad regular expression or a bad file is
skipped (never an error that stops a scan), and folders are normalised to '/'-separated
vault-relative prefixes without `..`.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

IGNORE_FILE = Path(".palinode") / "ignore"
OBSIDIAN_APP = Path(".obsidian") / "app.json"
MAX_FILE_BYTES = 256 * 1024
MAX_ENTRIES = 1000
MAX_PATTERN = 500


@dataclass(frozen=True)
class Exclusions:
    """Which vault-relative paths to leave out of the walk, the index and the watcher."""

    prefixes: tuple[str, ...] = ()
    patterns: tuple[re.Pattern[str], ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.prefixes or self.patterns)

    def excludes(self, rel: str) -> bool:
        """Whether the '/'-separated vault-relative path `rel` is excluded."""
        return any(rel.startswith(p) for p in self.prefixes) or any(p.search(rel) for p in self.patterns)


def folder_prefix(raw: object) -> str | None:
    """A folder entry as the prefix it excludes (`templates` → `templates/`), or None if unsafe."""
    if not isinstance(raw, str):
        return None
    text = raw.strip().replace("\\", "/").strip("/")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts) or len(text) > MAX_PATTERN:
        return None
    return "/".join(parts) + "/"


def obsidian_filters(root: Path) -> tuple[list[str], list[re.Pattern[str]]]:
    """Prefixes and patterns from `.obsidian/app.json` `userIgnoreFilters` (empty when absent or bad)."""
    data = _read_json(root / OBSIDIAN_APP)
    filters = data.get("userIgnoreFilters") if isinstance(data, dict) else None
    if not isinstance(filters, list):
        return [], []
    prefixes: list[str] = []
    patterns: list[re.Pattern[str]] = []
    for item in filters[:MAX_ENTRIES]:
        if not isinstance(item, str) or not item.strip() or len(item) > MAX_PATTERN:
            continue
        if len(item) > 2 and item.startswith("/") and item.endswith("/"):
            try:
                patterns.append(re.compile(item[1:-1]))
            except re.error as exc:
                log.warning("%s: skipping the excluded-files pattern %r (%s)", OBSIDIAN_APP, item, exc)
        else:
            # Obsidian matches a plain filter as a prefix of the path, folder or not.
            prefix = item.strip().replace("\\", "/").lstrip("/")
            if ".." not in prefix.split("/"):
                prefixes.append(prefix)
    return prefixes, patterns


def ignore_file_folders(root: Path) -> list[str]:
    """Folders listed in `.palinode/ignore`."""
    text = _read_text(root / IGNORE_FILE)
    out = []
    for line in text.splitlines()[:MAX_ENTRIES]:
        entry = line.split("#", 1)[0]
        prefix = folder_prefix(entry)
        if prefix:
            out.append(prefix)
    return out


def program_folders(root: Path) -> list[str]:
    """`ignore_folders` from the vault's PROGRAM.md settings block (none when absent or invalid)."""
    try:
        from palinode_vault.program import load_program

        value = getattr(load_program(root).settings, "ignore_folders", None)
    except Exception:  # noqa: BLE001 - a broken PROGRAM.md is reported by lint, not here
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [p for p in (folder_prefix(v) for v in value[:MAX_ENTRIES]) if p]


def load_exclusions(root: Path) -> Exclusions:
    """The vault's exclusions from all three sources."""
    root = Path(root)
    prefixes, patterns = obsidian_filters(root)
    prefixes += ignore_file_folders(root) + program_folders(root)
    return Exclusions(tuple(dict.fromkeys(prefixes)), tuple(patterns))


def source_texts(root: Path) -> tuple[str, str]:
    """The text of `.obsidian/app.json` and `.palinode/ignore` as read (for fingerprints: the
    exclusions are a function of these and of PROGRAM.md)."""
    root = Path(root)
    return _read_text(root / OBSIDIAN_APP), _read_text(root / IGNORE_FILE)


def write_ignore_file(root: Path, folders: list[str]) -> list[str]:
    """Writes `.palinode/ignore` atomically (the CLI and tests; the plugin writes it the same way)."""
    import os
    import tempfile

    clean = [p.rstrip("/") for p in (folder_prefix(f) for f in folders) if p]
    path = Path(root) / IGNORE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".ignore.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("".join(f"{c}\n" for c in clean))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return clean


def _read_text(path: Path) -> str:
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return ""
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _read_json(path: Path) -> object:
    text = _read_text(path)
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        log.warning("%s is not valid JSON; its excluded files are not applied", path)
        return None
