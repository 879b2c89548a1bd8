"""The embedding model the index uses, loaded only when something must be embedded.

The model's identity (file name and SHA-256, dimensions) comes from the file itself, so an
unchanged vault is re-indexed, and a changed model detected, without loading llama.cpp.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol, cast

from palinode_vault.models.errors import ModelUnavailable


class TextEmbedder(Protocol):
    """What the index needs from an embedder (`palinode_vault.models.Embedder` is one)."""

    model_id: str
    dimensions: int

    def embed(self, text: str) -> Any: ...

    def embed_many(self, texts: list[str], batch_size: int | None = None) -> Any: ...


class ModelSlot:
    """One embedding model for an index: its identity cheaply, the loaded model on demand.

    `path` None means the default MiniLM (converted from its PyPI package). `embedder`
    supplies an already loaded model instead (tests, the sidecar sharing one model).
    Failures are remembered: `reason` says why the index is keyword-only.
    """

    def __init__(self, path: str | Path | None = None, embedder: TextEmbedder | None = None) -> None:
        self.path = Path(path).expanduser() if path else None
        self._embedder = embedder
        self._lock = threading.Lock()
        self.reason: str | None = None  # why no model is usable (with the fix), else None
        self._identity: tuple[str, int] | None = None
        if embedder is not None:
            self._identity = (embedder.model_id, int(embedder.dimensions))

    def identity(self) -> tuple[str, int] | None:
        """(model id, dimensions) without loading the model; None when no model is usable."""
        if self._identity is not None or self.reason is not None:
            return self._identity
        try:
            from palinode_vault.models.backend import import_llama_cpp
            from palinode_vault.models.convert import ensure_minilm_gguf
            from palinode_vault.models.hashing import file_sha256
            from palinode_vault.models.header import embedding_length

            import_llama_cpp()
            path = self.path or ensure_minilm_gguf()
            if not path.is_file():
                raise ModelUnavailable(
                    f"embedding model file {path} does not exist",
                    fix="correct the embedding model path in the settings, or "
                    "leave it empty to use the default (palinode-vault models prepare)",
                )
            try:
                dims = int(embedding_length(path) or 0)
            except (OSError, ValueError) as exc:
                raise ModelUnavailable(f"{path} is not a GGUF file ({exc})", fix="choose a GGUF embedding model") from exc
            if not dims:
                raise ModelUnavailable(f"{path.name} does not say its embedding length", fix="choose a GGUF embedding model")
            self._identity = (f"{path.name}:{file_sha256(path)}", dims)
        except ModelUnavailable as exc:
            self.reason = str(exc)
        except Exception as exc:  # noqa: BLE001 - any failure means keyword-only, with the reason
            self.reason = f"the embedding model cannot be used: {exc}"
        return self._identity

    @property
    def available(self) -> bool:
        """True when a model can be loaded (checked cheaply; loading may still fail)."""
        return self.identity() is not None

    def get(self) -> TextEmbedder:
        """The loaded model; raises ModelUnavailable (and remembers why) when it cannot load."""
        with self._lock:
            if self._embedder is not None:
                return self._embedder
            if self.identity() is None:
                raise ModelUnavailable(self.reason or "no embedding model")
            from palinode_vault.models.embedder import Embedder

            try:
                loaded = cast(TextEmbedder, Embedder(self.path))
            except ModelUnavailable as exc:
                self.reason = str(exc)
                self._identity = None
                raise
            except Exception as exc:  # noqa: BLE001
                self.reason = f"loading the embedding model failed: {exc}"
                self._identity = None
                raise ModelUnavailable(self.reason) from exc
            self._embedder = loaded
            self._identity = (loaded.model_id, int(loaded.dimensions))
            return loaded

    @property
    def loaded(self) -> bool:
        return self._embedder is not None
