"""Mappings as the store writes them in its JSON columns: compact, keys sorted (equal values compare equal as
text; tuples are arrays)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any


def _encoder(default: Callable[[Any], Any] | None = None) -> Callable[[Any], str]:
    """Compact JSON with sorted keys (equal evidence compares equal; tuples are arrays); values JSON has
    no type for go through ``default`` (None: refused). ``json.dumps`` with options builds an encoder a
    call, most of what a fleet's refresh of thousands of firing alerts cost (two or three objects an
    alert): one is built here, the C one where the interpreter has it, checked against the documented
    encoder once."""
    encoder = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=default)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return encoder.encode
    try:
        ascii_text = json.encoder.encode_basestring_ascii
        c = make(None, encoder.default, ascii_text, None, ":", ",", True, False, True)
        sample: dict[str, Any] = {"b": [1, 2.5, "\u00e9"], "a": None, "c": {"y": True, "x": -1e300}}
        if default is not None:
            sample["d"] = [1 + 2j]  # no JSON type: default's
        if "".join(c(sample, 0)) != encoder.encode(sample):
            return encoder.encode
    except TypeError:  # another interpreter's signature
        return encoder.encode
    return lambda value: "".join(c(value, 0))


_ENCODE = _encoder()
_ENCODE_TEXT = _encoder(str)


def sorted_compact(value: Mapping[str, Any]) -> str:
    """``value`` as compact JSON with sorted keys: what the store writes of a mapping (alerts' magnitudes
    and evidence, transition details, notification payloads)."""
    return _ENCODE(value if type(value) is dict else dict(value))


def sorted_compact_text(value: Mapping[str, Any]) -> str:
    """As :func:`sorted_compact`, with values JSON has no type for written as their ``str`` (an alert's
    occurrence identity, :func:`service.detection.lifecycle.occurrence_identity`)."""
    return _ENCODE_TEXT(value if type(value) is dict else dict(value))
