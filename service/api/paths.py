"""Exact round trip of names in URL paths: group ids may hold ``/``, ``%``, dots and any Unicode.

The ASGI server decodes ``%2F`` to ``/`` before routing, which would make a group named ``a/history``
indistinguishable from the history of group ``a``. :class:`SegmentPreserving` rebuilds the routed path
of ``/api/`` requests from the raw one, decoding each segment on its own and re-escaping the ``/`` and
``%`` it holds, so a route parameter is always exactly one segment. :func:`unescape` gives the name back.
Clients percent-encode names as one path segment (``urllib.parse.quote(name, safe="")``).
"""

from __future__ import annotations

from urllib.parse import unquote

from starlette.types import ASGIApp, Receive, Scope, Send

PREFIX = b"/api/"


def escape_segment(raw: str) -> str:
    """One raw (still percent-encoded) path segment, decoded, with its own ``%`` and ``/`` escaped."""
    return unquote(raw).replace("%", "%25").replace("/", "%2F")


def unescape(value: str) -> str:
    """The name a route parameter built by :class:`SegmentPreserving` stands for."""
    return value.replace("%2F", "/").replace("%25", "%")


class SegmentPreserving:
    """ASGI middleware: route ``/api/`` requests on their raw path, one segment per parameter."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            raw = scope.get("raw_path")
            if isinstance(raw, bytes) and raw.startswith(PREFIX):
                text = raw.split(b"?", 1)[0].decode("utf-8", "replace")
                scope = dict(scope)
                scope["path"] = "/".join(escape_segment(s) for s in text.split("/"))
        await self.app(scope, receive, send)
