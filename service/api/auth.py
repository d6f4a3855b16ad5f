"""Bearer tokens with two scopes, ``read`` and ``write`` (which includes ``read``).

Mutating endpoints always need a ``write`` token; reads need a ``read`` token only when
``api.reads_require_auth`` is set. A presented token is compared with *every* configured one in
constant time (:func:`hmac.compare_digest`), so neither the match nor its position leaks through timing.
Tokens are never logged: only the matching token's ``name`` is.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from service.api.errors import Forbidden, Unauthorized
from service.settings import ApiScope, ApiSettings, ApiToken

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the name of their token, or None for an anonymous read."""

    name: str | None


ANONYMOUS = Principal(None)


def match_token(tokens: Sequence[ApiToken], presented: str) -> ApiToken | None:
    """The configured token equal to ``presented``; every token is compared, whatever matches."""
    given = presented.encode("utf-8")
    found = None
    for token in tokens:
        if hmac.compare_digest(given, token.token.get_secret_value().encode("utf-8")) and found is None:
            found = token
    return found


def authorize(settings: ApiSettings, presented: str | None, scope: ApiScope) -> Principal:
    """The caller allowed ``scope``, else :class:`Unauthorized` (401) or :class:`Forbidden` (403)."""
    if presented is None:
        if scope == "read" and not settings.reads_require_auth:
            return ANONYMOUS
        raise Unauthorized(f"this endpoint needs a bearer token with the {scope!r} scope")
    token = match_token(settings.tokens, presented)
    if token is None:
        log.warning("API request with an unknown bearer token refused")
        raise Unauthorized("unknown bearer token")
    if not token.allows(scope):
        log.warning("API token %r lacks the %s scope", token.name, scope)
        raise Forbidden(f"token {token.name!r} lacks the {scope!r} scope")
    return Principal(token.name)
