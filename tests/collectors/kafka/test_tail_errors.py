"""aiokafka exceptions are translated into our error tree at the tail's seam; none reaches the fallback."""

from __future__ import annotations

import inspect
import ssl

import aiokafka.errors as aerr
import pytest

from collectors.errors import (
    KafkaAuthError,
    KafkaResponseError,
    KafkaTimeoutError,
    KafkaUnavailableError,
)
from collectors.kafka.tail_errors import translate_aiokafka

SPECIFIC = (KafkaAuthError, KafkaTimeoutError, KafkaUnavailableError, KafkaResponseError)
UPSTREAM = sorted(
    (
        cls
        for _, cls in inspect.getmembers(aerr, inspect.isclass)
        if issubclass(cls, Exception) and cls.__module__.startswith("aiokafka") and cls is not aerr.NoError
    ),
    key=lambda cls: cls.__name__,
)


def _instance(cls: type[BaseException]) -> BaseException:
    try:
        return cls("boom")
    except TypeError:
        return cls.__new__(cls)


@pytest.mark.parametrize("cls", UPSTREAM, ids=lambda c: c.__name__)
def test_translate_aiokafka_every_error_maps_to_specific_typed_error(cls: type[BaseException]) -> None:
    out = translate_aiokafka(_instance(cls), cluster="c", partition=7)

    assert isinstance(out, SPECIFIC), f"{cls.__name__} untranslated: {type(out).__name__}"
    assert (out.cluster, out.topic, out.partition) == ("c", "__consumer_offsets", 7)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (aerr.NotLeaderForPartitionError(), KafkaResponseError),
        (aerr.KafkaConnectionError("refused"), KafkaUnavailableError),
        (aerr.TopicAuthorizationFailedError(), KafkaAuthError),
        (aerr.KafkaTimeoutError(), KafkaTimeoutError),
        (ConnectionResetError(104, "reset"), KafkaUnavailableError),
        (ssl.SSLError("bad cert"), KafkaAuthError),
    ],
)
def test_translate_aiokafka_known_cases_map_to_expected_class(exc: BaseException, expected: type) -> None:
    assert type(translate_aiokafka(exc, cluster="c")) is expected


def test_translate_aiokafka_response_error_keeps_code_and_name() -> None:
    out = translate_aiokafka(aerr.OffsetOutOfRangeError(), cluster="c", partition=3)

    assert isinstance(out, KafkaResponseError)
    assert (out.error_code, out.error_name) == (1, "OFFSET_OUT_OF_RANGE")
