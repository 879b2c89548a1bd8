"""JSON generation through an OpenAI-compatible chat server the person runs (Ollama, LM Studio,
llama.cpp's `llama-server`, llama-cpp-python's `llama_cpp.server`, vLLM).

The in-process GGUF stays the offline default; a server is for the person who has a capable model
at hand (PROGRAM.md `generation.model_server`, or `extract --model-server URL --model NAME`). The
same contract as every generator (generator.py): `generate_json(system, user, schema, max_tokens)`
answers `(dict | None, finish_reason)`, and the caller validates the dict against its pydantic
model whatever the server claims to have enforced.

Constrained output where the server supports it: `response_format` of type `json_schema` first
(vLLM, LM Studio, Ollama, llama-server), then `json_object` with the schema (llama-cpp-python's
server), then plain text with the schema in the prompt. A format the server refuses (HTTP 400/422)
(or an error naming `response_format`) moves to the next one, once per generator. Only the standard library talks HTTP, and only to the
URL the person named: no redirects followed, no other host.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from palinode_vault.models.contract import SEED, Result, check_bounded, parse_object
from palinode_vault.models.errors import ModelUnavailable

DEFAULT_TIMEOUT = 120.0  # seconds for one answer: a CPU-only 3B model needs tens of seconds
API_KEY_VARIABLE = "PALINODE_MODEL_SERVER_KEY"  # sent as a bearer token when set (vLLM --api-key)
#: response_format modes, most constrained first; None is plain text
FORMATS = ("json_schema", "json_object", None)
_MAX_BODY = 4 * 1024 * 1024  # a chat answer is a few KB; more is not a chat server


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:  # never leave the named URL
        return None


_OPENER = urllib.request.build_opener(_NoRedirect, urllib.request.ProxyHandler({}))


def base_url(url: str) -> str:
    """The server's API root ending in `/v1`: `http://host:port`, `…/v1` and `…/v1/` all name it.

    Raises ModelUnavailable for anything but an http(s) URL with a host.
    """
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelUnavailable(
            f"model server {url!r} is not an http(s) URL",
            fix="give the server's address, e.g. http://127.0.0.1:11434/v1 (Ollama)",
        )
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        path = path[: -len("/chat/completions")]
    if not path.endswith("/v1"):
        path += "/v1"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


class ChatServerGenerator:
    """A chat model behind an OpenAI-compatible `/v1/chat/completions` endpoint."""

    def __init__(
        self, url: str, *, model: str | None = None, timeout: float = DEFAULT_TIMEOUT, seed: int = SEED, **_ignored: Any
    ) -> None:
        """`model` is the server's name for it (`qwen2.5:3b` in Ollama); None asks the server for
        the first model it lists. Options of the in-process model (n_ctx, threads) are ignored:
        the server has its own."""
        self.url = base_url(url)
        self.timeout = float(timeout)
        self.seed = seed
        self._model = model or None
        self._formats = list(FORMATS)
        self.format_used: str | None = None  # the response_format the last answer came under
        self.name = f"{self.url}#{model}" if model else self.url

    @property
    def model(self) -> str:
        """The server's model name (asked once from `/v1/models` when none was given)."""
        if self._model is None:
            listed = self._request("GET", "/models").get("data") or []
            ids = [m.get("id") for m in listed if isinstance(m, dict) and isinstance(m.get("id"), str)]
            if not ids:
                raise ModelUnavailable(
                    f"model server {self.url} lists no models", fix="load a model in the server, or name one with --model"
                )
            self._model = str(ids[0])
        return str(self._model)

    @property
    def model_id(self) -> str:
        """`<model name>@<server>`: what answered, for logs and caches."""
        return f"{self.model}@{self.url}"

    def generate_json(self, system: str, user: str, schema: dict[str, Any], max_tokens: int = 512) -> Result:
        """Answer with a dict (see the module docstring), or (None, reason): "length",
        "invalid_json", "not_object", "no_answer". Raises ModelUnavailable when the server is away,
        times out, or refuses every format; ValueError for an unbounded schema."""
        check_bounded(schema)  # the same contract as the in-process model
        while True:
            mode = self._formats[0]
            body = self._body(system, user, schema, max_tokens, mode)
            try:
                response = self._request("POST", "/chat/completions", body)
            except _Refused as refused:
                if len(self._formats) == 1:
                    raise ModelUnavailable(
                        f"model server {self.url} refused the request: {refused}",
                        fix="check the model name (--model) and the server's log",
                    ) from None
                self._formats.pop(0)  # the server does not know this format: the next one
                continue
            self.format_used = mode or "plain"
            return _answer(response)

    def _body(self, system: str, user: str, schema: dict[str, Any], max_tokens: int, mode: str | None) -> dict[str, Any]:
        if mode is None:  # no constraint: the schema goes into the prompt, the caller validates
            system = f"{system}\n\nAnswer with one JSON object only, matching this JSON schema:\n{json.dumps(schema)}"
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0.0,
            "top_p": 1.0,
            "seed": self.seed,
            "max_tokens": max_tokens,
            "stream": False,
        }
        if mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object", "schema": schema}
        return body

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        key = os.environ.get(API_KEY_VARIABLE)
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        where = f"model server {self.url}"
        try:
            with _OPENER.open(request, timeout=self.timeout) as reply:
                raw = reply.read(_MAX_BODY + 1)
        except urllib.error.HTTPError as exc:
            detail = _error_text(exc)
            # a body the server does not accept: HTTP 400/422, or (llama-cpp-python's server) a 500
            # whose message names the response_format it does not know
            if path == "/chat/completions" and (exc.code in (400, 422) or "response_format" in detail):
                raise _Refused(f"HTTP {exc.code}: {detail}") from None
            if exc.code in (401, 403):
                raise ModelUnavailable(
                    f"{where} refused access (HTTP {exc.code}: {detail})", fix=f"set {API_KEY_VARIABLE} to the server's API key"
                ) from None
            if exc.code == 404:
                raise ModelUnavailable(
                    f"{where} has no {path} (HTTP 404: {detail})",
                    fix="give the OpenAI-compatible API's address (it ends in /v1), and a model the server has",
                ) from None
            raise ModelUnavailable(f"{where} answered HTTP {exc.code}: {detail}", fix="see the server's log") from None
        except TimeoutError:
            raise ModelUnavailable(
                f"{where} did not answer within {self.timeout:g} s",
                fix="use a smaller model, or raise generation.timeout_seconds in PROGRAM.md",
            ) from None
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise ModelUnavailable(
                    f"{where} did not answer within {self.timeout:g} s",
                    fix="use a smaller model, or raise generation.timeout_seconds in PROGRAM.md",
                ) from None
            raise ModelUnavailable(
                f"{where} is not answering ({reason})",
                fix="start the server (ollama serve, lms server start, llama-server ...) "
                "or correct the address; without one, leave it out to use the "
                "in-process model",
            ) from None
        if len(raw) > _MAX_BODY:
            raise ModelUnavailable(f"{where} sent more than {_MAX_BODY} bytes", fix="is this a chat server?")
        try:
            value = json.loads(raw)
        except ValueError:
            raise ModelUnavailable(f"{where} did not answer with JSON", fix="is this an OpenAI-compatible API?") from None
        if not isinstance(value, dict):
            raise ModelUnavailable(
                f"{where} answered something other than a JSON object", fix="is this an OpenAI-compatible API?"
            )
        return value

    def close(self) -> None:
        """Nothing to free: the server keeps its model."""


class _Refused(Exception):
    """The server rejected the request's body (most likely its response_format)."""


def _error_text(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read(2000).decode("utf-8", "replace")
    except OSError:
        return exc.reason or ""
    return " ".join(text.split())[:300]


def _answer(response: dict[str, Any]) -> Result:
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None, "no_answer"
    choice = choices[0]
    if choice.get("finish_reason") == "length":
        return None, "length"
    message = choice["message"] if isinstance(choice.get("message"), dict) else {}
    content = message.get("content")
    if not isinstance(content, str):
        return None, "no_answer"
    return parse_object(_json_part(content), "stop")


def _json_part(text: str) -> str:
    """The JSON object in a plain answer: models wrap it in ```json fences or a sentence."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text
