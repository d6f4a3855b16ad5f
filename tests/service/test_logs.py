import io
import json
import logging
import re
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from service.logs import (
    ACCESS_LOGGER,
    OFF,
    OWN_PACKAGES,
    THIRD_PARTY,
    JsonFormatter,
    alert_context,
    configure,
    levels,
    utc_time,
)
from tests.service.notify.builders import alert

T = 1_738_314_902.123456  # 2025-01-31T09:15:02.123Z


@pytest.fixture(autouse=True)
def logging_restored() -> Iterator[None]:
    """configure() changes process-wide state: the root's handlers and the levels of named loggers."""
    names = ["", *OWN_PACKAGES, *THIRD_PARTY, ACCESS_LOGGER]
    saved = {}
    for name in names:
        logger = logging.getLogger(name or None)
        saved[name] = (logger.level, list(logger.handlers), logger.propagate)
    yield
    logging.captureWarnings(False)
    for name, (level, handlers, propagate) in saved.items():
        logger = logging.getLogger(name or None)
        logger.setLevel(level)
        logger.handlers[:] = handlers
        logger.propagate = propagate


def _record(msg: str = "hello %s", args: Any = ("world",), **extra: Any) -> logging.LogRecord:
    record = logging.LogRecord("service.detection.loop", logging.WARNING, __file__, 1, msg, args, None)
    record.created = T
    record.__dict__.update(extra)
    return record


def _json(record: logging.LogRecord) -> dict[str, Any]:
    line = JsonFormatter().format(record)
    assert "\n" not in line
    return dict(json.loads(line))


def test_json_formatter_core_fields_then_context_in_order_then_other_extras() -> None:
    record = _record(
        snapshot_id="s-1",
        partition=3,
        topic="orders",
        group="billing",
        cluster="prod",
        kind="offset_rewind",
        alert_id="al-1",
        transition="fired",
    )
    line = _json(record)
    assert list(line) == [
        "time",
        "level",
        "logger",
        "message",
        "cluster",
        "group",
        "topic",
        "partition",
        "alert_id",
        "kind",
        "snapshot_id",
        "transition",
    ]
    assert line["time"] == "2025-01-31T09:15:02.123Z"
    assert (line["level"], line["logger"], line["message"]) == (
        "WARNING",
        "service.detection.loop",
        "hello world",
    )
    assert (line["partition"], line["cluster"]) == (3, "prod")


def test_json_formatter_plain_record_has_only_core_fields() -> None:
    assert list(_json(_record())) == ["time", "level", "logger", "message"]


def test_json_formatter_exception_as_text() -> None:
    try:
        raise ValueError("bad offset")
    except ValueError:
        record = _record(cluster="prod")
        record.exc_info = sys.exc_info()
    line = _json(record)
    assert line["exception"].startswith("Traceback (most recent call last):")
    assert line["exception"].endswith("ValueError: bad offset")
    assert line["cluster"] == "prod"


def test_json_formatter_unserialisable_extras_stringified() -> None:
    class Thing:
        def __str__(self) -> str:
            return "a thing"

    line = _json(_record(partition=Thing(), offsets={1: 2}, nan=float("nan")))
    assert (line["partition"], line["offsets"], line["nan"]) == ("a thing", {"1": 2}, "nan")


def test_json_formatter_cycle_or_odd_keys_still_one_line() -> None:
    loop: list[Any] = []
    loop.append(loop)
    line = _json(_record(cycle=loop, keyed={(1, 2): "x"}))
    assert (line["cycle"], line["keyed"]) == ("[[...]]", "{(1, 2): 'x'}")
    assert line["message"] == "hello world"


def test_json_formatter_bad_arguments_record_kept() -> None:
    line = _json(_record("%d partitions", ("many",)))
    assert line["message"] == "%d partitions (arguments not formatted: ('many',))"


def test_json_formatter_extra_named_like_a_core_field_renamed_uvicorn_colour_dropped() -> None:
    line = _json(_record(level="custom", color_message="\x1b[32mhello\x1b[0m"))
    assert (line["level"], line["extra_level"]) == ("WARNING", "custom")
    assert "color_message" not in line


def test_json_formatter_non_ascii_escaped() -> None:
    line = JsonFormatter().format(_record(group="caf\u00e9"))
    assert line.isascii()
    assert json.loads(line)["group"] == "caf\u00e9"


def test_utc_time_milliseconds_z() -> None:
    assert utc_time(0.0) == "1970-01-01T00:00:00.000Z"
    assert utc_time(T) == "2025-01-31T09:15:02.123Z"


def test_levels_info_own_packages_info_third_party_warning() -> None:
    got = levels("INFO", access_log=True)
    assert {got[p] for p in OWN_PACKAGES} == {logging.INFO}
    assert {got[t] for t in THIRD_PARTY} == {logging.WARNING}
    assert got[""] == logging.WARNING  # any library not named
    assert got[ACCESS_LOGGER] == logging.INFO
    assert {"kafka", "aiokafka", "apscheduler", "uvicorn.error", "httpx", "py4j"} <= set(THIRD_PARTY)


@pytest.mark.parametrize(("level", "others"), [("DEBUG", logging.DEBUG), ("ERROR", logging.ERROR)])
def test_levels_debug_or_error_applies_to_third_party_too(level: Any, others: int) -> None:
    got = levels(level, access_log=True)
    assert {got[p] for p in (*THIRD_PARTY, "")} == {others}
    assert {got[p] for p in OWN_PACKAGES} == {others}


def test_levels_access_log_off() -> None:
    assert levels("DEBUG", access_log=False)[ACCESS_LOGGER] == OFF


def _lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_configure_json_one_root_handler_levels_applied() -> None:
    stream = io.StringIO()
    configure("INFO", "json", stream=stream)
    configure("INFO", "json", stream=stream)  # again: still one handler
    assert len(logging.getLogger().handlers) == 1
    logging.getLogger("service.detection.loop").info("ours", extra={"cluster": "prod"})
    logging.getLogger("collectors.tail").debug("ours, too fine")
    logging.getLogger("kafka.conn").info("theirs, too fine")
    logging.getLogger("kafka.conn").warning("theirs")
    logging.getLogger("somelib").info("unnamed library, too fine")
    logging.getLogger("uvicorn.error").info("Started server process")
    logging.getLogger(ACCESS_LOGGER).info('127.0.0.1:1 - "GET /readyz HTTP/1.1" 200')
    got = [(line["logger"], line["message"]) for line in _lines(stream)]
    assert got == [
        ("service.detection.loop", "ours"),
        ("kafka.conn", "theirs"),
        (ACCESS_LOGGER, '127.0.0.1:1 - "GET /readyz HTTP/1.1" 200'),
    ]
    assert _lines(stream)[0]["cluster"] == "prod"


def test_configure_access_log_off_drops_access_lines_only() -> None:
    stream = io.StringIO()
    configure("DEBUG", "json", access_log=False, stream=stream)
    logging.getLogger(ACCESS_LOGGER).info('127.0.0.1:1 - "GET /metrics HTTP/1.1" 200')
    logging.getLogger("uvicorn.error").debug("debug of uvicorn")
    assert [line["logger"] for line in _lines(stream)] == ["uvicorn.error"]


def test_configure_detached_uvicorn_logger_routed_through_the_handler() -> None:
    stray = logging.StreamHandler(io.StringIO())
    uvicorn_error = logging.getLogger("uvicorn.error")
    uvicorn_error.addHandler(stray)
    uvicorn_error.propagate = False  # as uvicorn's own dictConfig leaves it
    stream = io.StringIO()
    configure("INFO", "json", stream=stream)
    uvicorn_error.error("port in use")
    assert [line["message"] for line in _lines(stream)] == ["port in use"]


def test_configure_python_warnings_become_json_lines() -> None:
    stream = io.StringIO()
    configure("INFO", "json", stream=stream)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("pandas is too new", UserWarning, stacklevel=1)
    [line] = _lines(stream)
    assert (line["logger"], line["level"]) == ("py.warnings", "WARNING")
    assert "pandas is too new" in line["message"]


def test_configure_text_today_s_format() -> None:
    stream = io.StringIO()
    configure("INFO", "text", stream=stream)
    logging.getLogger("service.app").info("offsetguard started: %d cluster(s)", 1, extra={"cluster": "x"})
    pattern = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO service.app: offsetguard started: 1 cluster\(s\)\n"
    assert re.fullmatch(pattern, stream.getvalue())


def test_alert_context_names_what_applies() -> None:
    assert alert_context(alert("al-7", group="billing", topic="orders", partition=2)) == {
        "alert_id": "al-7",
        "kind": "offset_rewind",
        "severity": "critical",
        "cluster": "prod",
        "group": "billing",
        "topic": "orders",
        "partition": 2,
    }
