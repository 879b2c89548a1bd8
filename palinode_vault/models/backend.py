"""Loading GGUF files with llama-cpp-python: the import, and one workaround.

The workaround: on CPUs with Intel AMX (Sapphire Rapids and later Xeons), llama.cpp's
AMX weight-repacking path kills the process (SIGILL at a tile load in
ggml_backend_amx_mul_mat, seen with llama-cpp-python 0.3.36) on the first decode of a
quantised model: SmolLM2's Q4_1, a q8_0 MiniLM. The CPU's AMX itself works
(bench/amx_probe.c loads every tile with llama.cpp's configuration); the fault is
llama.cpp's, whose tile configuration can reach `ldtilecfg` garbled (an open upstream pull
request moves it out of the stack for that reason). llama-cpp-python does not expose the
model parameter that turns repacking off (`use_extra_bufts`), so models are loaded with
llama.cpp's defaults patched for the duration of the constructor. The cost is the speed-up
repacking gives some quantised models; a crash that takes the sidecar down is worse.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from palinode_vault.models.errors import ModelUnavailable

_LOAD_LOCK = threading.Lock()


def import_llama_cpp() -> Any:
    """Import llama_cpp, or raise ModelUnavailable saying how to install it."""
    try:
        import llama_cpp
        import llama_cpp._internals
        import llama_cpp.llama
        import llama_cpp.llama_chat_format
    except ImportError as exc:
        raise ModelUnavailable(
            "llama-cpp-python is not installed, so local models cannot run (search stays keyword-only)",
            fix="pip install 'palinode-vault[models]' (compiles llama.cpp, a few minutes)",
        ) from exc
    # With verbose=False, Llama() silences llama.cpp by pointing file descriptors 1 and 2 at
    # /dev/null while it loads: process-wide, so whatever another thread prints meanwhile is
    # lost (the sidecar's "listening on ..." banner, seen as a test that waited for it in
    # vain). llama.cpp's messages already go through llama-cpp-python's logger, which
    # verbose=False sets to errors only; the redirection is not needed.
    for module in (llama_cpp.llama, llama_cpp._internals, llama_cpp.llama_chat_format):
        module.suppress_stdout_stderr = _no_redirect  # type: ignore[attr-defined]  # not in every module's stubs
    _quiet_llama_log(llama_cpp)
    return llama_cpp


_LOG_CALLBACK: Any = None  # kept referenced: llama.cpp holds a raw pointer to it


def _quiet_llama_log(llama_cpp: Any) -> None:
    """Send llama.cpp's own errors to our debug log instead of stderr. (llama-cpp-python's
    default callback prints level-0 and "continue" lines unconditionally; failures that
    matter surface as exceptions from the constructor, which we turn into ModelUnavailable.)"""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return
    import logging

    log = logging.getLogger("palinode_vault.llama")

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: Any) -> None:
        if level == 3:  # GGML_LOG_LEVEL_ERROR
            log.debug("llama.cpp: %s", text.decode("utf-8", "replace").rstrip())

    _LOG_CALLBACK = callback
    llama_cpp.llama_log_set(callback, None)


class _no_redirect:
    def __init__(self, disable: bool = True):
        pass

    def __enter__(self) -> _no_redirect:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def default_threads() -> int:
    """Half the CPUs, at most 4: llama.cpp's threads spin while they wait for each other,
    so using every core collapses throughput as soon as anything else runs (measured on
    2 cores: one thread 27 texts/s steady; two threads 42 texts/s alone but 8-11 beside
    another busy process), and the sidecar runs beside Obsidian."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


def load_llama(model_path: str, *, role: str, repack: bool = False, **params: Any) -> Any:
    """Construct `llama_cpp.Llama(model_path, **params)` without weight repacking (unless
    `repack`: benchmarks of quantised embedding models on CPUs without AMX).

    `role` ("embedding" or "generation") only names the model in error messages.
    Raises ModelUnavailable when llama.cpp cannot load the file.
    """
    llama_cpp = import_llama_cpp()
    low = llama_cpp.llama_cpp
    with _LOAD_LOCK:
        original = low.llama_model_default_params

        def without_repacking() -> Any:
            defaults = original()
            if hasattr(defaults, "use_extra_bufts"):
                defaults.use_extra_bufts = repack
            return defaults

        low.llama_model_default_params = without_repacking
        try:
            return llama_cpp.Llama(model_path=model_path, verbose=False, **params)
        except (ValueError, RuntimeError) as exc:
            raise ModelUnavailable(
                f"llama.cpp could not load the {role} model {model_path}: {exc}",
                fix=f"check that the file is a complete GGUF {role} model",
            ) from exc
        finally:
            low.llama_model_default_params = original
