"""The search index: `VAULT/.palinode/index.db` (SQLite, FTS5 for keywords, sqlite-vec for vectors).

Derived from the files and rebuilt from them at any time. Tables:

- `notes`: one row per indexed note (its text hash, title, category, status, date, daily flag);
  `notes_fts` holds its keyword text under the same rowid: one FTS5 row per whole note (title
  and aliases, the headings of its chunks, the keyword text of its chunks), so BM25 ranks notes
  and counts document frequency in notes;
- `chunks`: the note's pieces (heading, keyword text for snippets, embedding text, content hash);
- `vectors`: one row per distinct chunk hash, and `vec_chunks` (vec0) its vector under the same
  rowid. A chunk whose text was embedded before (same hash) is never embedded again.
- `meta`: schema and chunker versions (an older schema is migrated in place by the numbered
  functions in `MIGRATIONS`, vectors kept), and the model the vectors came from (file name, SHA-256,
  dimensions). A different model drops every vector and embeds again: vectors of two models are
  never mixed.

Work is committed in batches: an interrupted cold index or re-embedding resumes where it stopped.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palinode_vault.core.note import Note, parse_note
from palinode_vault.index.chunks import CHUNKER_VERSION, chunk_note
from palinode_vault.index.model import ModelSlot, TextEmbedder
from palinode_vault.kinds import kind_of_path, top_folder
from palinode_vault.models.errors import ModelUnavailable
from palinode_vault.pathsafe import private_database
from palinode_vault.store import Connection, connect, serialize_vector

SCHEMA_VERSION = 2
INDEX_NAME = "index.db"
NOTE_BATCH = 200  # notes chunked per transaction
EMBED_BATCH = 48  # texts per embedder call and transaction (the embedder packs them; a commit every few seconds)

Progress = Callable[[str, int, int], None]  # (phase, done, total)
ReadText = Callable[[str], "str | None"]  # vault-relative path -> normalised text, or None

_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")
_DATE_KEYS = ("date", "last_updated", "decided", "created", "last_contact")

_NOTES = """create table if not exists notes(
    id integer primary key, path text not null unique, text_hash text not null,
    title text not null, category text, status text, folder text not null, date text,
    daily integer not null default 0, aliases text not null default '')"""
_SCHEMA = f"""
create table if not exists meta(key text primary key, value text);
{_NOTES};
create table if not exists chunks(
    id integer primary key, path text not null, ord integer not null, heading text not null,
    hash text not null, embed text not null, text text not null default '');
create index if not exists chunks_path on chunks(path);
create index if not exists chunks_hash on chunks(hash);
create table if not exists vectors(id integer primary key, hash text not null unique);
"""
_NOTES_FTS = """create virtual table if not exists notes_fts using fts5(
    title, heading, body, tokenize = 'porter unicode61 remove_diacritics 2')"""


def _migrate_1(conn: Connection) -> None:
    """Schema 1 -> 2: keyword rows per note instead of per chunk (`chunks_fts` -> `notes_fts`).

    Per-chunk BM25 let a short chunk that repeats a common word ("note", "file") outrank the
    note a query is about, and counted document frequency in chunks; one row per note fixes
    both. The chunk keyword text moves to `chunks.text` (snippets of vector hits), and `notes`
    gets an integer primary key for `notes_fts` to share (an implicit rowid may change on
    VACUUM). Nothing is re-chunked or re-embedded.
    """
    columns = "path, text_hash, title, category, status, folder, date, daily, aliases"
    conn.execute("alter table notes rename to notes_1")
    conn.execute(_NOTES)
    conn.execute(f"insert into notes({columns}) select {columns} from notes_1 order by path")
    conn.execute("drop table notes_1")
    conn.execute("alter table chunks add column text text not null default ''")
    conn.execute("update chunks set text = coalesce((select body from chunks_fts f where f.rowid = chunks.id), '')")
    conn.execute("drop table chunks_fts")
    conn.execute(_NOTES_FTS)
    for (path,) in conn.fetchall("select path from notes"):
        _write_keywords(conn, path)


#: Numbered migrations: MIGRATIONS[v] brings schema v to v + 1, in place.
MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _migrate_1}


def _write_keywords(conn: Connection, path: str) -> None:
    """The note's `notes_fts` row, from its `notes` row and its chunks (replacing any old one)."""
    row = conn.fetchone("select id, title, aliases from notes where path = ?", (path,))
    if row is None:
        return
    rowid, title, aliases = row
    chunks = conn.fetchall("select heading, text from chunks where path = ? order by ord", (path,))
    conn.execute("delete from notes_fts where rowid = ?", (rowid,))
    conn.execute(
        "insert into notes_fts(rowid, title, heading, body) values (?, ?, ?, ?)",
        (
            rowid,
            f"{title} {aliases.replace(chr(10), ' ')}".strip(),
            "\n".join(h for h, _ in chunks if h),
            "\n\n".join(t for _, t in chunks),
        ),
    )


def index_path(root: Path) -> Path:
    """Where a vault's index lives."""
    return Path(root) / ".palinode" / INDEX_NAME


@dataclass
class UpdateReport:
    """What one update did."""

    indexed: int = 0  # notes (re)chunked
    removed: int = 0  # notes dropped from the index
    unchanged: int = 0
    embedded: int = 0  # texts sent to the model
    pending: int = 0  # chunks still without a vector (interrupted, or no model)
    reset_vectors: bool = False  # the model changed: every vector was dropped
    seconds: float = 0.0
    mode: str = "keyword"
    reason: str | None = None
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in (
                "indexed",
                "removed",
                "unchanged",
                "embedded",
                "pending",
                "reset_vectors",
                "seconds",
                "mode",
                "reason",
                "errors",
            )
        }


def note_meta(note: Note) -> dict[str, Any]:
    """The filterable facts of a note: category, status, folder, date, daily."""
    data = note.frontmatter or {}
    category = data.get("category") if isinstance(data.get("category"), str) else None
    if category is None:
        kind = kind_of_path(note.path)
        category = kind.name if kind else None
    status = data.get("status")
    status = str(status).strip().lower() if isinstance(status, (str, int)) and str(status).strip() else None
    date = None
    for key in _DATE_KEYS:
        value = data.get(key)
        if isinstance(value, (dt.date, dt.datetime)):
            date = value.isoformat()[:10]
            break
        if isinstance(value, str) and (found := _DATE.search(value)):
            date = found.group(1)
            break
    if date is None:
        m = _DATE.search(note.path.rsplit("/", 1)[-1])
        date = m.group(1) if m else None
    aliases = data.get("aliases") or []
    if isinstance(aliases, str):
        aliases = [aliases]
    return {
        "category": category.lower() if category else None,
        "status": status,
        "folder": top_folder(note.path),
        "date": date,
        "daily": int(is_daily(note.path)),
        "aliases": "\n".join(str(a).strip() for a in aliases if a is not None and str(a).strip()),
    }


def is_daily(path: str) -> bool:
    """Daily logs: `daily/` and `archive/daily/` (PROGRAM.md's daily_penalty applies to both)."""
    low = path.lower()
    return low.startswith("daily/") or low.startswith("archive/daily/")


class Index:
    """One vault's search index. Thread-safe: calls are serialised on one connection.

    `model` is the embedding model (default: MiniLM, loaded when first needed); without one
    (no llama.cpp, no file, no sqlite-vec) the index is keyword-only and `reason` says why.
    """

    def __init__(
        self,
        root: str | Path,
        *,
        model: ModelSlot | None = None,
        model_path: str | Path | None = None,
        embedder: TextEmbedder | None = None,
        db_path: str | Path | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        # the vault's own index.db: SQLite would follow a planted symlink out of the vault
        self.path = Path(db_path) if db_path else private_database(self.root, INDEX_NAME)
        self.model = model or ModelSlot(model_path, embedder)
        self.lock = threading.RLock()
        self.conn: Connection = connect(self.path, driver=_driver())
        self.embed_calls = 0  # texts embedded through this object (tests count them)
        self.stop = threading.Event()  # set to interrupt long work between batches
        #: asked before each embedding batch: how many threads the model may use now (None: as loaded)
        self.threads_now: Callable[[], int | None] | None = None
        self._pending: tuple[Any, int] | None = None  # (data_version, count); None after own writes
        self._matrix: tuple[Any, Any, Any] | None = None  # (data_version, ids, vectors); ditto
        self._coverage: tuple[Any, dict] | None = None  # (data_version, coverage()); ditto
        with self.lock:
            self._ensure_schema()

    # -- schema and model ---------------------------------------------------------------

    def _ensure_schema(self) -> None:
        conn = self.conn
        version = None
        if conn.fetchone("select 1 from sqlite_master where name = 'meta'"):
            version = conn.fetchvalue("select value from meta where key = 'schema'")
        if version is not None and int(version) != SCHEMA_VERSION:
            with conn.transaction():
                # write first, then read again: another process (the sidecar and a CLI command
                # started together) may have migrated while this one waited for the lock
                conn.execute("update meta set value = value where key = 'schema'")
                version = int(conn.fetchvalue("select value from meta where key = 'schema'"))
                if version < SCHEMA_VERSION and all(v in MIGRATIONS for v in range(version, SCHEMA_VERSION)):
                    for v in range(version, SCHEMA_VERSION):
                        MIGRATIONS[v](conn)
                        self._set_meta("schema", str(v + 1))
                elif version != SCHEMA_VERSION:  # unknown (newer or too old): rebuild from the files
                    self._drop_all()
        conn.executescript(_SCHEMA)
        conn.execute(_NOTES_FTS)
        self._set_meta("schema", str(SCHEMA_VERSION))
        if self.meta("chunker") != str(CHUNKER_VERSION):
            # every note is chunked again; vectors of unchanged chunk texts are reused by hash
            conn.execute("update notes set text_hash = ''")
            self._set_meta("chunker", str(CHUNKER_VERSION))

    def _drop_all(self) -> None:
        for name in ("vec_chunks", "chunks_fts", "notes_fts", "vectors", "chunks", "notes", "meta"):
            self.conn.execute(f"drop table if exists {name}")

    def meta(self, key: str) -> str | None:
        return self.conn.fetchvalue("select value from meta where key = ?", (key,))

    def _set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.conn.execute("delete from meta where key = ?", (key,))
        else:
            self.conn.execute(
                "insert into meta(key, value) values (?, ?) on conflict(key) do update set value = excluded.value", (key, value)
            )

    def _has_vec_table(self) -> bool:
        return self.conn.fetchone("select 1 from sqlite_master where name = 'vec_chunks'") is not None

    @property
    def vectors_usable(self) -> bool:
        """True when stored vectors exist for the model in use, so vector search can run."""
        identity = self.model.identity() if self.conn.vec_available else None
        return (
            identity is not None
            and self._has_vec_table()
            and self.meta("model") == identity[0]
            and self.meta("dimensions") == str(identity[1])
        )

    @property
    def reason(self) -> str | None:
        """Why search is keyword-only (with the fix), or None when vectors work."""
        if not self.conn.vec_available:
            return self.conn.vec_error
        if self.model.identity() is None:
            return self.model.reason
        if not self.vectors_usable:
            return "the index has no vectors for this model yet (palinode-vault reindex, or wait for the sidecar)"
        return None

    def _check_model(self) -> bool:
        """Make the vector table match the model in use; True when the vectors were reset."""
        identity = self.model.identity() if self.conn.vec_available else None
        if identity is None:
            return False
        model_id, dims = identity
        if self.meta("model") == model_id and self.meta("dimensions") == str(dims) and self._has_vec_table():
            return False
        had = self.meta("model") is not None
        with self.conn.transaction():
            self.conn.execute("drop table if exists vec_chunks")
            self.conn.execute("delete from vectors")
            self.conn.execute(f"create virtual table vec_chunks using vec0(embedding float[{int(dims)}] distance_metric=cosine)")
            self._set_meta("model", model_id)
            self._set_meta("dimensions", str(dims))
        return had

    # -- updating -----------------------------------------------------------------------

    def stored_hashes(self) -> dict[str, str]:
        """path -> text hash of every indexed note."""
        return dict(self.conn.fetchall("select path, text_hash from notes"))

    def sync(
        self,
        notes: Mapping[str, Note],
        read: ReadText,
        progress: Progress | None = None,
        embed: bool = True,
        deadline: float | None = None,
    ) -> UpdateReport:
        """Bring the index in line with `notes` (the whole vault): add, re-chunk, remove, embed.

        `read(path)` gives a note's normalised text. Unchanged notes cost one dict lookup.
        """
        with self.lock:
            stored = self.stored_hashes()
            changes: dict[str, Note | None] = {p: None for p in stored if p not in notes}
            for path, note in notes.items():
                if stored.get(path) != note.text_hash:
                    changes[path] = note
            report = self.update(changes, read, progress, embed=embed, deadline=deadline)
            report.unchanged = len(notes) - report.indexed
            return report

    def update(
        self,
        changes: Mapping[str, Note | None],
        read: ReadText,
        progress: Progress | None = None,
        embed: bool = True,
        deadline: float | None = None,
    ) -> UpdateReport:
        """Index the given notes (None: remove), then embed what has no vector yet."""
        started = time.monotonic()
        report = UpdateReport()
        self._pending = self._matrix = self._coverage = None
        with self.lock:
            report.reset_vectors = self._check_model()
            items = sorted(changes.items())
            total = len(items)
            for start in range(0, total, NOTE_BATCH):
                if self.stop.is_set():
                    break
                with self.conn.transaction():
                    for path, note in items[start : start + NOTE_BATCH]:
                        if note is None:
                            report.removed += self._remove(path)
                            continue
                        text = read(path)
                        if text is None:
                            report.removed += self._remove(path)
                            continue
                        if not note.text_hash or note.text_hash != _hash(text):
                            note = parse_note(path, text, _hash(text))
                        self._store_note(note, text)
                        report.indexed += 1
                if progress:
                    progress("index", min(start + NOTE_BATCH, total), total)
            if report.removed or report.indexed:
                self._collect_garbage()
            if embed:
                report.embedded = self.embed_missing(progress, deadline)
            self._pending = self._matrix = self._coverage = None
            report.pending = self.pending()
            report.mode = "hybrid" if self.vectors_usable else "keyword"
            report.reason = self.reason
        report.seconds = round(time.monotonic() - started, 3)
        return report

    def _remove(self, path: str) -> int:
        self.conn.execute("delete from notes_fts where rowid in (select id from notes where path = ?)", (path,))
        self.conn.execute("delete from chunks where path = ?", (path,))
        return self.conn.execute("delete from notes where path = ?", (path,))

    def forget_notes(self) -> None:
        """Drop every note, chunk and keyword row but keep the vectors (a full reindex then
        embeds nothing that was embedded before)."""
        with self.lock, self.conn.transaction():
            for table in ("notes_fts", "chunks", "notes"):
                self.conn.execute(f"delete from {table}")
            self._pending = self._coverage = None

    def _store_note(self, note: Note, text: str) -> None:
        self._remove(note.path)
        meta = note_meta(note)
        self.conn.execute(
            "insert into notes(path, text_hash, title, category, status, folder, date, daily, aliases) "
            "values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                note.path,
                note.text_hash,
                note.title,
                meta["category"],
                meta["status"],
                meta["folder"],
                meta["date"],
                meta["daily"],
                meta["aliases"],
            ),
        )
        for chunk in chunk_note(note, text):
            self.conn.execute(
                "insert into chunks(path, ord, heading, hash, embed, text) values (?, ?, ?, ?, ?, ?)",
                (note.path, chunk.ord, chunk.heading, chunk.hash, chunk.embed, chunk.text),
            )
        _write_keywords(self.conn, note.path)

    def _collect_garbage(self) -> None:
        """Drop vectors no chunk uses any more."""
        with self.conn.transaction():
            if self._has_vec_table():
                self.conn.execute(
                    "delete from vec_chunks where rowid in (select id from vectors where hash not in (select hash from chunks))"
                )
            self.conn.execute("delete from vectors where hash not in (select hash from chunks)")

    def pending(self) -> int:
        """Chunk texts that have no vector yet (recounted only after a commit, by any connection)."""
        stamp = self.conn.fetchvalue("pragma data_version")  # changes when another connection commits
        if self._pending is None or self._pending[0] != stamp:
            count = int(
                self.conn.fetchvalue(
                    "select count(distinct hash) from chunks where hash != '' and hash not in (select hash from vectors)",
                    default=0,
                )
            )
            self._pending = (stamp, count)
        return self._pending[1]

    def coverage(self) -> dict[str, Any]:
        """How much of the vault vector search sees: `{"notes", "with_vectors", "fraction"}`.

        A note counts when every chunk of it that is embedded at all has its vector (recounted
        only after a commit, by any connection)."""
        stamp = self.conn.fetchvalue("pragma data_version")
        if self._coverage is None or self._coverage[0] != stamp:
            notes = int(self.conn.fetchvalue("select count(*) from notes", default=0))
            # the per-note count costs ~0.1-0.2 s on 30,000 chunks: only while vectors are missing
            waiting = (
                0
                if self.pending() == 0
                else int(
                    self.conn.fetchvalue(
                        "select count(distinct path) from chunks where hash != '' and hash not in (select hash from vectors)",
                        default=0,
                    )
                )
            )
            done = notes - waiting if self.vectors_usable else 0
            self._coverage = (stamp, {"notes": notes, "with_vectors": done, "fraction": round(done / notes, 4) if notes else 1.0})
        return dict(self._coverage[1])

    def vector_matrix(self) -> tuple[Any, Any]:
        """(ids, unit vectors as a float32 matrix) of every stored vector, kept in memory and
        reloaded only after a commit (0.2 s for 30,000 vectors)."""
        import numpy as np

        with self.lock:
            stamp = self.conn.fetchvalue("pragma data_version")
            if self._matrix is None or self._matrix[0] != stamp:
                rows = self.conn.fetchall("select rowid, embedding from vec_chunks")
                dims = int(self.meta("dimensions") or 0)
                ids = np.fromiter((r for r, _ in rows), dtype=np.int64, count=len(rows))
                matrix = np.frombuffer(b"".join(b for _, b in rows), dtype=np.float32).reshape(len(rows), dims)
                self._matrix = (stamp, ids, matrix)
            return self._matrix[1], self._matrix[2]

    def embed_missing(self, progress: Progress | None = None, deadline: float | None = None) -> int:
        """Embed every chunk text without a vector, committing in batches. Returns texts embedded.

        Does nothing (keyword-only) when no model or no sqlite-vec is available. With
        `deadline` (a `time.monotonic()` value) it stops after the batch that passes it; the
        rest waits for the next call (search answers with the vectors there are).
        """
        with self.lock:
            if not self.conn.vec_available or self.model.identity() is None:
                return 0
            self._check_model()
            todo = self.conn.fetchall(
                "select hash, min(embed) from chunks where hash != '' and hash not in (select hash from vectors) "
                "group by hash order by min(id)"
            )
            if not todo:
                return 0
            try:
                embedder = self.model.get()
            except ModelUnavailable:
                return 0
            if self._check_model():  # loading revealed a different identity than the header
                return self.embed_missing(progress, deadline)
            done = 0
            total = len(todo)
            if progress:
                progress("embed", 0, total)
            for start in range(0, total, EMBED_BATCH):
                if self.stop.is_set() or (deadline is not None and time.monotonic() >= deadline):
                    break
                batch = todo[start : start + EMBED_BATCH]
                threads = self.threads_now() if self.threads_now is not None else None
                if threads and hasattr(embedder, "set_threads"):
                    embedder.set_threads(threads)
                vectors = embedder.embed_many([text for _, text in batch])
                self.embed_calls += len(batch)
                with self.conn.transaction():
                    for (digest, _), vector in zip(batch, vectors):
                        self.conn.execute("insert or ignore into vectors(hash) values (?)", (digest,))
                        rowid = self.conn.fetchvalue("select id from vectors where hash = ?", (digest,))
                        self.conn.execute("delete from vec_chunks where rowid = ?", (rowid,))
                        self.conn.execute(
                            "insert into vec_chunks(rowid, embedding) values (?, ?)", (rowid, serialize_vector(vector))
                        )
                done += len(batch)
                self._pending = self._matrix = self._coverage = None
                if progress:
                    progress("embed", done, total)
            return done

    def reset(self) -> None:
        """Forget everything (reindex from the files); the model's vectors go too."""
        with self.lock:
            self._drop_all()
            self._ensure_schema()
            self._pending = self._matrix = self._coverage = None

    # -- reading ------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        c = self.conn
        vectors = int(c.fetchvalue("select count(*) from vectors", default=0))
        return {
            "notes": int(c.fetchvalue("select count(*) from notes", default=0)),
            "chunks": int(c.fetchvalue("select count(*) from chunks", default=0)),
            "vectors": vectors,
            "pending": self.pending(),
        }

    def describe(self) -> dict[str, Any]:
        """For `status`: {"mode", "driver", "model", "reason", counts...}."""
        with self.lock:
            usable = self.vectors_usable
            identity = self.model.identity() if self.conn.vec_available else None
            return {
                "mode": "hybrid" if usable else "keyword",
                "driver": self.conn.driver_name,
                "model": identity[0] if identity else None,
                "dimensions": identity[1] if identity else None,
                "reason": self.reason,
                "path": str(self.path),
                **self.counts(),
                "coverage": self.coverage(),
            }

    def note_rows(self, paths: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Metadata of some indexed notes, by path."""
        paths = list(dict.fromkeys(paths))
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(paths), 500):
            part = paths[start : start + 500]
            marks = ",".join("?" * len(part))
            for row in self.conn.fetchdicts(f"select * from notes where path in ({marks})", part):
                out[row["path"]] = row
        return out

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_DRIVER: list[str | None] = []


def _driver() -> str | None:
    """The SQLite driver that loads sqlite-vec, probed once in memory.

    Probing on the index file itself would open it with two SQLite libraries in one process
    (the stdlib's and apsw's); closing the stdlib probe then drops the POSIX locks the other
    library's connections hold on the same file (one lock table per process and inode), and
    the sidecar's writer and reader corrupt each other's view of the WAL (SQLITE_IOERR_SHORT_READ).
    """
    if not _DRIVER:
        from palinode_vault.store import driver_reports
        from palinode_vault.store.sqlite import DRIVER_ENV

        chosen = os.environ.get(DRIVER_ENV) or next((r.name for r in driver_reports() if r.importable and r.vec_version), None)
        _DRIVER.append(chosen)
    return _DRIVER[0]


def _hash(text: str) -> str:
    from palinode_vault.core.text import sha256_text

    return sha256_text(text)
