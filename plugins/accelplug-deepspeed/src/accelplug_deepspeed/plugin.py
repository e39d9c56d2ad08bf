"""The module named by the ``deepspeed`` entry point in group ``accelplug``: the DeepSpeed strategies.

Cheap to import: deepspeed itself is imported only when a run with one of these strategies prepares its module.
"""

from __future__ import annotations

from accelplug import Strategy, hookimpl

from .strategy import STRATEGY_VARIANTS


@hookimpl
def register_strategies() -> list[type[Strategy]]:
    return list(STRATEGY_VARIANTS)
