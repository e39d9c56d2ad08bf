"""The DeepSpeed config a strategy's arguments and the Trainer's precision stand for (no deepspeed import).

Kept apart from the engine so every argument can be checked, and every mapping tested, on a machine where the
engine itself cannot run. The keys are DeepSpeed's (https://www.deepspeed.ai/docs/config-json/); the argument
names and defaults follow Lightning 2.6's ``DeepSpeedStrategy``.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from accelplug.errors import MisconfigurationException

__all__ = ["OFFLOAD_DEVICES", "STAGES", "deepspeed_config", "load_user_config", "precision_config"]

STAGES = (0, 1, 2, 3)
OFFLOAD_DEVICES = ("cpu", "nvme")
_BF16 = ("bf16-mixed", "bf16-true")
_FP16 = ("16-mixed", "16-true")
_FP32 = ("32-true",)


def _close(value: object, accepted: Sequence[object]) -> str:
    match = difflib.get_close_matches(str(value), [str(a) for a in accepted], n=1, cutoff=0.5)
    return f" Did you mean {match[0]!r}?" if match else ""


def _choice(argument: str, value: object, accepted: Sequence[object]) -> None:
    if value in accepted and type(value) is type(accepted[0]):
        return
    shown = ", ".join(repr(a) for a in accepted)
    raise MisconfigurationException(
        f"DeepSpeedStrategy({argument}={value!r}) is not accepted; expected one of {shown}.{_close(value, accepted)}"
    )


def load_user_config(config: str | os.PathLike[str] | dict[str, Any] | None) -> dict[str, Any] | None:
    """A copy of the user's DeepSpeed config: the dict itself, or the JSON file a path names (``DEEPSPEED_CONFIG_PATH``
    when no config is given, as Lightning reads it)."""
    if config is None:
        env = os.environ.get("DEEPSPEED_CONFIG_PATH")
        if not env:
            return None
        config = env
    if isinstance(config, dict):
        return copy.deepcopy(config)
    if not isinstance(config, (str, os.PathLike)):
        raise MisconfigurationException(
            f"DeepSpeedStrategy(config={config!r}) is neither a dict nor the path of a JSON file."
        )
    path = Path(config).expanduser()
    if not path.is_file():
        raise MisconfigurationException(
            f"DeepSpeedStrategy(config={os.fspath(config)!r}): no such file; pass a dict or the path of a DeepSpeed "
            "JSON config."
        )
    try:
        loaded = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise MisconfigurationException(f"DeepSpeed config {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(loaded, dict):
        raise MisconfigurationException(
            f"DeepSpeed config {str(path)!r} holds a {type(loaded).__name__}, not an object."
        )
    return loaded


def deepspeed_config(
    *,
    zero_optimization: bool = True,
    stage: int = 2,
    offload_optimizer: bool = False,
    offload_parameters: bool = False,
    offload_optimizer_device: str = "cpu",
    offload_params_device: str = "cpu",
    nvme_path: str = "/local_nvme",
    pin_memory: bool = False,
    contiguous_gradients: bool = True,
    overlap_comm: bool = True,
    allgather_partitions: bool = True,
    reduce_scatter: bool = True,
    allgather_bucket_size: int = 200_000_000,
    reduce_bucket_size: int = 200_000_000,
    sub_group_size: int = 1_000_000_000_000,
    zero_allow_untested_optimizer: bool = True,
    partition_activations: bool = False,
    cpu_checkpointing: bool = False,
    logging_batch_size_per_gpu: str | int = "auto",
) -> dict[str, Any]:
    """The config Lightning's defaults build from these arguments, after checking each of them."""
    _choice("stage", stage, STAGES)
    _choice("offload_optimizer_device", offload_optimizer_device, OFFLOAD_DEVICES)
    _choice("offload_params_device", offload_params_device, OFFLOAD_DEVICES)
    for name, size in (("allgather_bucket_size", allgather_bucket_size), ("reduce_bucket_size", reduce_bucket_size)):
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise MisconfigurationException(f"DeepSpeedStrategy({name}={size!r}): expected a positive int (elements).")
    if offload_parameters and stage != 3:
        raise MisconfigurationException(
            f"DeepSpeedStrategy(offload_parameters=True) needs stage=3 (only ZeRO-3 partitions parameters), got "
            f"stage={stage}; use offload_optimizer=True with stage 1 or 2."
        )
    if (offload_optimizer or offload_parameters) and (not zero_optimization or stage == 0):
        raise MisconfigurationException(
            "DeepSpeedStrategy: offloading needs ZeRO (zero_optimization=True and stage 1, 2 or 3)."
        )
    if logging_batch_size_per_gpu != "auto" and (
        isinstance(logging_batch_size_per_gpu, bool)
        or not isinstance(logging_batch_size_per_gpu, int)
        or logging_batch_size_per_gpu <= 0
    ):
        raise MisconfigurationException(
            f"DeepSpeedStrategy(logging_batch_size_per_gpu={logging_batch_size_per_gpu!r}): expected 'auto' or a "
            "positive int."
        )
    config: dict[str, Any] = {
        "activation_checkpointing": {
            "partition_activations": partition_activations,
            "cpu_checkpointing": cpu_checkpointing,
        },
    }
    if zero_optimization:
        zero: dict[str, Any] = {
            "stage": stage,
            "contiguous_gradients": contiguous_gradients,
            "overlap_comm": overlap_comm,
            "allgather_partitions": allgather_partitions,
            "reduce_scatter": reduce_scatter,
            "allgather_bucket_size": allgather_bucket_size,
            "reduce_bucket_size": reduce_bucket_size,
            "sub_group_size": sub_group_size,
        }
        if offload_optimizer:
            zero["offload_optimizer"] = {
                "device": offload_optimizer_device,
                "nvme_path": nvme_path,
                "pin_memory": pin_memory,
            }
        if offload_parameters:
            zero["offload_param"] = {"device": offload_params_device, "nvme_path": nvme_path, "pin_memory": pin_memory}
        config = {"zero_allow_untested_optimizer": zero_allow_untested_optimizer, "zero_optimization": zero, **config}
    if logging_batch_size_per_gpu != "auto":
        config["train_micro_batch_size_per_gpu"] = logging_batch_size_per_gpu
    return config


def precision_config(
    precision: str,
    *,
    loss_scale: float = 0.0,
    initial_scale_power: int = 16,
    loss_scale_window: int = 1000,
    hysteresis: int = 2,
    min_loss_scale: int = 1,
) -> dict[str, Any]:
    """The config entries for the Trainer's precision: DeepSpeed keeps float32 master weights and runs the model in
    the low dtype itself, with its own dynamic loss scale for float16 (``loss_scale=0`` means dynamic)."""
    if precision in _BF16:
        return {"bf16": {"enabled": True}}
    if precision in _FP16:
        return {
            "fp16": {
                "enabled": True,
                "loss_scale": loss_scale,
                "initial_scale_power": initial_scale_power,
                "loss_scale_window": loss_scale_window,
                "hysteresis": hysteresis,
                "min_loss_scale": min_loss_scale,
            }
        }
    if precision in _FP32:
        return {}
    accepted = (*_BF16, *_FP16, *_FP32)
    hint = _close(precision, accepted)
    raise MisconfigurationException(
        f"precision={precision!r} cannot run under DeepSpeed; accepted: {', '.join(accepted)}.{hint}"
    )
