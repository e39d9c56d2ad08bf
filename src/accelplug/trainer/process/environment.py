"""Process-wide settings a run depends on: seeding, determinism, accelerator defaults, the MPS CPU fallback.

``seed_everything`` itself lives in :mod:`accelplug.seed` (Fabric uses it too) and is re-exported here.

Accelerator defaults (TF32 matmuls and ``cudnn.benchmark`` on CUDA) are applied only where the
current value is still torch's own, so a choice the user made is never silently replaced;
``ACCELPLUG_KEEP_TORCH_DEFAULTS=1`` opts out entirely (a user who set the "highest" matmul precision
explicitly looks the same as torch's default). ``deterministic``/``benchmark`` given to the Trainer
win over both. What was changed is returned so the Trainer can say so once.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import TYPE_CHECKING

import torch

from ...envvars import env_flag
from ...seed import seed_everything

if TYPE_CHECKING:
    from ..options.entries import TrainerOptions

__all__ = [
    "MPS_FALLBACK_ENV",
    "apply_accelerator_defaults",
    "apply_run_settings",
    "check_mps_fallback",
    "seed_everything",
]

MPS_FALLBACK_ENV = "PYTORCH_ENABLE_MPS_FALLBACK"
KEEP_DEFAULTS_ENV = "ACCELPLUG_KEEP_TORCH_DEFAULTS"


def apply_accelerator_defaults(device_type: str) -> list[str]:
    """Switch on the fast paths an accelerator wants; returns a line per setting changed."""
    if env_flag(KEEP_DEFAULTS_ENV):
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


def apply_run_settings(device_type: str, options: TrainerOptions, *, verbose: bool) -> list[str]:
    """Determinism and benchmark mode as asked, else the accelerator's defaults; printed once when verbose."""
    notes: list[str] = []
    if options.deterministic:
        warn_only = options.deterministic == "warn"
        torch.use_deterministic_algorithms(True, warn_only=warn_only)
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        notes.append(f"deterministic algorithms on{' (warn only)' if warn_only else ''}; cudnn.benchmark off")
    elif options.deterministic is False:
        torch.use_deterministic_algorithms(False)
    if options.benchmark is not None and not options.deterministic:
        torch.backends.cudnn.benchmark = options.benchmark
    if not options.deterministic and options.benchmark is None:
        notes += apply_accelerator_defaults(device_type)
    if notes and verbose:
        for note in notes:
            print(f"accelplug: {note}", file=sys.stderr)
    return notes


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
