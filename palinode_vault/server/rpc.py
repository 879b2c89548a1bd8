"""JSON-RPC 2.0: the dispatcher, the error codes of docs/PROTOCOL.md, and the per-connection context.

This module knows nothing about sockets. A `Connection` only needs a coroutine that sends one
text message; the transport supplies it. That keeps the dispatcher testable with a list as
the "socket".
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import itertools
import json
import logging
import math
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from palinode_vault.pathsafe import PathOutsideVault

__all__ = [
    "PARSE_ERROR",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "INVALID_PARAMS",
    "INTERNAL_ERROR",
    "PATH_OUTSIDE_VAULT",
    "NOT_FOUND",
    "CONFLICT",
    "NOT_AVAILABLE",
    "BUSY",
    "PalinodeError",
    "ClientError",
    "ConnectionGone",
    "Connection",
    "Dispatcher",
    "Handler",
    "encode",
]

log = logging.getLogger(__name__)

# Error codes: docs/PROTOCOL.md, "Conventions".
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
PATH_OUTSIDE_VAULT = -32010
NOT_FOUND = -32011
CONFLICT = -32012
NOT_AVAILABLE = -32013
BUSY = -32014

_MAX_MESSAGE_CHARS = 300  # one readable line, never a traceback
#: Requests in one batch; a longer batch is refused whole (-32600) before any member runs.
MAX_BATCH = 100
#: Characters in one answer (a single response or a whole batch). A result past it is answered
#: with BUSY naming the size; batch members after the budget is spent are not run.
MAX_ANSWER_CHARS = 16 * 1024 * 1024
#: Validate every answer against its method's result model (palinode_vault/results.py).
#: The test suite turns it on, so a handler that drifts from the protocol fails a test; off by
#: default because a vault-wide lint answer would be validated for nothing.
CHECK_RESULTS = os.environ.get("PALINODE_CHECK_RESULTS") == "1"


class PalinodeError(Exception):
    """An error a handler raises to answer with one of the protocol's codes.

    `PalinodeError(NOT_FOUND, "people/bob.md does not exist; check the name")`. `data` is
    optional JSON-able detail sent as the error's `data` member.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class ClientError(Exception):
    """The client answered a server-to-client request with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"client refused {method!r}: {message} ({code})")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class ConnectionGone(ConnectionError):
    """The connection closed before the client answered a server-to-client request."""


Send = Callable[[str], Awaitable[None]]
Handler = Callable[[Any, "Connection"], Awaitable[Any]]
_ids = itertools.count(1)


@dataclass(eq=False)
class Connection:
    """One client connection, passed to every handler as its context.

    `id` is a small number for logs; `remote` the peer address; `origin` the Origin header
    (None for non-browser clients); `state` a free dict for per-connection data (for example
    the editor state the plugin reports). `request` and `notify` talk back to this client.
    """

    send: Send
    remote: str = ""
    origin: str | None = None
    id: int = field(default_factory=lambda: next(_ids))
    state: dict[str, Any] = field(default_factory=dict)
    closed: bool = False
    _pending: dict[str, tuple[str, asyncio.Future[Any]]] = field(default_factory=dict, repr=False)
    _request_ids: Any = field(default_factory=lambda: itertools.count(1), repr=False)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (no answer expected) to this client."""
        await self.send(encode_notification(method, params))

    async def request(self, method: str, params: Any = None, timeout: float = 10.0) -> Any:
        """Send a request to this client and return its `result`.

        Raises `TimeoutError` after `timeout` seconds, `ClientError` when the client answers
        with an error, and `ConnectionGone` when the connection closes first.
        """
        if self.closed:
            raise ConnectionGone(f"connection {self.id} is closed; cannot send {method!r}")
        request_id = f"palinode-{next(self._request_ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (method, future)
        try:
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
            if params is not None:
                message["params"] = params
            await self.send(encode(message))
            try:
                return await asyncio.wait_for(future, timeout)
            except TimeoutError:
                raise TimeoutError(f"client on connection {self.id} did not answer {method!r} within {timeout:g} s") from None
        finally:
            self._pending.pop(request_id, None)

    def resolve(self, message: dict[str, Any]) -> bool:
        """Hand a client's response to the waiting `request`; False if no request waits for it."""
        request_id = message.get("id")
        pending = self._pending.get(request_id) if isinstance(request_id, str) else None
        if pending is None or pending[1].done():
            return False
        method, future = pending
        if "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {}
            future.set_exception(
                ClientError(method, _as_int(error.get("code")), str(error.get("message", "")), error.get("data"))
            )
        else:
            future.set_result(message.get("result"))
        return True

    def close(self) -> None:
        """Mark the connection closed and fail every request still waiting for an answer."""
        self.closed = True
        for method, future in list(self._pending.values()):
            if not future.done():
                future.set_exception(ConnectionGone(f"connection {self.id} closed before the client answered {method!r}"))
        self._pending.clear()


def _as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else INTERNAL_ERROR


@dataclass
class _Method:
    handler: Handler
    params_model: type[BaseModel] | None
    result_model: type[BaseModel] | None = None


def encode_notification(method: str, params: Any = None) -> str:
    """The JSON text of a notification (a request without `id`)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return encode(message)


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response object."""
    error: dict[str, Any] = {"code": code, "message": _one_line(message)}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _error_text(request_id: Any, code: int, message: str, data: Any = None) -> str:
    return encode(error_response(request_id, code, message, data))


_ANSWERS: list[concurrent.futures.ThreadPoolExecutor] = []


def _answer_pool() -> concurrent.futures.ThreadPoolExecutor:
    """Threads that serialise answers (their own, so vault work never queues them)."""
    if not _ANSWERS:
        _ANSWERS.append(concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="palinode-answer"))
    return _ANSWERS[0]


def encode(value: Any) -> str:
    """JSON text for the wire: UTF-8 as is, pydantic models dumped, NaN refused (not JSON)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=_pydantic_default)


def _pydantic_default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= _MAX_MESSAGE_CHARS else line[: _MAX_MESSAGE_CHARS - 1] + "…"


def is_response(message: Any) -> bool:
    """True for a client's answer to a server-to-client request (has `id`, no `method`)."""
    return (
        isinstance(message, dict) and "method" not in message and "id" in message and ("result" in message or "error" in message)
    )


def request_ids(message: Any) -> list[Any]:
    """The ids of the requests (not notifications) in a single message or a batch."""
    items = message if isinstance(message, list) else [message]
    ids = []
    for item in items:
        if isinstance(item, dict) and "id" in item and not is_response(item):
            ids.append(item["id"] if _valid_id(item["id"]) else None)
    return ids


def _valid_id(value: Any) -> bool:
    """A string, a number that JSON can carry back (not NaN, not infinite: `1e400` decodes as
    infinity and could never be answered) or null."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, int)) and not isinstance(value, bool)


class Dispatcher:
    """Maps method names to async handlers and turns JSON-RPC messages into responses.

    Register a handler: `dispatcher.register("note.info", note_info, NoteInfoParams)` where
    `async def note_info(params: NoteInfoParams, conn: Connection) -> dict`. Without a model
    the handler gets the params object as a dict (`{}` when absent). A handler returns a
    JSON-able value or a pydantic model, and raises `PalinodeError` for the protocol's codes;
    `PathOutsideVault` becomes -32010 and any other exception -32603.
    """

    def __init__(self) -> None:
        self._methods: dict[str, _Method] = {}

    def register(
        self,
        name: str,
        handler: Handler,
        params_model: type[BaseModel] | None = None,
        result_model: type[BaseModel] | None = None,
    ) -> None:
        """Register `handler` for method `name`, replacing any earlier one. `result_model` states
        what it answers (scripts/gen_protocol.py; checked with PALINODE_CHECK_RESULTS=1)."""
        if not inspect.iscoroutinefunction(handler) and not inspect.iscoroutinefunction(
            getattr(handler, "__call__", None)  # noqa: B004 - an object whose __call__ is async
        ):
            raise TypeError(f"handler for {name!r} must be an async function")
        self._methods[name] = _Method(handler, params_model, result_model)

    def method(
        self, name: str, params_model: type[BaseModel] | None = None, result_model: type[BaseModel] | None = None
    ) -> Callable[[Handler], Handler]:
        """Decorator form of `register`."""

        def decorate(handler: Handler) -> Handler:
            self.register(name, handler, params_model, result_model)
            return handler

        return decorate

    def register_unavailable(self, name: str, message: str) -> None:
        """Register a method of a later milestone: it answers -32013 with `message`."""

        async def unavailable(params: Any, conn: Connection) -> Any:
            raise PalinodeError(NOT_AVAILABLE, message)

        self.register(name, unavailable)

    def params_models(self) -> dict[str, type[BaseModel] | None]:
        """Each registered method's params model (None: it takes any params); scripts/gen_protocol.py."""
        return {name: method.params_model for name, method in self._methods.items()}

    def result_models(self) -> dict[str, type[BaseModel] | None]:
        """Each registered method's result model (None: not stated); scripts/gen_protocol.py."""
        return {name: method.result_model for name, method in self._methods.items()}

    @property
    def methods(self) -> list[str]:
        """The registered method names, sorted."""
        return sorted(self._methods)

    async def handle_text(self, text: str | bytes, conn: Connection) -> str | None:
        """Answer one raw message; None when nothing is to be sent (notifications only)."""
        try:
            message = decode(text)
        except ValueError as exc:
            return encode(error_response(None, PARSE_ERROR, str(exc)))
        return await self.handle(message, conn)

    async def handle(self, message: Any, conn: Connection) -> str | None:
        """Answer a decoded message (a request, a notification or a batch) with response text.

        Returns None when no response is due (notifications only). Batch members run one
        after another, so a batch holds one slot of the connection's in-flight limit however
        long it is.
        """
        if isinstance(message, list):
            if not message:
                return encode(error_response(None, INVALID_REQUEST, "empty batch: send at least one request"))
            if len(message) > MAX_BATCH:
                return encode(
                    error_response(None, INVALID_REQUEST, f"batch of {len(message)} requests; send at most {MAX_BATCH} at once")
                )
            responses = []
            budget = MAX_ANSWER_CHARS
            for item in message:
                if budget <= 0:
                    if isinstance(item, dict) and "id" in item and _valid_id(item.get("id")):
                        responses.append(
                            _error_text(
                                item["id"],
                                BUSY,
                                f"not run: the batch's answer is already over {MAX_ANSWER_CHARS} characters; send it in parts",
                            )
                        )
                    continue
                response, cut = await self._answer_one(item, conn, budget)
                if response is not None:
                    responses.append(response)
                    budget = 0 if cut else budget - len(response)  # after a cut answer, nothing more runs
            return "[" + ", ".join(responses) + "]" if responses else None
        return await self._handle_one(message, conn)

    async def _handle_one(self, message: Any, conn: Connection) -> str | None:
        return (await self._answer_one(message, conn, MAX_ANSWER_CHARS))[0]

    async def _answer_one(self, message: Any, conn: Connection, budget: int) -> tuple[str | None, bool]:
        """(response text or None, whether the result was refused for its size)."""
        answer = await self._run_one(message, conn)
        if isinstance(answer, tuple):
            request_id, method_name, result_text = answer
            if len(result_text) > budget:
                return _error_text(
                    request_id,
                    BUSY,
                    f"{method_name}: the answer is {len(result_text)} characters, "
                    f"over the {budget} this message may still carry; ask for less "
                    "(a smaller limit, fewer paths)",
                ), True
            return f'{{"jsonrpc": "2.0", "id": {encode(request_id)}, "result": {result_text}}}', False
        return answer, False

    async def _run_one(self, message: Any, conn: Connection) -> str | tuple[Any, str, str] | None:
        if not isinstance(message, dict):
            return _error_text(None, INVALID_REQUEST, f"a request must be a JSON object, got {_json_type(message)}")
        has_id = "id" in message
        request_id = message.get("id")
        if has_id and not _valid_id(request_id):
            return _error_text(None, INVALID_REQUEST, "'id' must be a string, a number or null")
        if message.get("jsonrpc") != "2.0":
            return _error_text(request_id, INVALID_REQUEST, "'jsonrpc' must be \"2.0\"")
        method_name = message.get("method")
        if not isinstance(method_name, str):
            return _error_text(request_id, INVALID_REQUEST, "'method' must be a string")
        params = message.get("params", {})
        if not isinstance(params, (dict, list)):
            return _error_text(request_id, INVALID_REQUEST, "'params' must be an object")

        try:
            result = await self._call(method_name, params, conn)
        except PalinodeError as exc:
            if not has_id:
                log.info("notification %s failed: %s", method_name, exc.message)
                return None
            return _error_text(request_id, exc.code, exc.message, exc.data)
        if not has_id:
            return None
        try:
            # serialised once, straight into the response, off the event loop: a large answer
            # must not hold up /health, handshakes and the other connections
            result_text = await asyncio.get_running_loop().run_in_executor(_answer_pool(), encode, result)
        except (TypeError, ValueError) as exc:
            log.error("method %s returned a result that is not JSON: %s", method_name, exc)
            return _error_text(request_id, INTERNAL_ERROR, f"{method_name}: result is not JSON ({exc})")
        return request_id, method_name, result_text

    async def _call(self, name: str, params: Any, conn: Connection) -> Any:
        """Validate and run one method; every failure becomes a `PalinodeError`."""
        method = self._methods.get(name)
        if method is None:
            raise PalinodeError(METHOD_NOT_FOUND, f"method {name!r} not found; known methods: {', '.join(self.methods)}")
        if isinstance(params, list):
            raise PalinodeError(INVALID_PARAMS, f"{name}: params must be an object with named members, not an array")
        value: Any = params
        if method.params_model is not None:
            try:
                value = method.params_model.model_validate(params)
            except ValidationError as exc:
                raise _params_error(name, exc) from None
        try:
            result = await method.handler(value, conn)
        except PalinodeError:
            raise
        except PathOutsideVault as exc:
            raise PalinodeError(PATH_OUTSIDE_VAULT, str(exc)) from None
        except ValidationError as exc:
            # A handler validating deeper params (or a path) itself.
            raise _params_error(name, exc) from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.error("method %s failed", name, exc_info=True)
            raise PalinodeError(INTERNAL_ERROR, f"{name} failed: {type(exc).__name__}: {exc}") from None
        if method.result_model is not None and CHECK_RESULTS:
            try:
                method.result_model.model_validate(result)
            except ValidationError as exc:
                log.error("method %s answered outside its result model: %s", name, exc)
                raise PalinodeError(
                    INTERNAL_ERROR, f"{name} answered outside its result model {method.result_model.__name__}: {exc}"
                ) from None
        return result


def _params_error(method: str, exc: ValidationError) -> PalinodeError:
    """-32602 naming each bad parameter, or -32010 when a path validator refused a path."""
    problems = []
    for error in exc.errors(include_url=False):
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, PathOutsideVault):
            return PalinodeError(PATH_OUTSIDE_VAULT, str(cause))
        param = ".".join(str(part) for part in error["loc"]) or "params"
        problems.append({"param": param, "message": error["msg"]})
    text = "; ".join(f"{p['param']}: {p['message']}" for p in problems)
    return PalinodeError(INVALID_PARAMS, f"{method}: invalid params: {text}", {"params": problems})


def decode(text: str | bytes) -> Any:
    """Parse one message; raises ValueError with a one-line reason for bytes that are not JSON."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"parse error: message is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"parse error: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ValueError("parse error: JSON nested too deeply") from None


def _json_type(value: Any) -> str:
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )
