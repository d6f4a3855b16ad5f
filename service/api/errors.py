"""Errors of the HTTP API, and the handlers that turn every failure into ``{"error": code, "message": text}``.

    ApiError               an HTTP refusal: .status, .code, .message (and .parameter where one is at fault)
    ├── NotFound           404: unknown cluster, group, topic, alert or snapshot
    ├── InvalidParameter   422: a parameter that cannot be understood; names it
    ├── Unauthorized       401: no bearer token, or an unknown one
    ├── Forbidden          403: a token without the scope the endpoint needs
    ├── Conflict           409: the request clashes with work already under way
    └── Unavailable        503: a part of the service the request needs is not running

Domain errors are translated here, at the seam: an invalid snapshot id is a 404, a store failure a 503,
a Kafka failure a 502. FastAPI's own validation errors become a 422 naming the parameter.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from collectors.errors import KafkaError, OffsetguardError, StoreError
from collectors.snapshots import InvalidSnapshotIdError, SnapshotError

log = logging.getLogger(__name__)


class ErrorBody(BaseModel):
    """What every error response carries."""

    error: str  # a stable machine-readable code, e.g. "not_found", "invalid_parameter"
    message: str  # for humans
    parameter: str | None = None  # the request parameter at fault, where one is


class ApiError(Exception):
    """An HTTP-level refusal with a status code, a stable code and a message."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str, *, code: str | None = None, parameter: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.parameter = parameter
        if code is not None:
            self.code = code

    def body(self) -> ErrorBody:
        return ErrorBody(error=self.code, message=self.message, parameter=self.parameter)


class NotFound(ApiError):
    """404: the named cluster, group, topic, alert or snapshot is not known."""

    status = 404
    code = "not_found"


class InvalidParameter(ApiError):
    """422: a parameter that cannot be understood; ``parameter`` names it."""

    status = 422
    code = "invalid_parameter"


class Unauthorized(ApiError):
    """401: no bearer token, or one that matches no configured token."""

    status = 401
    code = "unauthorized"


class Forbidden(ApiError):
    """403: a valid token without the scope the endpoint needs."""

    status = 403
    code = "forbidden"


class Conflict(ApiError):
    """409: the request clashes with work already under way."""

    status = 409
    code = "conflict"


class Unavailable(ApiError):
    """503: a part of the service this request needs (store, alert store) is not running."""

    status = 503
    code = "unavailable"


def _error(status: int, body: ErrorBody, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body.model_dump(), status_code=status, headers=headers)


def _location(loc: tuple[Any, ...]) -> tuple[str, str]:
    """(where, name) of a validation error location such as ("query", "limit") or ("body", "who")."""
    where = str(loc[0]) if loc else "request"
    name = ".".join(str(p) for p in loc[1:]) or where
    return where, name


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthorized) else None
    return _error(exc.status, exc.body(), headers)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    where, name = _location(tuple(first.get("loc", ())))
    message = f"{where} parameter {name!r}: {first.get('msg', 'invalid')}"
    if where == "body":
        message = f"request body {name!r}: {first.get('msg', 'invalid')}"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more)"
    return _error(422, ErrorBody(error="invalid_parameter", message=message, parameter=name))


_HTTP_CODES = {
    400: "invalid_body",
    404: "not_found",
    405: "method_not_allowed",
    401: "unauthorized",
    403: "forbidden",
}


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    message = str(exc.detail) if exc.detail else code
    if exc.status_code == 404 and message == "Not Found":
        message = f"no such endpoint: {request.url.path}"
    return _error(exc.status_code, ErrorBody(error=code, message=message), dict(exc.headers or {}))


async def _domain_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, OffsetguardError)
    if isinstance(exc, InvalidSnapshotIdError):
        return _error(404, ErrorBody(error="not_found", message=f"no such snapshot: {exc.message}"))
    if isinstance(exc, StoreError):
        log.error("API request failed in the store: %s", exc)
        return _error(503, ErrorBody(error="store_unavailable", message=str(exc)))
    if isinstance(exc, KafkaError):
        log.warning("API request failed talking to Kafka: %s", exc)
        return _error(502, ErrorBody(error="kafka_error", message=str(exc)))
    if isinstance(exc, SnapshotError):
        log.warning("API snapshot request failed: %s", exc)
        return _error(500, ErrorBody(error="snapshot_error", message=str(exc)))
    log.error("API request failed: %s", exc)
    return _error(500, ErrorBody(error="internal_error", message=str(exc)))


def install_error_handlers(app: FastAPI) -> None:
    """Make every error of ``app`` a JSON :class:`ErrorBody` with the right status."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(OffsetguardError, _domain_error)


def _doc(description: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": description}


# The error responses every API route may give, for the OpenAPI document.
READ_ERRORS: dict[int | str, dict[str, Any]] = {
    401: _doc("No bearer token, or an unknown one (when reads require one)"),
    403: _doc("The token lacks the read scope"),
    404: _doc("Unknown cluster, group, topic, alert or snapshot"),
    422: _doc("A parameter that cannot be understood; 'parameter' names it"),
    503: _doc("The store or alert store is not running"),
}
WRITE_ERRORS: dict[int | str, dict[str, Any]] = {
    **READ_ERRORS,
    400: _doc("The request body cannot be parsed"),
    401: _doc("No bearer token, or an unknown one"),
    403: _doc("The token lacks the write scope"),
}


def as_json(responses: dict[int | str, dict[str, Any]]) -> dict[int | str, dict[str, Any]]:
    """``responses`` with the error bodies documented as JSON explicitly, for routes whose own response
    class is not JSON (FastAPI would document a ``model`` under the route's media type)."""
    ref = {"$ref": "#/components/schemas/ErrorBody"}
    return {
        status: {"description": doc["description"], "content": {"application/json": {"schema": ref}}}
        if "model" in doc
        else doc
        for status, doc in responses.items()
    }
