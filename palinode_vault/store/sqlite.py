"""One SQLite connection, whichever driver can load sqlite-vec.

Python's stdlib `sqlite3` cannot load extensions on many builds (pyenv, some macOS
Pythons, this project's own machines), so the store picks a driver at connect time:
the stdlib where `enable_load_extension` works, else `apsw`. Callers use the thin
uniform API of `Connection` and never touch the driver.

Connections run in autocommit mode on both drivers (the stdlib's implicit transactions
are switched off) so that `transaction()` behaves the same everywhere.

If no driver can load sqlite-vec the connection still opens, keyword-only:
`vec_available` is False and `vec_error` says why and how to fix it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Environment variable that forces a driver ("sqlite3" or "apsw"), for tests and debugging.
DRIVER_ENV = "PALINODE_SQLITE_DRIVER"
DRIVERS = ("sqlite3", "apsw")
#: How long a statement waits for another connection's lock before failing with "database is
#: locked". Set when the connection is made, before any statement: the first statements
#: (the FTS5 probe, `journal_mode = wal`) already read or lock the file.
BUSY_TIMEOUT_S = 5.0

Params = Sequence[Any] | dict[str, Any]


@dataclass(frozen=True)
class DriverReport:
    """What a driver can do on this Python: used by `status` and to pick a driver."""

    name: str
    importable: bool
    sqlite_version: str | None = None
    loads_extensions: bool = False
    vec_version: str | None = None
    problems: tuple[str, ...] = field(default_factory=tuple)


class StoreError(Exception):
    """The database could not be opened or used; the message names the file."""


class Connection:
    """A SQLite connection with the same small API on the stdlib and apsw drivers.

    Attributes:
        path: the database file (or ":memory:").
        driver_name: "sqlite3" or "apsw".
        sqlite_version: the SQLite library version the driver runs.
        vec_available: True when sqlite-vec is loaded (vector search works).
        vec_version: sqlite-vec's version when loaded.
        vec_error: why vectors are unavailable and what to do, else None.
        fts5_available: True when FTS5 works (keyword search).
    """

    def __init__(self, raw: Any, driver_name: str, path: str) -> None:
        self._raw = raw
        self.driver_name = driver_name
        self.path = path
        self.sqlite_version = self.fetchvalue("select sqlite_version()")
        self.vec_available = False
        self.vec_version: str | None = None
        self.vec_error: str | None = None
        self.fts5_available = _has_fts5(self)
        self._depth = 0  # nesting depth of transaction(); inner levels are savepoints

    # -- statements ---------------------------------------------------------------------

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return the number of rows it inserted, updated or deleted."""
        before = self._total_changes()
        cursor = self._raw.cursor()
        cursor.execute(sql, params)
        # Drain rows (pragma, insert ... returning) so the statement finishes on both drivers.
        for _row in cursor:
            pass
        return self._total_changes() - before

    def _total_changes(self) -> int:
        # One measure on both drivers (the stdlib's rowcount and apsw's changes() disagree
        # after DDL); it includes rows changed by triggers.
        total = self._raw.total_changes
        return int(total() if callable(total) else total)

    def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement once per parameter set (inside a transaction for speed)."""
        with self.transaction():
            self._raw.cursor().executemany(sql, rows)

    def executescript(self, sql: str) -> None:
        """Run several `;`-separated statements (schema creation, migrations)."""
        if self.driver_name == "sqlite3":
            self._raw.executescript(sql)
        else:
            self._raw.execute(sql)

    def iterate(self, sql: str, params: Params = ()) -> Iterator[tuple[Any, ...]]:
        """Yield result rows as tuples, without loading them all at once."""
        cursor = self._raw.cursor()
        cursor.execute(sql, params)
        for row in cursor:
            yield tuple(row)

    def fetchall(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Return every result row as a tuple."""
        return list(self.iterate(sql, params))

    def fetchone(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        """Return the first result row, or None."""
        for row in self.iterate(sql, params):
            return row
        return None

    def fetchvalue(self, sql: str, params: Params = (), default: Any = None) -> Any:
        """Return the first column of the first row, or `default` when there is none."""
        row = self.fetchone(sql, params)
        return default if row is None else row[0]

    def fetchdicts(self, sql: str, params: Params = ()) -> list[dict[str, Any]]:
        """Return every result row as a dict keyed by column name."""
        cursor = self._raw.cursor()
        cursor.execute(sql, params)
        if self.driver_name == "sqlite3":
            names = [d[0] for d in cursor.description or ()]
        else:
            # apsw describes a statement only while it is running: before fetching,
            # and not at all when it returned no rows.
            try:
                names = [d[0] for d in cursor.getdescription()]
            except Exception:  # noqa: BLE001 - apsw.ExecutionCompleteError: no rows
                return []
        return [dict(zip(names, row)) for row in cursor.fetchall()]

    def last_insert_rowid(self) -> int:
        """The rowid of the last row inserted on this connection."""
        return int(self.fetchvalue("select last_insert_rowid()"))

    # -- transactions -------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Connection]:
        """Commit the block on success, roll it back on an exception; nests as savepoints."""
        if self._depth == 0:
            self._raw.execute("begin")
        else:
            self._raw.execute(f"savepoint palinode_{self._depth}")
        self._depth += 1
        try:
            yield self
        except BaseException:
            self._depth -= 1
            if self._depth == 0:
                self._raw.execute("rollback")
            else:
                self._raw.execute(f"rollback to palinode_{self._depth}")
                self._raw.execute(f"release palinode_{self._depth}")
            raise
        else:
            self._depth -= 1
            if self._depth == 0:
                self._raw.execute("commit")
            else:
                self._raw.execute(f"release palinode_{self._depth}")

    @property
    def in_transaction(self) -> bool:
        """True while a `transaction()` block is open."""
        return self._depth > 0

    def close(self) -> None:
        """Close the connection."""
        self._raw.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> dict[str, Any]:
        """A small JSON-ready summary for `status`."""
        return {
            "driver": self.driver_name,
            "sqlite_version": self.sqlite_version,
            "fts5": self.fts5_available,
            "vectors": self.vec_available,
            "sqlite_vec_version": self.vec_version,
            "vectors_unavailable_because": self.vec_error,
        }

    def __repr__(self) -> str:
        vec = self.vec_version if self.vec_available else "no sqlite-vec"
        return f"<Connection {self.path!r} via {self.driver_name}, {vec}>"


def serialize_vector(vector: Any) -> bytes:
    """Pack a vector (numpy array or list of floats) as sqlite-vec's float32 blob."""
    import numpy as np

    return np.asarray(vector, dtype=np.float32).tobytes()


def connect(path: str | os.PathLike[str], *, driver: str | None = None, load_vec: bool = True, wal: bool = True) -> Connection:
    """Open the SQLite database at `path` (created if missing) with sqlite-vec loaded.

    The driver is `driver`, else the env var PALINODE_SQLITE_DRIVER, else the first of
    the stdlib `sqlite3` and `apsw` that can load sqlite-vec, else whichever opens
    (keyword-only; `vec_error` says why). File databases use WAL so a reader (the
    socket) and a writer (the indexer) do not block each other.
    """
    where = str(path)
    if where != ":memory:":
        Path(where).parent.mkdir(parents=True, exist_ok=True)
    wanted = driver or os.environ.get(DRIVER_ENV) or None
    if wanted is not None and wanted not in DRIVERS:
        raise StoreError(
            f"unknown SQLite driver {wanted!r} (from {'argument' if driver else DRIVER_ENV}); use one of: {', '.join(DRIVERS)}"
        )
    candidates = [wanted] if wanted else _driver_order()
    failures: list[str] = []
    fallback: Connection | None = None
    for name in candidates:
        try:
            conn = _open(name, where)
        except ImportError:
            failures.append(f"{name}: not installed (pip install 'palinode-vault[models]')")
            continue
        except Exception as exc:  # noqa: BLE001 - report every driver's reason together
            failures.append(f"{name}: {exc}")
            continue
        if not load_vec:
            conn.vec_error = "sqlite-vec not requested"
            return _finish(conn, wal)
        problem = _load_vec(conn)
        if problem is None:
            if fallback is not None:
                fallback.close()
            return _finish(conn, wal)
        failures.append(f"{name}: {problem}")
        if fallback is None:
            fallback = conn
        else:
            conn.close()
    if fallback is None:
        raise StoreError(f"cannot open SQLite database {where}: " + "; ".join(failures))
    fallback.vec_error = (
        "no SQLite driver here can load sqlite-vec, so search is keyword-only ("
        + "; ".join(failures)
        + "). Fix: pip install 'palinode-vault[models]' (installs apsw and sqlite-vec)"
    )
    return _finish(fallback, wal)


def driver_reports() -> list[DriverReport]:
    """Probe each driver in memory: importable, SQLite version, extension loading."""
    reports = []
    for name in DRIVERS:
        try:
            conn = _open(name, ":memory:")
        except ImportError:
            reports.append(DriverReport(name, importable=False, problems=("not installed",)))
            continue
        problem = _load_vec(conn)
        reports.append(
            DriverReport(
                name,
                importable=True,
                sqlite_version=conn.sqlite_version,
                loads_extensions=problem is None or "sqlite-vec is not installed" in problem,
                vec_version=conn.vec_version,
                problems=() if problem is None else (problem,),
            )
        )
        conn.close()
    return reports


# -- internals ----------------------------------------------------------------------------


def _driver_order() -> list[str]:
    # The stdlib first: no extra dependency where it works.
    return list(DRIVERS)


def _open(name: str, where: str) -> Connection:
    if name == "sqlite3":
        import sqlite3

        # isolation_level=None: autocommit, so transaction() controls BEGIN/COMMIT as apsw.
        # check_same_thread=False: the sidecar hands the connection to worker threads and
        # serialises access itself, as apsw allows.
        raw = sqlite3.connect(where, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    elif name == "apsw":
        import apsw

        raw = apsw.Connection(where)  # type: ignore[assignment]  # Connection wraps either driver
        # apsw has no busy timeout by default: several processes opening a database nobody
        # has open (one converting it to WAL, another reading the schema) failed at once
        raw.set_busy_timeout(int(BUSY_TIMEOUT_S * 1000))  # type: ignore[attr-defined]
    else:  # pragma: no cover - guarded by connect()
        raise StoreError(f"unknown driver {name!r}")
    conn = Connection(raw, name, where)
    conn.execute("pragma foreign_keys = on")
    return conn


def _load_vec(conn: Connection) -> str | None:
    """Load sqlite-vec into `conn`; return None on success, else the reason."""
    raw = conn._raw
    if not hasattr(raw, "enable_load_extension"):
        return "this Python's sqlite3 was built without extension loading"
    try:
        import sqlite_vec
    except ImportError:
        return "sqlite-vec is not installed (pip install sqlite-vec)"
    try:
        raw.enable_load_extension(True)
        try:
            sqlite_vec.load(raw)
        finally:
            raw.enable_load_extension(False)
        conn.vec_version = conn.fetchvalue("select vec_version()")
    except Exception as exc:  # noqa: BLE001 - any failure means keyword-only, with the reason
        return f"loading sqlite-vec failed: {exc}"
    conn.vec_available = True
    conn.vec_error = None
    return None


def _finish(conn: Connection, wal: bool) -> Connection:
    if wal and conn.path != ":memory:":
        _retry_busy(lambda: conn.fetchall("pragma journal_mode = wal"))
    return conn


def _retry_busy(run: Callable[[], Any]) -> Any:
    """Run `run`, retrying for up to BUSY_TIMEOUT_S while the database is locked.

    For statements SQLite answers 'database is locked' without calling the busy handler:
    switching a new database to WAL holds a shared lock and needs an exclusive one, and
    SQLite refuses at once rather than wait on a process that may be waiting on it (two
    processes opening a new index together; the busy timeout alone does not cover it).
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    delay = 0.005
    while True:
        try:
            return run()
        except Exception as exc:  # noqa: BLE001 - the drivers raise different classes
            if not _is_busy(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _is_busy(exc: BaseException) -> bool:
    """SQLITE_BUSY on either driver (apsw.BusyError, sqlite3.OperationalError)."""
    return type(exc).__name__ == "BusyError" or "database is locked" in str(exc)


def _has_fts5(conn: Connection) -> bool:
    try:
        conn.execute("create virtual table temp._palinode_fts5_probe using fts5(x)")
        conn.execute("drop table temp._palinode_fts5_probe")
    except Exception:  # noqa: BLE001 - any failure means no FTS5
        return False
    return True
