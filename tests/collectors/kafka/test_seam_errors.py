"""Translation of upstream exceptions at the seam, and the real seam's error contract on a dead port."""

from __future__ import annotations

import inspect
import socket
import ssl
from pathlib import Path

import kafka.errors as kerr
import pytest
from pydantic import SecretStr

from collectors.errors import (
    KafkaAuthError,
    KafkaError,
    KafkaResponseError,
    KafkaTimeoutError,
    KafkaUnavailableError,
)
from collectors.kafka.errors import response_error, translate
from collectors.kafka.seam import KafkaPythonSeam, client_kwargs
from collectors.settings import ClusterSettings, SaslSettings, TlsSettings

SPECIFIC = (KafkaAuthError, KafkaTimeoutError, KafkaUnavailableError, KafkaResponseError)
UPSTREAM = sorted(
    (
        cls
        for _, cls in inspect.getmembers(kerr, inspect.isclass)
        if issubclass(cls, kerr.KafkaError) and cls is not kerr.NoError  # NoError is never raised
    ),
    key=lambda cls: cls.__name__,
)


def _instance(cls: type[BaseException]) -> BaseException:
    try:
        return cls("boom")
    except TypeError:  # a few take structured arguments
        return cls.__new__(cls)


@pytest.mark.parametrize("cls", UPSTREAM, ids=lambda c: c.__name__)
def test_translate_every_kafka_python_error_maps_to_specific_typed_error(cls: type[BaseException]) -> None:
    exc = _instance(cls)

    out = translate(exc, cluster="c", group="g", topic="t", partition=3)

    assert isinstance(out, SPECIFIC), f"{cls.__name__} untranslated: {type(out).__name__}"
    assert (out.cluster, out.group, out.topic, out.partition) == ("c", "g", "t", 3)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (ConnectionRefusedError(111, "refused"), KafkaUnavailableError),
        (ConnectionResetError(104, "reset"), KafkaUnavailableError),
        (socket.gaierror(-2, "Name or service not known"), KafkaUnavailableError),
        (OSError(113, "No route to host"), KafkaUnavailableError),
        (TimeoutError("timed out"), KafkaTimeoutError),
        (ssl.SSLCertVerificationError("certificate verify failed"), KafkaAuthError),
        (ssl.SSLError("bad handshake"), KafkaAuthError),
        (kerr.KafkaTimeoutError("Timed out after 10 ms"), KafkaTimeoutError),
        (kerr.SaslAuthenticationFailedError("bad password"), KafkaAuthError),
        (kerr.GroupAuthorizationFailedError(), KafkaAuthError),
        (kerr.NodeNotReadyError(2), KafkaUnavailableError),
        (kerr.KafkaConnectionError("Node not connected"), KafkaUnavailableError),
        (RuntimeError("NetworkSelector closed!"), KafkaUnavailableError),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else v.__name__,
)
def test_translate_socket_tls_and_client_errors_classified(
    exc: BaseException, expected: type[KafkaError]
) -> None:
    assert type(translate(exc, cluster="c")) is expected


def test_translate_broker_error_carries_code_and_name() -> None:
    out = translate(kerr.NotCoordinatorError("moved"), cluster="c", group="g")

    assert isinstance(out, KafkaResponseError)
    assert (out.error_code, out.error_name, out.group) == (16, "NOT_COORDINATOR", "g")


def test_response_error_unknown_code_keeps_code() -> None:
    out = response_error(9999, cluster="c", topic="t", partition=1)

    assert isinstance(out, KafkaResponseError)
    assert (out.error_code, out.topic, out.partition) == (9999, "t", 1)


def test_translate_foreign_exception_falls_back_to_base_kafka_error() -> None:
    out = translate(ZeroDivisionError("?"), cluster="c")

    assert type(out) is KafkaError and "ZeroDivisionError" in str(out)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_kafka_seam_nothing_listening_raises_typed_error_with_cause() -> None:
    settings = ClusterSettings(
        name="dead", bootstrap_servers=[f"127.0.0.1:{_free_port()}"], request_timeout_ms=500
    )
    seam = KafkaPythonSeam(settings)
    try:
        with pytest.raises((KafkaTimeoutError, KafkaUnavailableError)) as caught:
            seam.metadata()
    finally:
        seam.close()

    assert caught.value.cluster == "dead"
    assert isinstance(caught.value.__cause__, kerr.KafkaError)


def test_kafka_seam_closed_refuses_calls_with_typed_error() -> None:
    seam = KafkaPythonSeam(ClusterSettings(name="c", bootstrap_servers=["127.0.0.1:1"]))
    seam.close()

    with pytest.raises(KafkaError):
        seam.list_groups(1)


def test_client_kwargs_sasl_scram_and_tls_mapped() -> None:
    settings = ClusterSettings(
        name="c",
        bootstrap_servers=["k1:9093", "k2:9093"],
        security_protocol="SASL_SSL",
        sasl=SaslSettings(mechanism="SCRAM-SHA-512", username="u", password=SecretStr("p")),
        tls=TlsSettings(cafile=Path("/ca.pem"), check_hostname=False),
        request_timeout_ms=2000,
    )

    kwargs = client_kwargs(settings)

    assert kwargs["bootstrap_servers"] == ["k1:9093", "k2:9093"]
    assert (kwargs["security_protocol"], kwargs["sasl_mechanism"]) == ("SASL_SSL", "SCRAM-SHA-512")
    assert (kwargs["sasl_plain_username"], kwargs["sasl_plain_password"]) == ("u", "p")
    assert (kwargs["ssl_cafile"], kwargs["ssl_check_hostname"]) == ("/ca.pem", False)
    assert "ssl_certfile" not in kwargs
    assert kwargs["request_timeout_ms"] == 2000
