"""Which models this machine has: for `models list`, `models prepare` and `status`.

Looking is cheap: no model is loaded, a GGUF's dimensions come from its header.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from palinode_vault.models.convert import ensure_minilm_gguf, minilm_gguf_path
from palinode_vault.models.errors import ModelUnavailable
from palinode_vault.models.header import embedding_length
from palinode_vault.models.packaged import GEMMA3_270M, MINILM_ZIP, SMOLLM2_GGUF

DEFAULT_EMBEDDING_NAME = "all-MiniLM-L6-v2"
DEFAULT_GENERATION_NAME = "smollm2"


@dataclass
class ModelInfo:
    """One model as `models list` shows it."""

    name: str
    role: str  # "embedding" or "generation"
    path: str | None
    present: bool
    size: int | None = None  # bytes
    dimensions: int | None = None
    source: str = ""
    problem: str | None = None  # why it is not usable, and the fix
    engine: str | None = None  # embedding: what runs bulk calls, and why (queries: llama.cpp)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def list_models(
    embedding_model: str | os.PathLike[str] | None = None, generation_model: str | os.PathLike[str] | None = None
) -> list[ModelInfo]:
    """Describe the embedding and generation models in use (defaults when None)."""
    infos = [_embedding_info(embedding_model), _generation_info(generation_model)]
    if infos[0].present and infos[0].path:
        infos[0].engine = bulk_engine(Path(infos[0].path))
    if importlib.util.find_spec("llama_cpp") is None:
        for info in infos:
            if info.present and info.problem is None and info.path is not None:
                info.problem = (
                    "llama-cpp-python is not installed, so this model cannot run. Fix: pip install 'palinode-vault[models]'"
                )
    return infos


def bulk_engine(gguf: Path) -> str:
    """What embeds in bulk with `gguf` here (models/embedder.py chooses the same way)."""
    from palinode_vault.models.embedder import ENGINE_VARIABLE, ENGINES, wanted_engine

    wanted = wanted_engine()
    if wanted not in ENGINES:
        return f"none: {ENGINE_VARIABLE}={wanted!r} is not one of {', '.join(ENGINES)}"
    if wanted == "llama.cpp":
        return f"llama.cpp ({ENGINE_VARIABLE})"
    from palinode_vault.models.openvino_bert import bert_layout, cpu_precision, import_openvino

    try:
        ov = import_openvino()
        if bert_layout(gguf) is None:
            return "llama.cpp (OpenVINO runs BERT models with mean pooling and f32/f16 weights only)"
        precision = cpu_precision(ov.Core())
    except Exception as exc:  # noqa: BLE001 - reported, llama.cpp does the work
        return f"llama.cpp ({exc})"
    return f"openvino ({precision}) for bulk embedding, llama.cpp for queries"


def prepare_models(
    embedding_model: str | os.PathLike[str] | None = None, generation_model: str | os.PathLike[str] | None = None
) -> list[ModelInfo]:
    """Make the models ready (convert the default embedding model once), then describe them.

    Idempotent: a second call finds the converted file and does nothing. Problems are
    reported in each ModelInfo's `problem`, not raised.
    """
    if not embedding_model:
        try:
            ensure_minilm_gguf()
        except ModelUnavailable:
            pass  # reported by list_models below, with the fix
    if str(generation_model or "") == "gemma3-270m":
        try:
            GEMMA3_270M.locate()  # joins the chunk packages once
        except ModelUnavailable:
            pass  # reported by list_models below, with the fix
    return list_models(embedding_model, generation_model)


def _embedding_info(spec: str | os.PathLike[str] | None) -> ModelInfo:
    if spec:
        return _file_info(Path(spec).expanduser(), Path(spec).name, "embedding", "settings")
    target = minilm_gguf_path()
    if target.is_file():
        info = _file_info(
            target, DEFAULT_EMBEDDING_NAME, "embedding", f"converted from the PyPI package {MINILM_ZIP.distribution}"
        )
        return info
    info = ModelInfo(
        DEFAULT_EMBEDDING_NAME,
        "embedding",
        str(target),
        present=False,
        dimensions=384,
        source=f"converted from the PyPI package {MINILM_ZIP.distribution}",
    )
    try:
        MINILM_ZIP.locate()
    except ModelUnavailable as exc:
        info.problem = str(exc)
    else:
        info.problem = "not converted yet. Fix: palinode-vault models prepare"
    return info


def _generation_info(spec: str | os.PathLike[str] | None) -> ModelInfo:
    from palinode_vault.models.generator import DEFAULT_GENERATOR, generator_names

    key = str(spec) if spec else DEFAULT_GENERATOR
    if key == DEFAULT_GENERATION_NAME:
        source = f"the PyPI package {SMOLLM2_GGUF.distribution}"
        try:
            path = SMOLLM2_GGUF.locate()
        except ModelUnavailable as exc:
            return ModelInfo(key, "generation", None, present=False, source=source, problem=str(exc))
        info = _file_info(path, key, "generation", source)
        info.dimensions = None  # a chat model's hidden size is not a vector size we use
        return info
    if key == "gemma3-270m":
        source = f"assembled from the PyPI package {GEMMA3_270M.distribution}"
        path = GEMMA3_270M.cached()
        if path.is_file():
            info = _file_info(path, key, "generation", source)
            info.dimensions = None
            return info
        problem = (
            f"installed, not assembled yet. Fix: palinode-vault models prepare --generation-model {key}"
            if GEMMA3_270M.installed()
            else f"not installed. Fix: {GEMMA3_270M.install_hint}"
        )
        return ModelInfo(key, "generation", str(path), present=False, source=source, problem=problem)
    if key in generator_names():
        return ModelInfo(key, "generation", None, present=True, source="built in")
    info = _file_info(Path(key).expanduser(), Path(key).name, "generation", "settings")
    info.dimensions = None
    return info


def _file_info(path: Path, name: str, role: str, source: str) -> ModelInfo:
    if not path.is_file():
        return ModelInfo(
            name,
            role,
            str(path),
            present=False,
            source=source,
            problem=f"file not found: {path}. Fix: correct the {role} model path in the settings",
        )
    return ModelInfo(
        name, role, str(path), present=True, size=path.stat().st_size, dimensions=embedding_length(path), source=source
    )
