"""``self.log`` / ``self.log_dict`` for modules written for Lightning.

Lightning modules report metrics by calling ``self.log(name, value, ...)``, a method plain
``nn.Module``s lack. For the duration of a run the Trainer gives such a module a ``log`` and
``log_dict`` that record the values (detached, still on the device: no synchronisation), and takes
them away afterwards. A module that defines its own ``log`` is left alone. Lightning's keyword
arguments (``prog_bar``, ``on_step``, ``sync_dist``...) are accepted and ignored: values are always
averaged across processes when they are logged.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import torch

__all__ = ["LogSink", "attached_log"]


class LogSink:
    """Holds the latest value logged under each name since it was last drained."""

    def __init__(self) -> None:
        self.values: dict[str, torch.Tensor] = {}

    def log(self, name: str, value: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(value, torch.Tensor):
            if value.numel() == 1:
                self.values[str(name)] = value.detach().reshape(())
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            self.values[str(name)] = torch.tensor(float(value))

    def log_dict(self, values: Mapping[str, Any], *args: Any, **kwargs: Any) -> None:
        for name, value in values.items():
            self.log(name, value)

    def drain(self) -> dict[str, torch.Tensor]:
        values, self.values = self.values, {}
        return values


@contextlib.contextmanager
def attached_log(model: torch.nn.Module, sink: LogSink) -> Iterator[None]:
    """Give ``model`` ``log``/``log_dict`` bound to ``sink`` while the block runs, if it has none."""
    if hasattr(model, "log") or hasattr(model, "log_dict"):
        yield
        return
    object.__setattr__(model, "log", sink.log)
    object.__setattr__(model, "log_dict", sink.log_dict)
    try:
        yield
    finally:
        object.__delattr__(model, "log")
        object.__delattr__(model, "log_dict")
