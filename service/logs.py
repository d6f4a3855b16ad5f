"""How ``offsetguard serve`` logs: one handler on the root logger, writing to stderr as text
(``time LEVEL logger: message``) or as JSON lines.

Call sites pass what an operator filters on through the standard ``extra=``
(``log.warning("tail %s: ...", cluster, extra={"cluster": cluster})``); only this module knows the
format. A JSON line holds ``time`` (ISO-8601 UTC, milliseconds), ``level``, ``logger`` and ``message``,
then the context fields of :data:`CONTEXT` the record carries, in that order, then any other extra
(sorted), then ``exception`` (the traceback) when there is one. Nothing a record carries makes it fail:
an extra JSON cannot hold is written as its ``str``, a message whose arguments do not fit is written as
given.

Offsetguard's own packages log at ``log_level``; everything else (kafka-python, aiokafka, APScheduler,
uvicorn's server messages, httpx, py4j, ...) at WARNING, or ``log_level`` if that is DEBUG or ERROR.
uvicorn's access log (``uvicorn.access``, INFO lines) follows ``log_level`` when ``access_log`` is on.
"""

from __future__ import annotations

import json
import logging
import math
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from store.alert_records import Alert

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]
LogFormat = Literal["text", "json"]

OWN_PACKAGES = ("service", "collectors", "alerts", "store", "pipeline", "sandbox", "drills", "cli")
# Named as well as covered by the root's level: a library or an earlier configuration may have set its own.
THIRD_PARTY = (
    "kafka",
    "aiokafka",
    "apscheduler",
    "uvicorn",
    "uvicorn.error",
    "uvicorn.asgi",
    "httpx",
    "httpcore",
    "py4j",
    "asyncio",
)
ACCESS_LOGGER = "uvicorn.access"
OFF = logging.CRITICAL + 10
# The fields a log pipeline filters on, first in a JSON line when a record carries them.
CONTEXT = ("cluster", "group", "topic", "partition", "alert_id", "kind", "severity", "receiver")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
CORE = ("time", "level", "logger", "message")
# Attributes every LogRecord has (anything else came in through extra=), and uvicorn's coloured copy of
# its message.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (see the module docstring for its fields)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": utc_time(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": _message(record),
        }
        extras = {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}
        for key in CONTEXT:
            if key in extras:
                line[key] = extras.pop(key)
        for key in sorted(extras):
            line[f"extra_{key}" if key in CORE else key] = extras[key]
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return _dumps(line)


def alert_context(alert: Alert) -> dict[str, Any]:
    """The ``extra=`` of a log line about ``alert``: its id, kind, severity and where (what applies)."""
    fields = {
        "alert_id": alert.id,
        "kind": alert.kind,
        "severity": alert.severity,
        "cluster": alert.cluster,
        "group": alert.group,
        "topic": alert.topic,
        "partition": alert.partition,
    }
    return {k: v for k, v in fields.items() if v is not None}


def utc_time(created: float) -> str:
    """``2025-01-31T09:15:02.123Z``: ISO-8601, UTC, milliseconds."""
    return datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _message(record: logging.LogRecord) -> str:
    try:
        return record.getMessage()
    except Exception:  # a bad format or argument must not cost the record
        return f"{_text(record.msg)} (arguments not formatted: {_text(record.args)})"


def _text(value: Any) -> str:
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__} without a str>"


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return _text(value)


def _dumps(line: Mapping[str, Any]) -> str:
    try:  # ASCII: a stderr without UTF-8 (LANG=C) must not refuse the line
        return json.dumps(line, default=_text, allow_nan=False)
    except (TypeError, ValueError):  # NaN, a cycle, a key JSON cannot hold, somewhere in an extra
        return json.dumps({key: _fits(value) for key, value in line.items()}, default=_text, allow_nan=False)


def _fits(value: Any) -> Any:
    """``value`` if JSON holds it, else its text (one odd field does not flatten the others)."""
    try:
        json.dumps(value, default=_text, allow_nan=False)
    except (TypeError, ValueError):
        return _plain(value)
    return value


def levels(level: LogLevel, access_log: bool) -> dict[str, int]:
    """Logger name (``""``: the root) to level, for ``log_level`` ``level``."""
    own = logging.getLevelNamesMapping()[level]
    others = own if own == logging.DEBUG else max(own, logging.WARNING)
    out = {"": others}
    out.update(dict.fromkeys(THIRD_PARTY, others))
    out.update(dict.fromkeys(OWN_PACKAGES, own))
    out[ACCESS_LOGGER] = own if access_log else OFF
    return out


def formatter(fmt: LogFormat) -> logging.Formatter:
    return JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT)


def configure(
    level: LogLevel, fmt: LogFormat, *, access_log: bool = True, stream: IO[str] | None = None
) -> logging.Handler:
    """Replace the root logger's handlers by one writing ``fmt`` to ``stream`` (stderr) and set the levels
    of :func:`levels`. Python warnings become records too (in JSON mode no plain line is left)."""
    handler = logging.StreamHandler(sys.stderr if stream is None else stream)
    handler.setFormatter(formatter(fmt))
    root = logging.getLogger()
    for old in list(root.handlers):  # basicConfig's, or an earlier configure's
        root.removeHandler(old)
    root.addHandler(handler)
    for name, value in levels(level, access_log).items():
        logging.getLogger(name or None).setLevel(value)
    for name in (*THIRD_PARTY, ACCESS_LOGGER):  # a dictConfig (uvicorn's own) may have detached them
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    logging.captureWarnings(True)
    return handler
