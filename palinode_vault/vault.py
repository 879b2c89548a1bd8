"""A vault on disk: walk it, read notes safely, parse through the cache, and keep a VaultState.

This is the edge between files and the pure core. `Vault.load()` builds the state (parsing only
what the cache does not already know, on several processes when there is a lot to parse);
`Vault.refresh(paths)` brings it up to date for a few changed files.
"""

from __future__ import annotations

import errno
import gc
import hashlib
import os
import stat as stat_module
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from palinode_vault.cache import PARSER_VERSION, ParseCache, Undecodable, decode_note, encode_note, seal_key
from palinode_vault.core.note import Note, parse_note
from palinode_vault.core.text import RawShape, normalise, sha256_text
from palinode_vault.core.vault_state import Unreadable, VaultState
from palinode_vault.exclusions import load_exclusions
from palinode_vault.files import FileStat, is_note, safe_name, walk_with_problems
from palinode_vault.files import walk as walk  # noqa: F401  (callers import it from here)
from palinode_vault.pathsafe import inside_private
from palinode_vault.settings import Settings

Progress = Callable[[str, int, int], None]  # (phase, done, total)
PARALLEL_MIN = 300  # below this many notes to parse, one process is faster


@dataclass(frozen=True)
class NoteText:
    """A note as read: the raw text (what is on disk) and the normalised text the core sees."""

    path: str
    raw_bytes: bytes
    raw: str
    shape: RawShape
    text: str
    text_hash: str  # of the normalised text (what Obsidian's editor sees)


def _read_all(fd: int, size: int, max_bytes: int) -> bytes:
    """The file's bytes up to EOF, or more than `max_bytes` when it grew past them (plain
    `os.read`s: no buffered file object per note)."""
    parts: list[bytes] = []
    total = 0
    want = min(size, max_bytes) + 1  # a file read whole in one call, EOF seen in the next
    while total <= max_bytes:
        chunk = os.read(fd, want)
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
        want = min(1 << 20, max_bytes + 1 - total)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_note_text(root: Path, rel: str, max_bytes: int) -> NoteText | Unreadable:
    """Read one note as text, or say clearly why it cannot be (binary, encoding, size, not a
    regular file). Opened without blocking, so a FIFO put in a note's place cannot hang it."""
    full = os.path.join(root, rel)  # a str: a Path per note cost more than the read
    try:
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return Unreadable(rel, "file disappeared while being read")
    except OSError as exc:
        if exc.errno in (errno.EMFILE, errno.ENFILE):
            raise  # out of file descriptors: nothing wrong with the note; the caller retries
        return Unreadable(rel, f"cannot read: {exc.strerror or exc}")
    try:
        info = os.fstat(fd)
        if not stat_module.S_ISREG(info.st_mode):
            return Unreadable(rel, "not a regular file (a FIFO, device or socket named .md); not read")
        if info.st_size > max_bytes:
            return Unreadable(
                rel, f"note is {info.st_size / 1048576:.1f} MB, over the {max_bytes / 1048576:.0f} MB limit; it is not parsed"
            )
        data = _read_all(fd, info.st_size, max_bytes)
    except OSError as exc:
        return Unreadable(rel, f"cannot read: {exc.strerror or exc}")
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        return Unreadable(rel, f"note grew over the {max_bytes / 1048576:.0f} MB limit while being read; it is not parsed")
    if b"\x00" in data:
        line = data[: data.find(b"\x00")].count(b"\n") + 1
        return Unreadable(rel, "binary file named .md (contains NUL bytes); not parsed", line)
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return Unreadable(rel, f"invalid UTF-8 at byte {exc.start} (line {line}); save the file as UTF-8", line)
    text, shape = normalise(raw)
    # A note without a BOM or CRLF is its own normalised text: hash the bytes as read rather
    # than encode the text again (valid UTF-8 encodes back to exactly these bytes).
    digest = hashlib.sha256(data).hexdigest() if text is raw else sha256_text(text)
    return NoteText(rel, data, raw, shape, text, digest)


def fork_context():
    """A multiprocessing context that forks (children share the loaded state), or None where
    the platform cannot fork (Windows): callers then do the work in this process."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    return multiprocessing.get_context("fork")


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while building many acyclic objects.

    Loading a vault creates millions of small objects (notes, links, findings) and no cycles;
    the collector's full passes over that growing heap cost about a fifth of a cold scan.
    Reference counting still frees everything as usual. Nested uses are fine.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _parse_one(root: Path, stat: FileStat, max_bytes: int) -> tuple[Note | Unreadable, FileStat]:
    read = read_note_text(root, stat.path, max_bytes)
    if isinstance(read, Unreadable):
        return read, stat
    return parse_note(stat.path, read.text, read.text_hash), stat


def _parse_batch(
    root: str, stats: list[FileStat], max_bytes: int
) -> list[tuple[Note | Unreadable | None, bytes | None, FileStat]]:
    """Parse in a worker process. Each note comes back as its cache row only (None in the first
    place): the parent decodes the row it stores anyway, which costs less than pickling the
    note here and unpickling it there. A note the row format cannot hold comes back itself."""
    out: list[tuple[Note | Unreadable | None, bytes | None, FileStat]] = []
    base = Path(root)  # one Path, not one per note
    with gc_paused():
        for stat in stats:
            item, _ = _parse_one(base, stat, max_bytes)
            if isinstance(item, Unreadable):
                out.append((item, None, stat))
                continue
            row = encode_note(item)
            out.append((None, row, stat) if row is not None else (item, None, stat))
    return out


def _from_worker(
    item: Note | Unreadable | None, row: bytes | None, stat: FileStat, root: Path, max_bytes: int
) -> Note | Unreadable:
    """A worker's result as the parent keeps it: the note decoded from its row (parsed here
    again in the unlikely case that the row does not decode)."""
    if item is not None:
        return item
    assert row is not None, "a worker sends the note itself when it has no row"
    try:
        return decode_note(row, stat.path)
    except Undecodable:
        return _parse_one(root, stat, max_bytes)[0]


class Vault:
    """One vault folder with its parse cache and in-memory state."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.root = Path(settings.vault).resolve()
        self.state = VaultState()
        self.stats: dict[str, FileStat] = {}
        self.parsed_last_load = 0
        self._walked: list[FileStat] | None = None
        self.walk_problems: list[Unreadable] = []  # folders, names and files the walk could not take
        self.loaded = False
        # refresh(store=False) keeps parses here until flush_cache() (the sidecar flushes when idle)
        self._unsaved: dict[str, tuple[Note, int, int]] = {}
        self._forgotten: set[str] = set()
        self.excluded = load_exclusions(self.root).excludes  # re-read at every walk
        self.detached = False  # a snapshot: parses are not stored in the cache

    def snapshot(self) -> Vault:
        """A detached copy for a pass that plans with no lock held (docs/PROTOCOL.md, "Jobs"):
        its own state, stats and settings; it reads the same files and never writes the parse
        cache. Take it where the live vault is not changing (under the owner's lock)."""
        other = Vault.__new__(Vault)
        other.__dict__.update(self.__dict__)
        other.settings = self.settings.model_copy()
        with gc_paused():  # many small sets and dicts: a full GC pass over the heap cost a second
            other.state = self.state.copy()
        other.stats = dict(self.stats)
        other._walked = None
        other._unsaved = {}
        other._forgotten = set()
        other.detached = True
        return other

    def walk(self) -> list[FileStat]:
        """The vault's files (walked once per load)."""
        if self._walked is None:
            self.use_walk(walk_with_problems(self.root))
        assert self._walked is not None, "set by use_walk"
        return self._walked

    def use_walk(self, walked: tuple[list[FileStat], list[Unreadable]]) -> None:
        """Take a walk of this vault just made (`walk_with_problems`) for the next load, rather
        than walking again (`scan` walks once for its quick fingerprint, then loads)."""
        self.excluded = load_exclusions(self.root).excludes
        files, self.walk_problems = walked
        self._walked = [f for f in files if not self.excluded(f.path)]

    def fingerprint(self, *extra: str) -> str:
        """A hash of every file's path, size and mtime, plus `extra` (settings, dates...).

        Equal fingerprints mean nothing on disk changed, so whole-vault results can be reused.
        """
        digest = hashlib.sha256()
        digest.update(f"{PARSER_VERSION}|{self.settings.max_note_bytes}|".encode())
        for item in extra:
            digest.update(item.encode("utf-8", "surrogatepass") + b"\0")
        for f in self.walk():
            digest.update(f"{f.path}\0{f.size}\0{f.mtime_ns}\n".encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    # --- loading ----------------------------------------------------------------------------

    def load(self, progress: Progress | None = None) -> VaultState:
        """Walk the vault and build the state, parsing only notes the cache does not know."""
        with gc_paused():
            return self._load(progress)

    def _load(self, progress: Progress | None) -> VaultState:
        files = self.walk()
        self._walked = None  # the next load walks afresh
        self.parsed_last_load = 0
        cache = ParseCache(self.root)
        cache.load()
        notes: dict[str, Note] = {}
        unreadable: dict[str, Unreadable] = {}
        todo: list[FileStat] = []
        for problem in self.walk_problems:
            unreadable[problem.path] = problem
        for stat in files:
            self.stats[stat.path] = stat
            if not is_note(stat.path):
                continue
            cached = cache.by_stat(stat.path, stat.size, stat.mtime_ns)
            if cached is not None:
                notes[stat.path] = cached
            else:
                todo.append(stat)
        fresh: list[tuple[str, int, int, str, bytes]] = []
        for item, data, stat in self._parse_many(todo, cache, progress):
            if isinstance(item, Unreadable):
                unreadable[item.path] = item
                continue
            notes[item.path] = item
            if data is not None:
                fresh.append((item.path, stat.size, stat.mtime_ns, item.text_hash, data))
        cache.store_encoded(fresh)
        gone = [p for p in cache.rows if p not in self.stats]
        cache.forget(gone)
        cache.close()
        self.state = VaultState.build([f.path for f in files], notes, unreadable)
        self.loaded = True
        return self.state

    def _parse_many(self, todo: list[FileStat], cache: ParseCache, progress: Progress | None):
        """Yield (Note or Unreadable, encoded cache row or None, FileStat) as notes are parsed:
        this process's share first, then the forked workers' batches as they come."""
        max_bytes = self.settings.max_note_bytes
        # Files whose stat changed but whose content did not keep their cached parse.
        need: list[FileStat] = []
        for stat in todo:
            row = cache.rows.get(stat.path)
            if row is not None:
                read = read_note_text(self.root, stat.path, max_bytes)
                if isinstance(read, NoteText):
                    hit = cache.by_hash(stat.path, read.text_hash)
                    if hit is not None:
                        yield hit, row[3], stat  # same content, new stat: the row, under the new stat
                        continue
            need.append(stat)
        total = len(need)
        self.parsed_last_load = total  # a changed stat with the same content is read, not parsed
        workers = min(self.settings.workers, os.cpu_count() or 1)
        if total < PARALLEL_MIN or workers == 1 or fork_context() is None:
            yield from self._parse_here(need, total, progress)
            return
        # This process is one of the workers: it parses every `workers`-th note itself (no row to
        # send back and decode for those) while the forked children parse the rest.
        ours = need[::workers]
        theirs = [stat for i, stat in enumerate(need) if i % workers]
        children = workers - 1
        chunk = max(50, len(theirs) // (children * 8))
        batches = [theirs[i : i + chunk] for i in range(0, len(theirs), chunk)]
        seal_key()  # read (or made) before the fork: workers seal rows with the parent's key
        from palinode_vault.core.markdown import parser as markdown_parser

        markdown_parser()  # loaded once before the fork (60 ms), not once per child
        with ProcessPoolExecutor(children, mp_context=fork_context()) as pool:
            pending = [pool.submit(_parse_batch, str(self.root), batch, max_bytes) for batch in batches]
            yield from self._parse_here(ours, total, progress)
            done = len(ours)
            for future in pending:
                batch = future.result()
                for item, data, stat in batch:
                    yield _from_worker(item, data, stat, self.root, max_bytes), data, stat
                done += len(batch)
                if progress:
                    progress("scan", done, total)

    def _parse_here(self, stats: list[FileStat], total: int, progress: Progress | None):
        """`_parse_many`'s items for `stats`, parsed in this process."""
        max_bytes = self.settings.max_note_bytes
        for i, stat in enumerate(stats, 1):
            item, _ = _parse_one(self.root, stat, max_bytes)
            yield item, None if isinstance(item, Unreadable) else encode_note(item), stat
            if progress and (i % 200 == 0 or i == total):
                progress("scan", i, total)

    # --- reading and refreshing -------------------------------------------------------------

    def read(self, rel: str) -> NoteText | Unreadable:
        return read_note_text(self.root, rel, self.settings.max_note_bytes)

    def refresh(self, paths: set[str], store: bool = True) -> set[str]:
        """Bring the state up to date for files that changed, appeared or disappeared.

        Returns the notes whose findings may have changed. With `store=False` the new parses
        wait in memory for `flush_cache()`, keeping SQLite off the path of a save.
        """
        affected: set[str] = set()
        stored: list[tuple[Note, int, int]] = []
        forgotten: list[str] = []
        for rel in sorted(paths):
            full = self.root / rel
            try:
                st = full.stat()
            except OSError:
                st = None
            shown = safe_name(rel)
            if st is not None and shown is not None:
                if is_note(shown):
                    affected |= self.state.mark_unreadable(Unreadable(shown, "file name is not valid UTF-8; rename it"))
                continue
            if st is not None and full.is_symlink() and inside_private(self.root, os.path.realpath(full)):
                st = None  # a link into .palinode/, .obsidian/ or .git/ is not a note
            if st is not None and not stat_module.S_ISREG(st.st_mode) and is_note(rel):
                self.stats.pop(rel, None)
                affected |= self.state.mark_unreadable(
                    Unreadable(rel, "not a regular file (a FIFO, device or socket named .md); not read")
                )
                continue
            if st is None or not full.is_file() or self.excluded(rel):
                self.stats.pop(rel, None)
                affected |= self.state.remove(rel)
                forgotten.append(rel)
                continue
            stat = FileStat(rel, st.st_size, st.st_mtime_ns)
            self.stats[rel] = stat
            if not is_note(rel):
                affected |= self.state.add_file(rel)
                continue
            read = self.read(rel)
            if isinstance(read, Unreadable):
                affected |= self.state.mark_unreadable(read)
                continue
            old = self.state.notes.get(rel)
            if old is not None and old.text_hash == read.text_hash:
                continue
            note = parse_note(rel, read.text, read.text_hash)
            affected |= self.state.upsert_note(note)
            stored.append((note, stat.size, stat.mtime_ns))
        for note, size, mtime in stored:
            self._unsaved[note.path] = (note, size, mtime)
            self._forgotten.discard(note.path)
        for rel in forgotten:
            self._unsaved.pop(rel, None)
            self._forgotten.add(rel)
        if store:
            self.flush_cache()
        return affected

    def flush_cache(self) -> None:
        """Write parses made since the last flush to the parse cache."""
        if self.detached or not self._unsaved and not self._forgotten:
            return
        cache = ParseCache(self.root)
        cache.store(list(self._unsaved.values()))
        cache.forget(sorted(self._forgotten))
        cache.close()
        self._unsaved.clear()
        self._forgotten.clear()
