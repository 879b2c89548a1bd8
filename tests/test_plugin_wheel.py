"""The wheel ships the built Obsidian plugin: `plugin install` works from a plain wheel install,
with no obsidian-plugin/ checkout beside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ASSETS = ("main.js", "manifest.json", "styles.css")
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if not (REPO / "obsidian-plugin" / "main.js").is_file() and not (REPO / "obsidian-plugin" / "node_modules").is_dir():
        pytest.skip("the plugin is not built and its node modules are not installed (scripts/setup without PALINODE_SKIP_PLUGIN)")
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(REPO)],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(build)},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    wheels = list(out.glob("palinode_vault-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


def test_the_wheel_carries_the_built_plugin_and_the_license(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    for asset in ASSETS:
        assert f"palinode_vault/obsidian_plugin/{asset}" in names
    assert "palinode_vault/PROGRAM.md" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names), sorted(names)[:20]
    shipped = json.loads(zipfile.ZipFile(wheel).read("palinode_vault/obsidian_plugin/manifest.json"))
    assert shipped == json.loads((REPO / "obsidian-plugin" / "manifest.json").read_text())
    main_js = zipfile.ZipFile(wheel).read("palinode_vault/obsidian_plugin/main.js")
    assert len(main_js) > 10_000 and b"palinode" in main_js


def test_plugin_install_works_from_the_installed_wheel(wheel: Path, tmp_path: Path):
    target = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    vault = tmp_path / "vault"
    vault.mkdir()
    # The wheel's package first on the path (its dependencies come from this environment), run
    # from a folder with no checkout around it.
    code = (
        "import sys; sys.path.insert(0, sys.argv.pop(1)); import palinode_vault; "
        "print('PKG', palinode_vault.__file__, file=sys.stderr); "
        "from palinode_vault.cli import main; main()"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(target), "plugin", "install", "--vault", str(vault), "--enable"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"PKG {target}" in run.stderr
    installed = vault / ".obsidian" / "plugins" / "palinode-vault"
    for asset in ASSETS:
        assert (installed / asset).read_bytes() == zipfile.ZipFile(wheel).read(f"palinode_vault/obsidian_plugin/{asset}")
    assert json.loads((vault / ".obsidian" / "community-plugins.json").read_text()) == ["palinode-vault"]


def test_root_manifest_and_versions_equal_the_plugins():
    for name in ("manifest.json", "versions.json"):
        assert json.loads((REPO / name).read_text()) == json.loads((REPO / "obsidian-plugin" / name).read_text()), name
    manifest = json.loads((REPO / "manifest.json").read_text())
    assert json.loads((REPO / "versions.json").read_text())[manifest["version"]] == manifest["minAppVersion"]
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
