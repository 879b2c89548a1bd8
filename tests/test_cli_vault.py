"""The vault commands as a person runs them: scan, lint, fix, undo, graph."""

from __future__ import annotations

import json

CLEAN = {
    "people/alice-smith.md": (
        "---\nid: person-alice-smith\ncategory: person\ntype: PersonMemory\nname: Alice Smith\n"
        "entities: [project/checkout]\ncross_refs: [project/checkout]\nlast_updated: 2026-11-25\n---\n"
        "Works on [[checkout]].\n"
    ),
    "projects/checkout.md": (
        "---\nid: project-checkout\ncategory: project\ntype: ProjectSnapshot\nname: Checkout\n"
        "entities: [person/alice-smith]\ncross_refs: [person/alice-smith]\nlast_updated: 2026-11-25\n---\n"
        "Led by [[alice-smith]].\n"
    ),
}
WARNING_ONLY = {**CLEAN, "daily/2026-11-30.md": "Met [[nobody]].\n"}
WITH_ERROR = {**WARNING_ONLY, "people/bare.md": "no frontmatter [[checkout]]\n"}


def test_lint_json_shape(make_vault, run_cli):
    root = make_vault(WITH_ERROR)
    result = run_cli("lint", "--vault", root, "--json", "--now", "2026-12-01")
    data = json.loads(result.stdout)
    assert set(data) == {"total_files", "findings", "counts"}
    assert data["total_files"] == 3
    assert data["counts"] == {"broken_link": 1, "missing_frontmatter": 1}
    for f in data["findings"]:
        assert {"check", "severity", "path", "line", "message"} <= set(f)
        assert f["severity"] in ("error", "warning", "info")
        assert isinstance(f["line"], int) and f["line"] >= 1
    broken = next(f for f in data["findings"] if f["check"] == "broken_link")
    assert broken["target"] == "nobody" and broken["path"] == "daily/2026-11-30.md"
    missing = next(f for f in data["findings"] if f["check"] == "missing_frontmatter")
    assert "target" not in missing


def test_exit_status_is_one_only_with_an_error(make_vault, run_cli):
    assert run_cli("lint", "--vault", make_vault(CLEAN, "clean")).exit_code == 0
    assert run_cli("lint", "--vault", make_vault(WARNING_ONLY, "warn")).exit_code == 0
    assert run_cli("lint", "--vault", make_vault(WITH_ERROR, "err")).exit_code == 1
    # filtering the error away with --check makes it 0
    assert run_cli("lint", "--vault", make_vault(WITH_ERROR, "err"), "--check", "broken_link").exit_code == 0


def test_lint_text_output_names_path_and_line(make_vault, run_cli):
    result = run_cli("lint", "--vault", make_vault(WARNING_ONLY))
    assert "daily/2026-11-30.md:1: warning broken_link:" in result.stdout
    assert "1 findings" in result.stderr


def test_lint_check_filter_and_unknown_check(make_vault, run_cli):
    root = make_vault(WITH_ERROR)
    data = json.loads(run_cli("lint", "--vault", root, "--json", "--check", "missing_frontmatter").stdout)
    assert [f["check"] for f in data["findings"]] == ["missing_frontmatter"]
    bad = run_cli("lint", "--vault", root, "--check", "nonsense")
    assert bad.exit_code == 2 and "nonsense" in bad.stderr


def test_lint_some_paths(make_vault, run_cli):
    root = make_vault(WITH_ERROR)
    data = json.loads(run_cli("lint", "--vault", root, "--json", "daily/2026-11-30.md").stdout)
    assert {f["path"] for f in data["findings"]} == {"daily/2026-11-30.md"}


def test_vault_defaults_to_env_then_cwd(make_vault, run_cli, monkeypatch):
    root = make_vault(WARNING_ONLY)
    monkeypatch.setenv("PALINODE_VAULT", str(root))
    data = json.loads(run_cli("scan", "--json").stdout)
    assert data["markdown_files"] == 3
    monkeypatch.delenv("PALINODE_VAULT")
    monkeypatch.chdir(root)
    assert json.loads(run_cli("scan", "--json").stdout)["markdown_files"] == 3


def test_missing_vault_is_a_readable_error(tmp_path, run_cli):
    result = run_cli("lint", "--vault", tmp_path / "nope")
    assert result.exit_code != 0 and "nope" in (result.stderr + result.stdout)


def test_scan_json_counts(make_vault, run_cli):
    root = make_vault({**WITH_ERROR, "img/a.png": b"\x89PNG"})
    data = json.loads(run_cli("scan", "--vault", root, "--json").stdout)
    for key in ("markdown_files", "memory_files", "links", "unresolved", "orphans", "findings"):
        assert key in data
    assert data["markdown_files"] == 4 and data["memory_files"] == 3
    assert data["links"] == 4 and data["unresolved"] == 1 and data["orphans"] == 0
    assert data["findings"] == {"broken_link": 1, "missing_frontmatter": 1}


def test_now_option_drives_date_checks(make_vault, run_cli):
    root = make_vault(CLEAN)
    early = json.loads(run_cli("lint", "--vault", root, "--json", "--now", "2026-12-01").stdout)
    late = json.loads(run_cli("lint", "--vault", root, "--json", "--now", "2027-06-01").stdout)
    assert "stale" not in early["counts"]
    assert late["counts"]["stale"] == 2
    assert run_cli("lint", "--vault", root, "--now", "June").exit_code == 2


def test_fix_and_undo(make_vault, run_cli):
    root = make_vault(
        {
            **CLEAN,
            "people/bob.md": CLEAN["people/alice-smith.md"]
            .replace("alice-smith", "bob")
            .replace("Works on [[checkout]].", "Works on [[checkout]] with [[Alice Smith]]."),
        }
    )
    before = (root / "people/bob.md").read_bytes()
    result = run_cli("fix", "--vault", root)
    assert result.exit_code == 0
    assert "fixed people/bob.md" in result.stdout
    assert (root / "people/bob.md").read_bytes() != before
    undone = run_cli("undo", "--vault", root)
    assert "restored people/bob.md" in undone.stdout
    assert (root / "people/bob.md").read_bytes() == before
    assert run_cli("undo", "--vault", root).stdout.strip() == "nothing to undo"


def test_every_vault_command_has_help(run_cli):
    for command in ("scan", "lint", "fix", "undo", "graph"):
        result = run_cli(command, "--help")
        assert result.exit_code == 0 and "--vault" in result.stdout
