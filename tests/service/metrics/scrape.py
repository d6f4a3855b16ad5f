"""Reading samples back out of a registry, keyed by their labels."""

from __future__ import annotations

from prometheus_client.registry import CollectorRegistry

Labels = frozenset[tuple[str, str]]


def samples(registry: CollectorRegistry, name: str) -> dict[Labels, float]:
    """Every sample called ``name`` (a family's sample name, ``..._total`` for counters)."""
    found: dict[Labels, float] = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name == name:
                key = frozenset(sample.labels.items())
                assert key not in found, f"duplicate series {name}{dict(key)}"
                found[key] = sample.value
    return found


def labels(**values: str) -> Labels:
    return frozenset(values.items())


def family_names(registry: CollectorRegistry) -> set[str]:
    return {family.name for family in registry.collect()}
