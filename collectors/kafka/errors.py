"""Translation of kafka-python, socket and TLS exceptions (and raw error codes) into our error tree.

Only :mod:`collectors.kafka.seam` and its helpers call these; ``tests/collectors/kafka/test_seam_errors.py``
feeds every exception class kafka-python defines through :func:`translate` and fails if one falls through
to the generic fallback.
"""

from __future__ import annotations

import ssl
import struct

import kafka.errors as kerr

from collectors.errors import (
    KafkaAuthError,
    KafkaError,
    KafkaResponseError,
    KafkaTimeoutError,
    KafkaUnavailableError,
)

_AUTH = (
    kerr.AuthorizationError,
    kerr.SaslAuthenticationFailedError,
    kerr.UnsupportedSaslMechanismError,
    kerr.IllegalSaslStateError,
    ssl.SSLError,
    ssl.CertificateError,
)
_TIMEOUT = (kerr.KafkaTimeoutError, TimeoutError)
# Client-side kafka-python errors that mean "this broker (or the cluster) cannot be used right now".
_UNAVAILABLE = (
    kerr.KafkaConnectionError,
    kerr.NodeNotReadyError,
    kerr.UnknownBrokerIdError,
    kerr.RetriableError,
    kerr.KafkaProtocolError,
    kerr.UnrecognizedBrokerVersion,
    ConnectionError,
    OSError,  # after ssl/timeout: those are OSError subclasses too
)
# Client-side kafka-python errors that are neither: misuse, unsupported codecs, commit/txn state.
_CLIENT = (
    kerr.CommitFailedError,
    kerr.IllegalArgumentError,
    kerr.IllegalStateError,
    kerr.KafkaConfigurationError,
    kerr.LogTruncationError,
    kerr.NoOffsetForPartitionError,
    kerr.QuotaViolationError,
    kerr.TransactionAbortedError,
    kerr.UnsupportedCodecError,
)


def response_error(
    error_code: int,
    *,
    cluster: str,
    group: str | None = None,
    topic: str | None = None,
    partition: int | None = None,
    message: str | None = None,
) -> KafkaError:
    """The typed error for a non-zero broker ``error_code`` found inside a response."""
    cls = kerr.for_code(error_code)
    name = str(getattr(cls, "message", None) or f"UNKNOWN_ERROR_{error_code}")
    text = f"broker answered {name}" + (f": {message}" if message else "")
    if issubclass(cls, kerr.AuthorizationError | kerr.SaslAuthenticationFailedError):
        return KafkaAuthError(text, cluster=cluster, group=group, topic=topic, partition=partition)
    return KafkaResponseError(
        text,
        error_code=error_code,
        error_name=name,
        cluster=cluster,
        group=group,
        topic=topic,
        partition=partition,
    )


def translate(
    exc: BaseException,
    *,
    cluster: str,
    group: str | None = None,
    topic: str | None = None,
    partition: int | None = None,
    what: str = "Kafka request",
) -> KafkaError:
    """The error of our tree that stands for ``exc`` (set ``__cause__`` by raising it ``from exc``).

    Anything not recognised becomes a bare :class:`KafkaError` — the seam must never leak a foreign
    exception, but tests treat reaching that fallback as a missing translation.
    """
    where: dict[str, object] = {"cluster": cluster, "group": group, "topic": topic, "partition": partition}
    if isinstance(exc, KafkaError):
        return exc
    if isinstance(exc, kerr.BrokerResponseError) and not isinstance(exc, kerr.NoError):
        errno = getattr(exc, "errno", None)
        code = errno if isinstance(errno, int) else -1
        return response_error(code, message=f"{what}: {exc}", **where)  # type: ignore[arg-type]
    detail = f"{what} failed: {type(exc).__name__}: {exc}"
    if isinstance(exc, _AUTH):
        return KafkaAuthError(detail, **where)  # type: ignore[arg-type]
    if isinstance(exc, _TIMEOUT):
        return KafkaTimeoutError(detail, **where)  # type: ignore[arg-type]
    if isinstance(exc, _UNAVAILABLE + _CLIENT) or type(exc) is kerr.KafkaError or _is_malformed(exc):
        return KafkaUnavailableError(detail, **where)  # type: ignore[arg-type]
    return KafkaError(detail, **where)  # type: ignore[arg-type]


def _is_malformed(exc: BaseException) -> bool:
    """A response kafka-python could not decode, or its I/O loop shut down under us."""
    return isinstance(exc, struct.error | EOFError | UnicodeDecodeError) or (
        isinstance(exc, RuntimeError) and "NetworkSelector closed" in str(exc)
    )
