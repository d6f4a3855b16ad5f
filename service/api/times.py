"""Time parameters: RFC 3339 (``2026-11-05T10:15:02Z``, ``...+01:00``) or epoch seconds (``1762337702.5``).

Everything else, a time without a UTC offset included, is refused with a 422 naming the parameter.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from service.api.errors import InvalidParameter

TIME_HELP = "RFC 3339 (e.g. 2026-11-05T10:15:02Z) or epoch seconds (e.g. 1762337702.5)"
_EPOCH = re.compile(r"^-?[0-9]{1,12}(\.[0-9]{1,9})?$")
_RFC3339 = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})$"
)
_LATEST = 253402300799.0  # 9999-12-31T23:59:59Z


def parse_time(value: str, parameter: str) -> float:
    """Epoch seconds of ``value``; :class:`InvalidParameter` naming ``parameter`` if it is not a time."""
    text = value.strip()
    if _EPOCH.fullmatch(text):
        seconds = float(text)
        if not 0 <= seconds <= _LATEST:
            raise InvalidParameter(
                f"{parameter} {value!r} is out of range (epoch seconds, not milliseconds)",
                parameter=parameter,
            )
        return seconds
    if _RFC3339.fullmatch(text):
        normalized = text.upper().replace(" ", "T").replace("Z", "+00:00")
        fraction = re.search(r"\.([0-9]+)", normalized)
        if fraction:  # fromisoformat takes at most microseconds
            normalized = normalized.replace(fraction.group(0), "." + fraction.group(1)[:6].ljust(6, "0"))
        try:
            seconds = datetime.fromisoformat(normalized).timestamp()
        except (ValueError, OverflowError) as exc:
            raise InvalidParameter(
                f"{parameter} {value!r} is not a valid time: {exc}", parameter=parameter
            ) from exc
        if math.isfinite(seconds):
            return seconds
    raise InvalidParameter(f"{parameter} {value!r} is not a time: expected {TIME_HELP}", parameter=parameter)


def rfc3339(seconds: float) -> str:
    """``seconds`` as an RFC 3339 UTC time with milliseconds."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
