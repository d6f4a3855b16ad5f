"""A small client of the on-call HTTP API for the ``offsetguard`` commands (stdlib only).

The network sits behind one function, :data:`Send` ``(method, url, headers) -> (status, headers, body)``;
tests hand in one that calls the app in-process. Failures become :class:`ApiClientError`.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote, urlencode

from collectors.errors import OffsetguardError

DEFAULT_URL = "http://127.0.0.1:8080"
TOKEN_ENV = "OFFSETGUARD_TOKEN"
# (method, url, headers) for a GET; a POST passes its body as a fourth argument
Send = Callable[..., tuple[int, Mapping[str, str], bytes]]


class ApiClientError(OffsetguardError):
    """The API could not be reached, or refused the request (``status``, ``code``)."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def urllib_send(timeout: float = 30.0) -> Send:
    def send(
        method: str, url: str, headers: Mapping[str, str], body: bytes | None = None
    ) -> tuple[int, Mapping[str, str], bytes]:
        request = urllib.request.Request(url, data=body, method=method, headers=dict(headers))
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers or {}), exc.read()
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ApiClientError(f"cannot reach the offsetguard API at {url}: {reason}") from exc

    return send


def segment(name: str) -> str:
    """``name`` as one path segment (dots-only names encoded so no client normalises them away)."""
    encoded = quote(name, safe="")
    return encoded.replace(".", "%2E") if set(name) <= {"."} else encoded


class ApiClient:
    """GETs JSON or text from the API at ``url`` with an optional bearer ``token``."""

    def __init__(self, url: str = DEFAULT_URL, token: str | None = None, send: Send | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise ApiClientError(f"--url {url!r} is not an http(s) URL")
        self.url = url.rstrip("/")
        self._token = token
        self._send = send or urllib_send()

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> tuple[bytes, Mapping[str, str]]:
        query = {k: v for k, v in (params or {}).items() if v is not None}
        url = self.url + path + (f"?{urlencode(query)}" if query else "")
        status, response_headers, body = self._send("GET", url, self._headers("application/json, text/csv"))
        if status >= 400:
            raise _refusal(status, body)
        return body, response_headers

    def get_json(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        body, _ = self.get(path, params)
        return json.loads(body)

    def post_json(self, path: str, document: Any) -> Any:
        """POST ``document`` as JSON; the JSON answer (None for an empty one)."""
        headers = {**self._headers("application/json"), "Content-Type": "application/json"}
        body = json.dumps(document).encode()
        status, _, answer = self._send("POST", self.url + path, headers, body)
        if status >= 400:
            raise _refusal(status, answer)
        return json.loads(answer) if answer else None

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        return headers


def _refusal(status: int, body: bytes) -> ApiClientError:
    try:
        error = json.loads(body)
        return ApiClientError(
            f"{error['message']} (HTTP {status} {error['error']})", status=status, code=error["error"]
        )
    except (ValueError, KeyError, TypeError):
        return ApiClientError(f"HTTP {status}: {body[:200].decode('utf-8', 'replace')}", status=status)


def add_connection_arguments(parser: Any) -> None:
    parser.add_argument("--url", default=DEFAULT_URL, help=f"offsetguard API (default {DEFAULT_URL})")
    parser.add_argument("--token", help=f"bearer token (default: env {TOKEN_ENV})")
    parser.add_argument("--json", action="store_true", help="print the API's JSON (for scripts)")


def client_from(args: Any, send: Send | None = None) -> ApiClient:
    return ApiClient(args.url, args.token or os.environ.get(TOKEN_ENV) or None, send)


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """Rows as aligned columns; None shows as '-'."""
    cells = [[("-" if v is None else str(v)) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)
