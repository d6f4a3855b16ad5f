"""JSON schemas of the two prometheus-operator custom resources the chart renders.

``kubernetes-validate`` ships the schemas of Kubernetes' own kinds only, so these are transcribed from the
CRDs of prometheus-operator v0.84 (``example/prometheus-operator-crd/monitoring.coreos.com_*.yaml``,
``openAPIV3Schema``): the fields the chart can produce, with the CRDs' types, patterns and required keys.
They are stricter than the CRDs in one way: unknown fields are rejected (the API server would prune them
silently, which hides typos).
"""

from __future__ import annotations

from typing import Any

DURATION = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
STRING_MAP: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}}
METADATA: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "pattern": r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", "maxLength": 253},
        "namespace": {"type": "string"},
        "labels": STRING_MAP,
        "annotations": STRING_MAP,
    },
}
LABEL_SELECTOR: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "matchLabels": STRING_MAP,
        "matchExpressions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key", "operator"],
                "properties": {
                    "key": {"type": "string"},
                    "operator": {"type": "string"},
                    "values": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}
RELABEL_CONFIG: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "action": {
            "type": "string",
            "enum": [
                *("replace", "Replace", "keep", "Keep", "drop", "Drop", "hashmod", "HashMod"),
                *("labelmap", "LabelMap", "labeldrop", "LabelDrop", "labelkeep", "LabelKeep"),
                *("lowercase", "Lowercase", "uppercase", "Uppercase", "keepequal", "KeepEqual"),
                *("dropequal", "DropEqual"),
            ],
        },
        "modulus": {"type": "integer"},
        "regex": {"type": "string"},
        "replacement": {"type": "string"},
        "separator": {"type": "string"},
        "sourceLabels": {
            "type": "array",
            "items": {"type": "string", "pattern": r"^[a-zA-Z_][a-zA-Z0-9_]*$"},
        },
        "targetLabel": {"type": "string"},
    },
}
SECRET_KEY: dict[str, Any] = {
    "type": "object",
    "required": ["key"],
    "additionalProperties": False,
    "properties": {"key": {"type": "string"}, "name": {"type": "string"}, "optional": {"type": "boolean"}},
}

SERVICE_MONITOR: dict[str, Any] = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "ServiceMonitor"},
        "metadata": METADATA,
        "spec": {
            "type": "object",
            "required": ["selector", "endpoints"],
            "additionalProperties": False,
            "properties": {
                "selector": LABEL_SELECTOR,
                "namespaceSelector": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "any": {"type": "boolean"},
                        "matchNames": {"type": "array", "items": {"type": "string"}},
                    },
                },
                "jobLabel": {"type": "string"},
                "targetLabels": {"type": "array", "items": {"type": "string"}},
                "podTargetLabels": {"type": "array", "items": {"type": "string"}},
                "sampleLimit": {"type": "integer"},
                "endpoints": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "port": {"type": "string"},
                            "targetPort": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                            "path": {"type": "string"},
                            "scheme": {"type": "string", "enum": ["http", "https", "HTTP", "HTTPS"]},
                            "params": {
                                "type": "object",
                                "additionalProperties": {"type": "array", "items": {"type": "string"}},
                            },
                            "interval": {"type": "string", "pattern": DURATION},
                            "scrapeTimeout": {"type": "string", "pattern": DURATION},
                            "honorLabels": {"type": "boolean"},
                            "honorTimestamps": {"type": "boolean"},
                            "followRedirects": {"type": "boolean"},
                            "enableHttp2": {"type": "boolean"},
                            "filterRunning": {"type": "boolean"},
                            "bearerTokenSecret": SECRET_KEY,
                            "authorization": {
                                "type": "object",
                                "properties": {"credentials": SECRET_KEY, "type": {"type": "string"}},
                            },
                            "relabelings": {"type": "array", "items": RELABEL_CONFIG},
                            "metricRelabelings": {"type": "array", "items": RELABEL_CONFIG},
                        },
                    },
                },
            },
        },
    },
}

PROMETHEUS_RULE: dict[str, Any] = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "PrometheusRule"},
        "metadata": METADATA,
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "groups": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "additionalProperties": False,
                        "properties": {
                            "name": {"type": "string", "minLength": 1},
                            "interval": {"type": "string", "pattern": DURATION},
                            "query_offset": {"type": "string", "pattern": DURATION},
                            "limit": {"type": "integer"},
                            "labels": STRING_MAP,
                            "partial_response_strategy": {
                                "type": "string",
                                "pattern": "^([Aa][Bb][Oo][Rr][Tt]|[Ww][Aa][Rr][Nn])?$",
                            },
                            "rules": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "required": ["expr"],
                                    "additionalProperties": False,
                                    "properties": {
                                        "alert": {"type": "string"},
                                        "record": {"type": "string"},
                                        "expr": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                                        "for": {"type": "string", "pattern": DURATION},
                                        "keep_firing_for": {
                                            "type": "string",
                                            "minLength": 1,
                                            "pattern": DURATION,
                                        },
                                        "labels": STRING_MAP,
                                        "annotations": STRING_MAP,
                                    },
                                },
                            },
                        },
                    },
                }
            },
        },
    },
}

SCHEMAS: dict[tuple[str, str], dict[str, Any]] = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"): SERVICE_MONITOR,
    ("monitoring.coreos.com/v1", "PrometheusRule"): PROMETHEUS_RULE,
}
