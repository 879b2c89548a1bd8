"""The SQLite store on real SQLite: both drivers, sqlite-vec k-NN, FTS5, transactions."""

from __future__ import annotations

import sqlite3

import pytest

from palinode_vault.store import StoreError, connect, driver_reports, serialize_vector
from palinode_vault.store.sqlite import DRIVERS

np = pytest.importorskip("numpy", reason="numpy comes with palinode-vault[models]")


def _available_drivers() -> list[str]:
    return [r.name for r in driver_reports() if r.importable]


@pytest.fixture(params=_available_drivers())
def conn(request, tmp_path):
    """An open connection on each importable driver, to show the API is the same."""
    c = connect(tmp_path / "index.db", driver=request.param)
    yield c
    c.close()


@pytest.fixture
def vec_conn(tmp_path):
    """The connection `connect` picks by itself; it must have sqlite-vec here."""
    c = connect(tmp_path / "index.db")
    if not c.vec_available:
        pytest.fail(f"no driver could load sqlite-vec: {c.vec_error}")
    yield c
    c.close()


def test_default_driver_loads_sqlite_vec(vec_conn):
    probe = sqlite3.connect(":memory:")
    stdlib_can_load = hasattr(probe, "enable_load_extension")
    probe.close()
    # The stdlib wins where it can load extensions; on this project's machines it cannot.
    assert vec_conn.driver_name == ("sqlite3" if stdlib_can_load else "apsw")
    assert vec_conn.vec_version.startswith("v")
    assert vec_conn.fts5_available
    assert vec_conn.describe()["driver"] == vec_conn.driver_name


def test_knn_returns_the_true_nearest_neighbours(vec_conn):
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(500, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vec_conn.execute("create virtual table chunk_vec using vec0(embedding float[384])")
    vec_conn.executemany(
        "insert into chunk_vec(rowid, embedding) values (?, ?)",
        [(i + 1, serialize_vector(v)) for i, v in enumerate(vectors)],
    )
    query = vectors[56] + 0.05 * rng.normal(size=384).astype(np.float32)
    rows = vec_conn.fetchall(
        "select rowid, distance from chunk_vec where embedding match ? and k = 5 order by distance",
        (serialize_vector(query),),
    )
    expected = np.argsort(np.linalg.norm(vectors - query, axis=1))[:5] + 1
    assert rows[0][0] == 57
    assert [r[0] for r in rows] == expected.tolist()
    assert [r[1] for r in rows] == sorted(r[1] for r in rows)


def test_fts5_match_ranks_by_bm25(conn):
    conn.execute("create virtual table notes_fts using fts5(path, body)")
    conn.executemany(
        "insert into notes_fts(path, body) values (?, ?)",
        [
            ("decisions/sqlite.md", "We chose sqlite-vec instead of Qdrant: embedded, no server"),
            ("people/alice.md", "Alice designs the checkout redesign"),
            ("daily/2024-05-01.md", "Talked about Qdrant, Qdrant and more Qdrant with Bob"),
        ],
    )
    rows = conn.fetchall(
        "select path from notes_fts where notes_fts match ? order by bm25(notes_fts)",
        ("qdrant",),
    )
    assert [r[0] for r in rows] == ["daily/2024-05-01.md", "decisions/sqlite.md"]
    assert conn.fetchall("select path from notes_fts where notes_fts match 'checkout'") == [("people/alice.md",)]


def test_uniform_api(conn):
    conn.executescript(
        "create table notes(id integer primary key, path text unique, title text);create index notes_title on notes(title);"
    )
    assert conn.execute("insert into notes(path, title) values (?, ?)", ("a.md", "A")) == 1
    assert conn.last_insert_rowid() == 1
    conn.executemany(
        "insert into notes(path, title) values (:path, :title)", [{"path": "b.md", "title": "B"}, {"path": "c.md", "title": "C"}]
    )
    assert conn.fetchvalue("select count(*) from notes") == 3
    assert conn.fetchvalue("select title from notes where path = ?", ("zz.md",), default="none") == "none"
    assert conn.fetchone("select path, title from notes where id = ?", (2,)) == ("b.md", "B")
    assert conn.fetchdicts("select path, title from notes order by id limit 1") == [{"path": "a.md", "title": "A"}]
    assert conn.fetchdicts("select path from notes where 0") == []
    assert list(conn.iterate("select id from notes order by id")) == [(1,), (2,), (3,)]
    assert conn.execute("update notes set title = 'x' where id > 1") == 2
    assert conn.execute("create table other(a)") == 0  # DDL changes no rows, on both drivers
    assert conn.fetchvalue("pragma journal_mode") == "wal"
    assert conn.fetchvalue("pragma foreign_keys") == 1


def test_transaction_commits_and_rolls_back(conn):
    conn.execute("create table t(x integer)")
    with conn.transaction():
        conn.execute("insert into t values (1)")
    with pytest.raises(RuntimeError):
        with conn.transaction():
            conn.execute("insert into t values (2)")
            raise RuntimeError("boom")
    assert conn.fetchall("select x from t") == [(1,)]
    assert not conn.in_transaction


def test_nested_transaction_rolls_back_only_the_inner_block(conn):
    conn.execute("create table t(x integer)")
    with conn.transaction():
        conn.execute("insert into t values (1)")
        with pytest.raises(ValueError):
            with conn.transaction():
                conn.execute("insert into t values (2)")
                raise ValueError("inner")
        conn.execute("insert into t values (3)")
    assert conn.fetchall("select x from t order by x") == [(1,), (3,)]


def _constraint_errors() -> tuple[type[Exception], ...]:
    try:
        import apsw
    except ImportError:
        return ()
    return (apsw.ConstraintError,)


def test_executemany_is_atomic(conn):
    conn.execute("create table t(x integer unique)")
    with pytest.raises((sqlite3.IntegrityError, *_constraint_errors())):
        conn.executemany("insert into t values (?)", [(1,), (2,), (1,)])
    assert conn.fetchvalue("select count(*) from t") == 0


def test_stdlib_driver_without_extensions_opens_keyword_only(tmp_path):
    c = connect(tmp_path / "kw.db", driver="sqlite3")
    try:
        if hasattr(c._raw, "enable_load_extension"):
            pytest.skip("this Python's sqlite3 can load extensions, so it is not keyword-only")
        assert not c.vec_available
        assert "extension" in c.vec_error and "apsw" in c.vec_error
        assert c.describe()["vectors_unavailable_because"] == c.vec_error
        c.execute("create virtual table f using fts5(body)")
        c.execute("insert into f values ('keyword search still works')")
        assert c.fetchvalue("select count(*) from f where f match 'keyword'") == 1
    finally:
        c.close()


def test_env_var_chooses_the_driver(tmp_path, monkeypatch):
    monkeypatch.setenv("PALINODE_SQLITE_DRIVER", "sqlite3")
    c = connect(tmp_path / "env.db")
    assert c.driver_name == "sqlite3"
    c.close()


def test_unknown_driver_is_refused_with_the_choices(tmp_path):
    with pytest.raises(StoreError, match="unknown SQLite driver 'pysqlite9'.*sqlite3, apsw"):
        connect(tmp_path / "x.db", driver="pysqlite9")


def test_unopenable_path_names_the_file(tmp_path):
    folder = tmp_path / "a-folder.db"
    folder.mkdir()
    with pytest.raises(StoreError, match="a-folder.db"):
        connect(folder, driver="sqlite3")


def test_driver_reports_cover_both_drivers():
    reports = {r.name: r for r in driver_reports()}
    assert set(reports) == set(DRIVERS)
    assert any(r.vec_version for r in reports.values()), reports


def _open_and_write(path: str, driver: str, start, errors) -> None:
    """One process of the race below: open the fresh database at `start`, create, write, close."""
    start.wait()
    try:
        conn = connect(path, driver=driver)
        conn.executescript("create table if not exists t(x integer); create index if not exists t_x on t(x);")
        with conn.transaction():
            conn.execute("insert into t(x) values (1)")
        conn.close()
    except Exception as exc:  # noqa: BLE001 - sent to the test
        errors.put(f"{type(exc).__name__}: {exc}")


@pytest.mark.parametrize("driver", _available_drivers())
def test_processes_opening_a_fresh_database_together_wait_for_each_other(tmp_path, driver):
    # Several processes (the sidecar, CLI commands) opening a new database together: each
    # may find another converting it to WAL. apsw had no busy timeout before its first
    # statements, and `journal_mode = wal` is refused at once (no busy handler) when another
    # process holds the lock it needs: some opener failed with 'database is locked' in most
    # runs, on both drivers. 12 rounds of 4 processes.
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    errors = ctx.Queue()
    processes_per_round, rounds = 4, 12
    for round_ in range(rounds):
        path = str(tmp_path / f"race-{round_}.db")
        start = ctx.Event()
        procs = [ctx.Process(target=_open_and_write, args=(path, driver, start, errors)) for _ in range(processes_per_round)]
        for p in procs:
            p.start()
        start.set()
        for p in procs:
            p.join(60)
        found = []
        while not errors.empty():
            found.append(errors.get())
        assert found == [], f"round {round_}"
        assert all(p.exitcode == 0 for p in procs)
        with connect(path, driver=driver) as conn:
            assert conn.fetchvalue("select count(*) from t") == processes_per_round
