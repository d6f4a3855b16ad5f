"""Requests whose bodies we encode and responses we decode ourselves, sent through kafka-python's connection.

kafka-python's connection encodes a request by calling ``request.with_header()`` and
``request.encode(header=True, framed=True)``, and decodes the answer with the class
``request.header.get_response_class()`` names. :class:`RawRequest` fills both roles: its body comes from
a callback given the negotiated version (so a body can be cached between cycles or encoded by hand), and
its answer comes back undecoded as a :class:`RawResponse`. :func:`decode` then runs a hand-written fast
decoder when the version is one it knows, and kafka-python's decoder of the real response class on any
other version or on bytes the fast decoder refuses. Version negotiation, SASL/TLS, framing, correlation
ids, timeouts and throttling stay kafka-python's.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable
from typing import Any, TypeVar

import kafka.errors as kerr
from kafka.protocol.api_header import RequestHeader

from collectors.kafka.fast_wire import FAST_DECODE_ERRORS
from collectors.kafka.privates import request_version_bounds, response_fields

log = logging.getLogger(__name__)

T = TypeVar("T")
_FRAME = struct.Struct(">i")


class RawResponse:
    """An undecoded response body of ``response_class`` (a versioned kafka-python class)."""

    __slots__ = ("body", "response_class", "throttle_time_ms", "version")

    def __init__(self, response_class: Any, version: int, body: bytes) -> None:
        self.response_class = response_class
        self.version = version
        self.body = body
        # The connection throttles on this attribute, so it must be the broker's, not four other bytes.
        throttled = _leads_with_throttle(response_class, version) and len(body) >= 4
        self.throttle_time_ms = _FRAME.unpack_from(body)[0] if throttled else 0


def _leads_with_throttle(response_class: Any, version: int) -> bool:
    """Whether ``version`` of the response starts with ThrottleTimeMs (v2/v3+ of the ones we send raw)."""
    fields = response_fields(response_class)
    first = next(iter(fields), None)
    return first == "throttle_time_ms" and bool(fields[first].for_version_q(version))


class _RawResponseType:
    """Stands in for a response class in kafka-python's parser: header parsed normally, body kept raw."""

    def __init__(self, response_class: Any, version: int) -> None:
        self._versioned = response_class[version]
        self._version = version

    def parse_header(self, buffer: Any) -> Any:
        return self._versioned.parse_header(buffer)

    def decode(self, buffer: Any) -> RawResponse:
        return RawResponse(self._versioned, self._version, bytes(buffer.read()))


class _Header:
    """The request header kafka-python's parser keeps per in-flight request."""

    __slots__ = ("_response_type", "correlation_id", "encoded", "request_api_key", "request_api_version")

    def __init__(self, header: Any, response_type: _RawResponseType, flexible: bool) -> None:
        self.correlation_id = header.correlation_id
        self.request_api_key = header.request_api_key
        self.request_api_version = header.request_api_version
        self._response_type = response_type
        self.encoded = bytes(header.encode(flexible=flexible))

    # kafka-python's parser logs these names when it cannot find a response type
    @property
    def api_key(self) -> int:
        return int(self.request_api_key)

    @property
    def api_version(self) -> int:
        return int(self.request_api_version)

    def get_response_class(self) -> _RawResponseType:
        return self._response_type


class RawRequest:
    """A request of kafka-python class ``request_class`` whose body ``body(version)`` returns.

    Duck-types the parts of kafka-python's ``ApiMessage`` its connection uses; ``min_version`` and
    ``max_version`` bound the version negotiated with the broker, as they do on a real request.
    """

    def __init__(
        self,
        request_class: Any,
        response_class: Any,
        body: Callable[[int], bytes],
        *,
        min_version: int | None = None,
        max_version: int | None = None,
    ) -> None:
        self._request_class = request_class
        self._response_class = response_class
        self._body = body
        self._min_version = min_version
        self._max_version = max_version
        self._header: _Header | None = None
        self.API_VERSION: int | None = None
        self.API_KEY: int = request_class.API_KEY
        self.name: str = request_class.name
        self.min_version: int = request_class.min_version
        self.max_version: int = request_class.max_version

    @classmethod
    def wrap(cls, request: Any, response_class: Any) -> RawRequest:
        """A kafka-python request sent as is, its response kept raw for :func:`decode`."""
        min_version, max_version = request_version_bounds(request)
        return cls(
            type(request),
            response_class,
            lambda version: bytes(request.encode(version=version)),
            min_version=min_version,
            max_version=max_version,
        )

    def expect_response(self) -> bool:
        return True

    @property
    def header(self) -> _Header | None:
        return self._header

    def with_header(self, correlation_id: int = 0, client_id: str = "kafka-python") -> None:
        version = self._version()
        header = RequestHeader(
            request_api_key=self.API_KEY,
            request_api_version=version,
            correlation_id=correlation_id,
            client_id=client_id,
        )
        flexible = self._request_class.flexible_version_q(version)
        self._header = _Header(header, _RawResponseType(self._response_class, version), flexible)

    def encode(self, version: int | None = None, header: bool = False, framed: bool = False) -> bytes:
        if version is not None:
            self.API_VERSION = version
        payload = self._body(self._version())
        if header:
            if self._header is None:
                raise ValueError("No header found")
            payload = self._header.encoded + payload
        return _FRAME.pack(len(payload)) + payload if framed else payload

    def _version(self) -> int:
        if self.API_VERSION is None:
            raise ValueError("Version required to encode data")
        return self.API_VERSION

    def __repr__(self) -> str:
        return f"RawRequest({self.name}, v{self.API_VERSION})"


def decode(
    raw: RawResponse,
    fast: Callable[[RawResponse], T] | None,
    slow: Callable[[Any], T],
    fast_versions: range,
) -> T:
    """``fast(raw)`` for a version in ``fast_versions``, else (or if it refuses the bytes) ``slow(decoded)``.

    ``slow`` gets kafka-python's decoded response object. Bytes neither can read raise kafka-python's
    ``KafkaProtocolError``, as its own connection would, which the seam translates.
    """
    if fast is not None and raw.version in fast_versions:
        try:
            return fast(raw)
        except FAST_DECODE_ERRORS as exc:
            # Not an error yet: kafka-python may still read it (e.g. a layout a newer broker sends).
            log.debug("fast decode of %s refused (%s); using kafka-python", raw.response_class, exc)
    try:
        response = raw.response_class.decode(raw.body)
    except Exception as exc:
        raise kerr.KafkaProtocolError(f"Unable to decode {raw.response_class.__name__} response") from exc
    return slow(response)
