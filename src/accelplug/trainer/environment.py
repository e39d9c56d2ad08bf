"""Process-wide settings a run depends on: seeding, accelerator defaults, the MPS CPU fallback.

Defaults are applied once per process, only where the current value is still torch's own default, so
a choice the user made (``torch.set_float32_matmul_precision("highest")`` after import would look
the same as the default, so the environment variable ``ACCELPLUG_KEEP_TORCH_DEFAULTS=1`` opts out)
is never silently replaced; what was changed is returned so the Trainer can report it.
"""

from __future__ import annotations

import os
import random
import sys
import warnings

import torch

__all__ = ["MPS_FALLBACK_ENV", "apply_accelerator_defaults", "check_mps_fallback", "seed_everything"]

MPS_FALLBACK_ENV = "PYTORCH_ENABLE_MPS_FALLBACK"
KEEP_DEFAULTS_ENV = "ACCELPLUG_KEEP_TORCH_DEFAULTS"


def seed_everything(seed: int) -> None:
    """Seed torch (every device), Python's ``random`` and numpy when it is loaded."""
    random.seed(seed)
    torch.manual_seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed)


def apply_accelerator_defaults(device_type: str) -> list[str]:
    """Switch on the fast paths an accelerator wants; returns a line per setting changed."""
    if os.environ.get(KEEP_DEFAULTS_ENV, "") not in ("", "0"):
        return []
    changed = []
    if device_type == "cuda":
        if torch.get_float32_matmul_precision() == "highest":
            torch.set_float32_matmul_precision("high")
            changed.append(
                "float32 matmuls use TF32 tensor cores (torch.set_float32_matmul_precision('high')); "
                f"set {KEEP_DEFAULTS_ENV}=1 to keep torch's defaults"
            )
        if not torch.backends.cudnn.benchmark and not torch.backends.cudnn.deterministic:
            torch.backends.cudnn.benchmark = True
            changed.append("cudnn.benchmark=True (fastest convolution algorithms for fixed input shapes)")
    return changed


def check_mps_fallback(requested: bool) -> None:
    """Warn when ``mps_fallback=True`` cannot work because torch was imported without the variable.

    torch reads ``PYTORCH_ENABLE_MPS_FALLBACK`` once, when it is imported, so setting it now only
    helps processes started from this one; the variable is set for them unless the user set it.
    """
    if not requested or os.environ.get(MPS_FALLBACK_ENV) is not None:
        return
    os.environ[MPS_FALLBACK_ENV] = "1"
    warnings.warn(
        f"mps_fallback=True has no effect in this process: torch was imported before {MPS_FALLBACK_ENV}=1 "
        "was set, and torch reads it only at import. Operations MPS lacks will still fail. Set it before "
        f"Python starts (`export {MPS_FALLBACK_ENV}=1`) or start the script with `accelplug launch --mps-fallback`.",
        UserWarning,
        stacklevel=3,
    )
