"""Local models on llama.cpp: embeddings and JSON generation, offline, from GGUF files.

The defaults come from PyPI packages (no model hub is ever contacted):
all-MiniLM-L6-v2 for embeddings (converted once to GGUF into the cache folder) and
SmolLM2-135M-Instruct for generation. Any GGUF path replaces either.

Importing this package is cheap: llama-cpp-python, numpy and gguf are imported only
when a model is converted or loaded.
"""

from palinode_vault.models.catalog import ModelInfo, list_models, prepare_models
from palinode_vault.models.contract import Generator, check_bounded, unbounded_parts
from palinode_vault.models.convert import ensure_minilm_gguf, minilm_gguf_path
from palinode_vault.models.embedder import Embedder
from palinode_vault.models.errors import ModelUnavailable
from palinode_vault.models.generator import LlamaGenerator, ScriptedGenerator, get_generator, register_generator
from palinode_vault.models.packaged import cache_dir

__all__ = [
    "Embedder",
    "Generator",
    "LlamaGenerator",
    "ModelInfo",
    "ModelUnavailable",
    "ScriptedGenerator",
    "cache_dir",
    "check_bounded",
    "ensure_minilm_gguf",
    "get_generator",
    "list_models",
    "minilm_gguf_path",
    "prepare_models",
    "register_generator",
    "unbounded_parts",
]
