"""Translation of aiokafka (and socket/TLS/asyncio) exceptions into our error tree, for the tail's seam.

Only :mod:`collectors.kafka.tail` calls :func:`translate_aiokafka`;
``tests/collectors/kafka/test_tail_errors.py`` feeds every exception class aiokafka defines through it and
fails if one reaches the generic fallback.
"""

from __future__ import annotations

import asyncio
import ssl

import aiokafka.errors as aerr

from collectors.errors import (
    KafkaAuthError,
    KafkaError,
    KafkaTimeoutError,
    KafkaUnavailableError,
)
from collectors.kafka.errors import response_error
from collectors.tail_model import TOPIC

_AUTH = (
    aerr.AuthenticationFailedError,
    aerr.AuthenticationMethodNotSupported,
    aerr.TopicAuthorizationFailedError,
    aerr.GroupAuthorizationFailedError,
    aerr.ClusterAuthorizationFailedError,
    aerr.SaslAuthenticationFailed,
    aerr.UnsupportedSaslMechanismError,
    aerr.IllegalSaslStateError,
    ssl.SSLError,
    ssl.CertificateError,
)
_TIMEOUT = (aerr.KafkaTimeoutError, TimeoutError, asyncio.TimeoutError)
# Client-side errors meaning "this client (or the cluster) cannot be used right now": retried later.
_UNAVAILABLE = (
    aerr.KafkaConnectionError,
    aerr.NoBrokersAvailable,
    aerr.NodeNotReadyError,
    aerr.KafkaUnavailableError,
    aerr.KafkaProtocolError,
    aerr.Cancelled,
    aerr.TooManyInFlightRequests,
    aerr.StaleMetadata,
    aerr.MetadataEmptyBrokerList,
    aerr.UnrecognizedBrokerVersion,
    aerr.IncompatibleBrokerVersion,
    aerr.ConsumerStoppedError,
    ConnectionError,
    OSError,  # after ssl/timeout: those are OSError subclasses too
)
# Misuse or states a plain assigned consumer should never reach; still never leaked raw.
_CLIENT = (
    aerr.IllegalStateError,
    aerr.IllegalArgumentError,
    aerr.IllegalOperation,
    aerr.CommitFailedError,
    aerr.UnsupportedCodecError,
    aerr.KafkaConfigurationError,
    aerr.QuotaViolationError,
    aerr.NoOffsetForPartitionError,
    aerr.RecordTooLargeError,
    aerr.ProducerClosed,
    aerr.ProducerFenced,
)


def translate_aiokafka(
    exc: BaseException, *, cluster: str, partition: int | None = None, what: str = "tail"
) -> KafkaError:
    """The error of our tree standing for ``exc`` (raise it ``from exc``); topic is ``__consumer_offsets``."""
    if isinstance(exc, KafkaError):
        return exc
    if isinstance(exc, aerr.BrokerResponseError) and not isinstance(exc, _AUTH):
        errno = getattr(exc, "errno", None)
        code = errno if isinstance(errno, int) else -1
        return response_error(
            code, cluster=cluster, topic=TOPIC, partition=partition, message=f"{what}: {_text(exc)}"
        )
    detail = f"{what} failed: {type(exc).__name__}: {_text(exc)}"
    if isinstance(exc, _AUTH):
        return KafkaAuthError(detail, cluster=cluster, topic=TOPIC, partition=partition)
    if isinstance(exc, _TIMEOUT):
        return KafkaTimeoutError(detail, cluster=cluster, topic=TOPIC, partition=partition)
    if isinstance(exc, _UNAVAILABLE + _CLIENT) or type(exc) is aerr.KafkaError:
        return KafkaUnavailableError(detail, cluster=cluster, topic=TOPIC, partition=partition)
    return KafkaError(detail, cluster=cluster, topic=TOPIC, partition=partition)


def _text(exc: BaseException) -> str:
    """``str(exc)``, which some aiokafka classes cannot produce (a bare BrokerResponseError has no errno)."""
    try:
        return str(exc)
    except Exception:
        return type(exc).__name__
