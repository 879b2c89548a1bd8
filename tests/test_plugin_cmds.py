"""`palinode-vault plugin install` and `init --obsidian`, on real files in tmp_path."""

from __future__ import annotations

import importlib
import json
import os
import stat
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
PLUGIN_DIR = REPO / "obsidian-plugin"


def _load_cli():
    """The CLI entry point, with plugin_cmds registered."""
    try:
        cli = importlib.import_module("palinode_vault.cli")
    except ImportError as exc:
        # The vault commands module is another piece of work; until it exists, register an empty
        # stand-in so the CLI package (and with it plugin_cmds) can be imported and tested.
        if "vault_cmds" not in str(exc):
            raise
        sys.modules["palinode_vault.cli.vault_cmds"] = types.ModuleType("palinode_vault.cli.vault_cmds")
        cli = importlib.import_module("palinode_vault.cli")
    importlib.import_module("palinode_vault.cli.plugin_cmds")
    return cli


cli = _load_cli()
plugin_cmds = importlib.import_module("palinode_vault.cli.plugin_cmds")


def run(*args: str, env: dict | None = None):
    result = CliRunner().invoke(cli.main, list(args), env=env, catch_exceptions=False)
    return result


def fake_plugin(tmp_path: Path, built: bool = True) -> Path:
    src = tmp_path / "plugin-src"
    src.mkdir()
    (src / "manifest.json").write_text(json.dumps({"id": "palinode-vault", "version": "0.1.0"}))
    (src / "styles.css").write_text(".palinode-view {}\n")
    if built:
        (src / "main.js").write_text("module.exports = {};\n")
    return src


# ---- plugin install ----


def test_install_copies_the_three_files_and_keeps_saved_settings(tmp_path):
    src = fake_plugin(tmp_path)
    vault = tmp_path / "vault"
    target = vault / ".obsidian" / "plugins" / "palinode-vault"
    target.mkdir(parents=True)
    (target / "data.json").write_text('{"connection": "manual"}')
    result = run("plugin", "install", "--vault", str(vault), "--from", str(src))
    assert result.exit_code == 0, result.output
    for name in ("main.js", "manifest.json", "styles.css"):
        assert (target / name).read_bytes() == (src / name).read_bytes()
    assert (target / "data.json").read_text() == '{"connection": "manual"}'
    assert "palinode-vault serve --vault" in result.output


def test_install_enable_adds_the_plugin_once_and_keeps_others(tmp_path):
    src = fake_plugin(tmp_path)
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / ".obsidian" / "community-plugins.json").write_text('["dataview"]')
    for _ in range(2):
        result = run("plugin", "install", "--vault", str(vault), "--from", str(src), "--enable")
        assert result.exit_code == 0, result.output
    assert json.loads((vault / ".obsidian" / "community-plugins.json").read_text()) == ["dataview", "palinode-vault"]


def test_install_without_main_js_and_without_npm_says_what_to_do(tmp_path):
    src = fake_plugin(tmp_path, built=False)
    vault = tmp_path / "vault"
    vault.mkdir()
    result = CliRunner().invoke(
        cli.main, ["plugin", "install", "--vault", str(vault), "--from", str(src)], env={"PATH": str(tmp_path / "empty")}
    )
    assert result.exit_code == 1
    assert "npm is not installed" in result.output
    assert "npm ci && npm run build" in result.output
    assert "Traceback" not in result.output
    assert not (vault / ".obsidian").exists()


def test_install_builds_with_npm_when_main_js_is_missing(tmp_path):
    src = fake_plugin(tmp_path, built=False)
    (src / "node_modules").mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A stand-in npm that records its arguments and "builds" main.js like `npm run build` does.
    npm = bin_dir / "npm"
    npm.write_text('#!/bin/sh\necho "$@" >> npm-calls.txt\necho "// built" > main.js\n')
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    vault = tmp_path / "vault"
    vault.mkdir()
    result = CliRunner().invoke(
        cli.main,
        ["plugin", "install", "--vault", str(vault), "--from", str(src)],
        env={"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    assert result.exit_code == 0, result.output
    assert (src / "npm-calls.txt").read_text().split("\n")[0] == "run build"
    assert (vault / ".obsidian/plugins/palinode-vault/main.js").read_text() == "// built\n"


def test_install_reports_a_failing_build(tmp_path):
    src = fake_plugin(tmp_path, built=False)
    (src / "node_modules").mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text("#!/bin/sh\necho 'src/main.ts(1,1): error TS1005' >&2\nexit 2\n")
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    vault = tmp_path / "vault"
    vault.mkdir()
    result = CliRunner().invoke(
        cli.main,
        ["plugin", "install", "--vault", str(vault), "--from", str(src)],
        env={"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    assert result.exit_code == 1
    assert "`run build` failed" in result.output and "error TS1005" in result.output


def test_install_from_a_folder_without_a_plugin_is_a_clear_error(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    result = run("plugin", "install", "--vault", str(vault), "--from", str(tmp_path))
    assert result.exit_code == 1
    assert "manifest.json missing" in result.output


def test_install_missing_vault_is_a_clear_error(tmp_path):
    src = fake_plugin(tmp_path)
    result = run("plugin", "install", "--vault", str(tmp_path / "nope"), "--from", str(src))
    assert result.exit_code != 0
    assert "nope" in result.output


@pytest.mark.skipif(not (PLUGIN_DIR / "main.js").is_file(), reason="obsidian-plugin/main.js not built (npm run build)")
def test_install_the_real_built_plugin(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    result = run("plugin", "install", "--vault", str(vault))
    assert result.exit_code == 0, result.output
    manifest = json.loads((vault / ".obsidian/plugins/palinode-vault/manifest.json").read_text())
    assert manifest["id"] == "palinode-vault" and manifest["isDesktopOnly"] is True


# ---- init --obsidian ----


def groups_of(vault: Path) -> list[dict]:
    return json.loads((vault / ".obsidian" / "graph.json").read_text())["colorGroups"]


def test_init_obsidian_creates_graph_json_with_one_group_per_category(tmp_path):
    result = run("init", "--obsidian", "--vault", str(tmp_path))
    assert result.exit_code == 0, result.output
    queries = [g["query"] for g in groups_of(tmp_path)]
    assert queries == [
        "path:people/",
        "path:projects/",
        "path:decisions/",
        "path:insights/",
        "path:research/",
        "path:daily/",
        "path:inbox/",
    ]
    people = groups_of(tmp_path)[0]
    assert people["color"] == {"a": 1, "rgb": 0x3B82C4}


def test_init_obsidian_merges_keeps_the_persons_groups_and_other_keys(tmp_path):
    graph = {
        "collapse-filter": True,
        "showTags": False,
        "colorGroups": [
            {"query": "tag:#work", "color": {"a": 1, "rgb": 255}},
            {"query": "path:people/", "color": {"a": 1, "rgb": 123}},
        ],
        "repelStrength": 10,
    }
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "graph.json").write_text(json.dumps(graph))
    result = run("init", "--obsidian", "--vault", str(tmp_path))
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / ".obsidian" / "graph.json").read_text())
    assert list(data) == ["collapse-filter", "showTags", "colorGroups", "repelStrength"]
    assert data["repelStrength"] == 10 and data["showTags"] is False
    groups = data["colorGroups"]
    assert groups[:2] == graph["colorGroups"]  # the person's groups first, untouched
    assert [g["query"] for g in groups].count("path:people/") == 1
    assert len(groups) == 2 + 6


def test_init_obsidian_twice_changes_nothing(tmp_path):
    run("init", "--obsidian", "--vault", str(tmp_path))
    first = (tmp_path / ".obsidian" / "graph.json").read_bytes()
    result = run("init", "--obsidian", "--vault", str(tmp_path))
    assert result.exit_code == 0
    assert "nothing changed" in result.output
    assert (tmp_path / ".obsidian" / "graph.json").read_bytes() == first


def test_init_obsidian_refuses_a_broken_graph_json_without_touching_it(tmp_path):
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "graph.json").write_text('{"colorGroups": [,]}')
    result = run("init", "--obsidian", "--vault", str(tmp_path))
    assert result.exit_code == 1
    assert "graph.json:1:" in result.output and "not valid JSON" in result.output
    assert (tmp_path / ".obsidian" / "graph.json").read_text() == '{"colorGroups": [,]}'


def test_init_without_obsidian_says_what_to_pass(tmp_path):
    result = run("init", "--vault", str(tmp_path))
    assert result.exit_code != 0
    assert "--obsidian" in result.output


def test_merge_matches_queries_ignoring_case_and_spaces():
    graph = {"colorGroups": [{"query": " PATH:people/ ", "color": {"a": 1, "rgb": 1}}]}
    merged, added = plugin_cmds.merge_colour_groups(graph, plugin_cmds.category_colour_groups())
    assert "path:people/" not in added and len(added) == 6
    assert graph == {"colorGroups": [{"query": " PATH:people/ ", "color": {"a": 1, "rgb": 1}}]}  # input untouched


def test_colours_match_the_plugins_category_table():
    table = json.loads((PLUGIN_DIR / "src" / "categories.json").read_text())
    assert {c["folder"]: c["colour"] for c in table} == plugin_cmds.CATEGORY_COLOURS
    assert [c["folder"] for c in table] == list(plugin_cmds.CATEGORY_FOLDERS)


def test_the_plugins_memory_types_are_the_kinds_tables():
    """The plugin's "Approve as…" offers these: the types the sidecar's `as_type` takes."""
    from palinode_vault.kinds import KINDS

    table = json.loads((PLUGIN_DIR / "src" / "categories.json").read_text())
    assert [(c["kind"], c["type"]) for c in table if "type" in c] == [(k.name, k.schema) for k in KINDS if k.schema]
