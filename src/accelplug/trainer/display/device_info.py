"""What a new Trainer says about the machine's accelerators: Lightning's two INFO lines and its advice.

Lightning's ``Trainer()`` reports whether a GPU (CUDA or MPS) and a TPU (XLA) are available and whether the run
uses them, and warns (a ``PossibleUserWarning``) when a GPU or TPU sits unused. Scripts and their tests read these
lines from the log; a user who forgot ``accelerator=`` on a GPU machine learns it from the warning before a slow run.

The answers come from the registry (each accelerator's checked ``is_available``), which for CUDA counts devices
without initialising it, so a Trainer that runs on the CPU leaves CUDA uninitialised, as ``"auto"`` does.
Accelerators other than these three are not named: the lines keep Lightning's words, which tools parse. Like the
Trainer's other INFO lines they go to the ``accelplug.trainer`` logger, shown on standard error as Lightning shows
its own (:mod:`accelplug._console`).
"""

from __future__ import annotations

import logging

from ...accelerator import Accelerator
from ...distributed.rank_zero import is_rank_zero, rank_zero_warn
from ...errors import PossibleUserWarning

__all__ = ["report_devices"]

#: Lightning's "GPU" accelerators, in the order it asks them (the first available one names the line).
_GPUS = ("cuda", "mps")


def _availability(names: tuple[str, ...]) -> dict[str, bool]:
    """Whether each of ``names`` is registered and usable here (a broken or missing plugin counts as not), each
    asked of the registry once."""
    from ...registry import get_registry

    registry = get_registry()
    registered = set(registry.names())
    return {name: name in registered and registry.status(name).available for name in names}


def report_devices(accelerator: Accelerator, num_devices: int) -> None:
    """Log Lightning's ``GPU available``/``TPU available`` lines (global rank zero) and warn about an unused one."""
    if not is_rank_zero():
        return
    log = logging.getLogger("accelplug.trainer")
    used, available = accelerator.name, _availability((*_GPUS, "xla"))
    gpu = next((name for name in _GPUS if available[name]), None)
    log.info("GPU available: %s%s, used: %s", gpu is not None, f" ({gpu})" if gpu else "", used in _GPUS)
    tpu = available["xla"]
    log.info("TPU available: %s, using: %d TPU cores", tpu, num_devices if used == "xla" else 0)
    if any(name != used and available[name] for name in _GPUS):
        rank_zero_warn(
            "GPU available but not used. You can set it by doing `Trainer(accelerator='gpu')`.",
            category=PossibleUserWarning,
            stacklevel=4,
        )
    if tpu and used != "xla":
        rank_zero_warn(
            "TPU available but not used. You can set it by doing `Trainer(accelerator='tpu')`.", stacklevel=4
        )
