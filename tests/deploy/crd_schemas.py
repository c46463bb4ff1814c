"""JSON Schemas for the two Prometheus Operator kinds the manifests ship (monitoring.coreos.com/v1).

kubernetes-validate bundles only the built-in kinds, so it warns and skips these. These schemas are the
subset of the operator's CRDs that triagebot uses, strict (no unknown field), with the operator's own
patterns for durations: enough to catch a typo or a wrong type before a cluster does.
"""

from __future__ import annotations

from typing import Any

DURATION = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"

_STR_MAP: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}}

_METADATA: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "pattern": r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", "maxLength": 253},
        "namespace": {"type": "string"},
        "labels": _STR_MAP,
        "annotations": _STR_MAP,
    },
    "additionalProperties": False,
}

_LABEL_SELECTOR: dict[str, Any] = {
    "type": "object",
    "properties": {
        "matchLabels": _STR_MAP,
        "matchExpressions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key", "operator"],
                "properties": {
                    "key": {"type": "string"},
                    "operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist"]},
                    "values": {"type": "array", "items": {"type": "string"}},
                },
                "additionalProperties": False,
            },
        },
    },
    "additionalProperties": False,
}

_RELABEL: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sourceLabels": {"type": "array", "items": {"type": "string"}},
        "separator": {"type": "string"},
        "targetLabel": {"type": "string"},
        "regex": {"type": "string"},
        "modulus": {"type": "integer"},
        "replacement": {"type": "string"},
        "action": {"enum": ["replace", "Replace", "keep", "Keep", "drop", "Drop", "hashmod", "HashMod",
                            "labelmap", "LabelMap", "labeldrop", "LabelDrop", "labelkeep", "LabelKeep",
                            "lowercase", "Lowercase", "uppercase", "Uppercase", "keepequal", "KeepEqual",
                            "dropequal", "DropEqual"]},
    },
    "additionalProperties": False,
}


def _crd(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A monitoring.coreos.com/v1 object of `kind`: its metadata and its `spec`, nothing else."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"const": "monitoring.coreos.com/v1"},
            "kind": {"const": kind},
            "metadata": _METADATA,
            "spec": spec,
        },
        "additionalProperties": False,
    }


SERVICE_MONITOR = _crd("ServiceMonitor", {
        "type": "object",
        "required": ["selector", "endpoints"],
        "properties": {
            "jobLabel": {"type": "string"},
            "targetLabels": {"type": "array", "items": {"type": "string"}},
            "podTargetLabels": {"type": "array", "items": {"type": "string"}},
            "selector": _LABEL_SELECTOR,
            "namespaceSelector": {
                "type": "object",
                "properties": {"any": {"type": "boolean"},
                               "matchNames": {"type": "array", "items": {"type": "string"}}},
                "additionalProperties": False,
            },
            "sampleLimit": {"type": "integer", "minimum": 0},
            "endpoints": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "port": {"type": "string"},
                        "targetPort": {"type": ["string", "integer"]},
                        "path": {"type": "string", "pattern": "^/"},
                        "scheme": {"enum": ["http", "https"]},
                        "interval": {"type": "string", "pattern": DURATION},
                        "scrapeTimeout": {"type": "string", "pattern": DURATION},
                        "honorLabels": {"type": "boolean"},
                        "honorTimestamps": {"type": "boolean"},
                        "relabelings": {"type": "array", "items": _RELABEL},
                        "metricRelabelings": {"type": "array", "items": _RELABEL},
                    },
                    "additionalProperties": False,
                },
            },
        },
        "additionalProperties": False,
    })

_RULE: dict[str, Any] = {
    "type": "object",
    "required": ["expr"],
    "oneOf": [{"required": ["alert"]}, {"required": ["record"]}],
    "properties": {
        "alert": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
        "record": {"type": "string"},
        "expr": {"type": ["string", "integer"], "minLength": 1},
        "for": {"type": "string", "pattern": DURATION},
        "keep_firing_for": {"type": "string", "pattern": DURATION},
        "labels": _STR_MAP,
        "annotations": _STR_MAP,
    },
    "additionalProperties": False,
}

PROMETHEUS_RULE = _crd("PrometheusRule", {
        "type": "object",
        "properties": {
            "groups": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "rules"],
                    "properties": {
                        "name": {"type": "string", "minLength": 1},
                        "interval": {"type": "string", "pattern": DURATION},
                        "limit": {"type": "integer"},
                        "partial_response_strategy": {"type": "string"},
                        "rules": {"type": "array", "items": _RULE},
                    },
                    "additionalProperties": False,
                },
            },
        },
        "additionalProperties": False,
    })

SCHEMAS: dict[str, dict[str, Any]] = {"ServiceMonitor": SERVICE_MONITOR, "PrometheusRule": PROMETHEUS_RULE}
