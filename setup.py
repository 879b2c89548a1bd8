"""Ships the built Obsidian plugin inside the wheel (everything else is in pyproject.toml).

`palinode-vault plugin install` must work after a plain `pip install` of the wheel, where there is
no obsidian-plugin/ checkout: build_py copies obsidian-plugin/{main.js,manifest.json,styles.css}
into palinode_vault/obsidian_plugin/ of the build, building main.js with npm first when it is
missing (a wheel without the plugin is refused rather than shipped silently broken).
"""

import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PLUGIN = HERE / "obsidian-plugin"
ASSETS = ("main.js", "manifest.json", "styles.css")


class build_py_with_plugin(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return  # an editable install uses the checkout's obsidian-plugin/ directly
        if not (PLUGIN / "main.js").is_file():
            npm = shutil.which("npm")
            if npm is None or not (PLUGIN / "package.json").is_file():
                raise SystemExit(f"{PLUGIN / 'main.js'} is not built and npm is not available: run scripts/release-plugin first")
            if not (PLUGIN / "node_modules").is_dir():
                subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=PLUGIN, check=True)
            subprocess.run([npm, "run", "build"], cwd=PLUGIN, check=True)
        target = Path(self.build_lib) / "palinode_vault" / "obsidian_plugin"
        target.mkdir(parents=True, exist_ok=True)
        for name in ASSETS:
            shutil.copyfile(PLUGIN / name, target / name)


setup(cmdclass={"build_py": build_py_with_plugin})
