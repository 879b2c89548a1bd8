"""`palinode-vault plugin install` and `palinode-vault init --obsidian`: the Obsidian side.

`plugin install` copies the built Obsidian plugin (obsidian-plugin/: main.js, manifest.json,
styles.css) into VAULT/.obsidian/plugins/palinode-vault/, building it with npm first when main.js
is missing. `init --obsidian` adds one colour group per category to VAULT/.obsidian/graph.json,
merging with the groups the person already has.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import click

from palinode_vault.cli.group import main
from palinode_vault.cli.options import resolve_vault, vault_option
from palinode_vault.kinds import INBOX_FOLDER, KINDS

PLUGIN_ID = "palinode-vault"
PLUGIN_FILES = ("main.js", "manifest.json", "styles.css")

# Colours per category folder. They match obsidian-plugin/src/categories.json (the plugin's views
# use the same colours; tests/test_plugin_cmds.py checks the two agree).
CATEGORY_COLOURS: dict[str, str] = {
    "people": "#3b82c4",
    "projects": "#e07b39",
    "decisions": "#c2417a",
    "insights": "#8a5cd1",
    "research": "#2f9e63",
    "daily": "#7d8590",
    "inbox": "#c9a227",
}
CATEGORY_FOLDERS: tuple[str, ...] = tuple(k.folder for k in KINDS) + (INBOX_FOLDER,)


def default_plugin_dir() -> Path:
    """The obsidian-plugin/ folder of this source checkout, else the built plugin in the package.

    A wheel carries the built plugin in palinode_vault/obsidian_plugin/ (setup.py); a checkout
    (editable install) has its obsidian-plugin/ project, built on demand.
    """
    checkout = Path(__file__).resolve().parents[2] / "obsidian-plugin"
    if (checkout / "manifest.json").is_file():
        return checkout
    return packaged_plugin_dir()


def packaged_plugin_dir() -> Path:
    """Where the wheel puts the built plugin."""
    return Path(__file__).resolve().parents[1] / "obsidian_plugin"


# ---- plugin install -------------------------------------------------------------------------


def build_plugin(plugin_dir: Path) -> None:
    """Builds main.js with npm (`npm ci` when node_modules is missing, then `npm run build`)."""
    npm = shutil.which("npm")
    if npm is None:
        raise click.ClickException(
            f"{plugin_dir / 'main.js'} is not built and npm is not installed: install Node.js 20+ "
            f"and run `npm ci && npm run build` in {plugin_dir}, then run this again."
        )
    steps = ([[npm, "ci"]] if not (plugin_dir / "node_modules").is_dir() else []) + [[npm, "run", "build"]]
    for step in steps:
        click.echo(f"$ npm {' '.join(step[1:])}  (in {plugin_dir})")
        done = subprocess.run(step, cwd=plugin_dir, capture_output=True, text=True)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise click.ClickException(f"`{' '.join(step[1:])}` failed in {plugin_dir} (exit {done.returncode}):\n{tail}")
    if not (plugin_dir / "main.js").is_file():
        raise click.ClickException(f"`npm run build` ran but {plugin_dir / 'main.js'} is still missing")


def install_plugin(plugin_dir: Path, vault: Path, *, rebuild: bool = False) -> Path:
    """Copies the built plugin into VAULT/.obsidian/plugins/palinode-vault/; returns that folder.

    The plugin's saved settings (data.json) in the target folder are left as they are.
    """
    if not (plugin_dir / "manifest.json").is_file():
        raise click.ClickException(
            f"no built Obsidian plugin at {plugin_dir} (manifest.json missing); reinstall palinode-vault "
            "from a wheel that includes it, or pass --from PATH to an obsidian-plugin/ folder"
        )
    if rebuild or not (plugin_dir / "main.js").is_file():
        build_plugin(plugin_dir)
    missing = [name for name in PLUGIN_FILES if not (plugin_dir / name).is_file()]
    if missing:
        raise click.ClickException(f"{plugin_dir} lacks {', '.join(missing)}")
    target = vault / ".obsidian" / "plugins" / PLUGIN_ID
    target.mkdir(parents=True, exist_ok=True)
    for name in PLUGIN_FILES:
        shutil.copyfile(plugin_dir / name, target / name)
    return target


def enable_plugin(vault: Path) -> bool:
    """Adds the plugin to .obsidian/community-plugins.json; False when it was already there."""
    path = vault / ".obsidian" / "community-plugins.json"
    enabled = _read_json(path, default=[])
    if not isinstance(enabled, list):
        raise click.ClickException(f"{path}: expected a JSON list of plugin ids, found {type(enabled).__name__}")
    if PLUGIN_ID in enabled:
        return False
    _write_json(path, [*enabled, PLUGIN_ID])
    return True


@main.group("plugin")
def plugin_group() -> None:
    """The Palinode Obsidian plugin (obsidian-plugin/)."""


@plugin_group.command("install")
@vault_option
@click.option(
    "--from",
    "plugin_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=default_plugin_dir,
    show_default="obsidian-plugin/ of this checkout, else the plugin shipped in the package",
    help="The plugin project folder to install from.",
)
@click.option("--rebuild", is_flag=True, help="Build with npm even when main.js exists.")
@click.option("--enable", is_flag=True, help="Also turn the plugin on in .obsidian/community-plugins.json.")
def install_command(vault: Path, plugin_dir: Path, rebuild: bool, enable: bool) -> None:
    """Copy the built plugin into VAULT/.obsidian/plugins/palinode-vault/ (builds it if needed)."""
    vault = resolve_vault(vault)
    with _writable(vault):
        target = install_plugin(Path(plugin_dir).resolve(), vault, rebuild=rebuild)
        click.echo(f"Installed {', '.join(PLUGIN_FILES)} into {target}")
        if enable and enable_plugin(vault):
            click.echo("Enabled palinode-vault in .obsidian/community-plugins.json")
    click.echo(
        "Next: start the sidecar (`palinode-vault serve --vault "
        f"{vault}`), reload Obsidian and turn on Palinode under Settings → Community plugins."
    )


@contextlib.contextmanager
def _writable(vault: Path):
    """Turns a refused write into one line naming the folder (a read-only vault), not a traceback."""
    try:
        yield
    except PermissionError as exc:
        raise click.ClickException(
            f"cannot write to {exc.filename or vault}: the vault {vault} is read-only ({exc.strerror}); make it writable and run this again"
        ) from None


# ---- init --obsidian ------------------------------------------------------------------------


def hex_to_rgb_int(colour: str) -> int:
    """`#3b82c4` → the integer Obsidian stores in graph.json colour groups."""
    return int(colour.lstrip("#"), 16)


def category_colour_groups() -> list[dict]:
    """One graph.json colour group per category folder, in the kinds table's order."""
    return [
        {"query": f"path:{folder}/", "color": {"a": 1, "rgb": hex_to_rgb_int(CATEGORY_COLOURS[folder])}}
        for folder in CATEGORY_FOLDERS
    ]


def _query_key(query: object) -> str:
    return " ".join(str(query).split()).lower()


def merge_colour_groups(graph: dict, groups: list[dict]) -> tuple[dict, list[str]]:
    """graph.json with `groups` added where no group has the same query yet.

    The person's own groups, their order and colours, and every other key stay as they were.
    Returns the new settings and the queries added.
    """
    existing = graph.get("colorGroups")
    if existing is None:
        existing = []
    if not isinstance(existing, list):
        raise click.ClickException(f"graph.json: colorGroups is a {type(existing).__name__}, expected a list")
    have = {_query_key(g.get("query", "")) for g in existing if isinstance(g, dict)}
    added = [g for g in groups if _query_key(g["query"]) not in have]
    merged = dict(graph)
    merged["colorGroups"] = [*existing, *added]
    return merged, [g["query"] for g in added]


def _read_json(path: Path, default):
    if not path.exists():
        return default
    try:
        return json.loads(path.read_text(encoding="utf-8") or "null") or default
    except json.JSONDecodeError as exc:
        raise click.ClickException(
            f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); fix or remove it, then run this again"
        ) from None


def _write_json(path: Path, data) -> None:
    """Writes JSON atomically (temp file in the same folder, then replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def init_obsidian(vault: Path) -> list[str]:
    """Adds the category colour groups to VAULT/.obsidian/graph.json; returns the queries added."""
    path = vault / ".obsidian" / "graph.json"
    graph = _read_json(path, default={})
    if not isinstance(graph, dict):
        raise click.ClickException(f"{path}: expected a JSON object, found {type(graph).__name__}")
    merged, added = merge_colour_groups(graph, category_colour_groups())
    if added or not path.exists():
        _write_json(path, merged)
    return added


def _report_init(vault: Path, added: list[str]) -> None:
    if added:
        click.echo(f"Added {len(added)} colour group(s) to {vault / '.obsidian' / 'graph.json'}: {', '.join(added)}")
    else:
        click.echo("graph.json already has a colour group for every category; nothing changed")


_OBSIDIAN_HELP = "Add a colour group per category (people, projects, …) to .obsidian/graph.json."

_existing_init = main.commands.get("init")
if _existing_init is None:

    @main.command("init")
    @vault_option
    @click.option("--obsidian", is_flag=True, help=_OBSIDIAN_HELP)
    def init_command(vault: Path, obsidian: bool) -> None:
        """Prepare a vault: with --obsidian, colour Obsidian's graph by category."""
        if not obsidian:
            raise click.UsageError("nothing to do: pass --obsidian to add colour groups to .obsidian/graph.json")
        vault = resolve_vault(vault)
        with _writable(vault):
            _report_init(vault, init_obsidian(vault))

elif not any(p.name == "obsidian" for p in _existing_init.params):
    # Another module already defines `init`: add --obsidian to it rather than replace it.
    _existing_init.params.append(click.Option(["--obsidian"], is_flag=True, help=_OBSIDIAN_HELP))
    _original_init = _existing_init.callback

    def _init_with_obsidian(*args, obsidian: bool = False, **kwargs):
        result = _original_init(*args, **kwargs) if _original_init else None
        if obsidian:
            vault = resolve_vault(kwargs.get("vault") or Path.cwd())
            with _writable(vault):
                _report_init(vault, init_obsidian(vault))
        return result

    _existing_init.callback = _init_with_obsidian
