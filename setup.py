"""Ships the built Obsidian plugin inside the wheel, and compiles the parser's hot modules
where it can (everything else is in pyproject.toml).

`palinode-vault plugin install` must work after a plain `pip install` of the wheel, where there is
no obsidian-plugin/ checkout: build_py copies obsidian-plugin/{main.js,manifest.json,styles.css}
into palinode_vault/obsidian_plugin/ of the build, building main.js with npm first when it is
missing (a wheel without the plugin is refused rather than shipped silently broken).

Every build, an editable install too, compiles the line scanner's C version
(`core/_line_scan.c`, a module of its own name that shadows nothing) where a C compiler works. A
wheel build (and `setup.py build_ext`) also compiles `COMPILED` with mypyc, from the same .py
files, when mypyc is there. Where the compiler or mypyc is missing or the build fails, it says so
in one line and the package stays pure Python (docs/ARCHITECTURE.md, "Compiled modules"). An
editable install never runs mypyc: a compiled module left in the checkout would shadow the .py
being edited. PALINODE_PURE_PYTHON=1 skips compiling.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
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


# The per-line and per-link work of a cold scan (docs/BENCHMARKS.md, "Session 11").
COMPILED = [
    "palinode_vault/core/line_scan.py",
    "palinode_vault/core/note.py",
    "palinode_vault/core/resolve.py",
    "palinode_vault/core/vault_state.py",
]


def _note(message: str) -> None:
    print(f"palinode-vault: {message}; the package stays pure Python (same behaviour, slower cold scans)", file=sys.stderr)


WHEEL_BUILDS = ("bdist_wheel", "build_ext", "build")  # commands that compile (not sdist, egg_info)
EDITABLE_BUILDS = ("editable_wheel", "develop")  # an editable install: the C scanner only


def _compiling(commands: tuple[str, ...]) -> bool:
    """Whether this run of setup.py is one of `commands` and compiling is not switched off."""
    return os.environ.get("PALINODE_PURE_PYTHON") != "1" and any(command in sys.argv for command in commands)


def c_extensions() -> list:
    """The line scanner in C (core/_line_scan.c), for every build that compiles anything."""
    if not _compiling(WHEEL_BUILDS + EDITABLE_BUILDS):
        return []
    return [Extension("palinode_vault.core._line_scan", ["palinode_vault/core/_line_scan.c"])]


def compiled_extensions() -> list:
    """mypyc's extensions for `COMPILED`, or none (with a note saying why)."""
    if not _compiling(WHEEL_BUILDS):
        return []  # sdist, egg_info, an editable install: nothing for mypyc
    try:
        from mypyc.build import mypycify
    except ImportError:
        _note("mypyc is not installed, nothing compiled")
        return []
    try:
        return mypycify(COMPILED, opt_level="3", group_name="palinode_vault")
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a type error under another mypy, say
        _note(f"mypyc could not translate the modules ({exc})")
        return []


class build_ext_if_possible(build_ext):
    """Compile where a C compiler works; otherwise leave the .py modules to be used."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - no compiler (Windows without MSVC), headers missing...
            _note(f"the C build failed ({exc})")
            self.extensions = []


setup(
    cmdclass={"build_py": build_py_with_plugin, "build_ext": build_ext_if_possible},
    ext_modules=c_extensions() + compiled_extensions(),
)
