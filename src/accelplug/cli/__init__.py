"""Command line (placeholder until the CLI issue lands): prints the accelerator report."""

from __future__ import annotations


def main() -> None:
    from accelplug import get_registry

    registry = get_registry()
    for entry in registry.entries():
        reason = entry.cls.unavailable_reason()
        print(f"{entry.cls.name:8} {'available' if reason is None else 'unavailable: ' + reason}")
