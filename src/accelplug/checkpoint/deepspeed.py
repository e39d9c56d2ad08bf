"""A DeepSpeed ZeRO checkpoint folder as one file of full-precision weights (Lightning's ``utilities.deepspeed``).

A DeepSpeed run saves a folder: a ``latest`` file naming the newest tag, and per tag the partitioned model and
optimizer states of every rank. ``convert_zero_checkpoint_to_fp32_state_dict`` gathers the float32 weights with
DeepSpeed's own reader and writes them, with the run's other checkpoint entries (epoch, loops, callbacks...),
as one file ``LightningModule.load_from_checkpoint`` and ``torch.load`` read without DeepSpeed. It needs the
``deepspeed`` package (the ``accelplug-deepspeed`` plugin brings it); finding the tag's folder does not.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from ..errors import BackendNotInstalledError

__all__ = ["CPU_DEVICE", "convert_zero_checkpoint_to_fp32_state_dict", "ds_checkpoint_dir"]

#: Where the converted tensors are loaded.
CPU_DEVICE = torch.device("cpu")
#: Entries of DeepSpeed's model-state file that are DeepSpeed's own, not the run's.
_DEEPSPEED_ENTRIES = (
    "module",
    "optimizer",
    "lr_scheduler",
    "csr_tensor_module_names",
    "skipped_steps",
    "global_steps",
    "dp_world_size",
    "mp_world_size",
)


def ds_checkpoint_dir(checkpoint_dir: str | os.PathLike[str], tag: str | None = None) -> str:
    """The folder of ``tag`` in a DeepSpeed checkpoint folder (default: the one its ``latest`` file names)."""
    if tag is None:
        latest = os.path.join(checkpoint_dir, "latest")
        if not os.path.isfile(latest):
            raise ValueError(f"Unable to find 'latest' file at {latest}")
        with open(latest) as file:
            tag = file.read().strip()
    directory = os.path.join(checkpoint_dir, tag)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"Directory '{directory}' doesn't exist")
    return directory


def _strip(key: str, prefix: str = "_forward_module.") -> str:
    """A weight's name without the wrapper prefix checkpoints of Lightning before 2.1 carry."""
    return key[len(prefix) :] if key.startswith(prefix) else key


def convert_zero_checkpoint_to_fp32_state_dict(
    checkpoint_dir: str | os.PathLike[str], output_file: str | os.PathLike[str], tag: str | None = None
) -> dict[str, Any]:
    """Write ``checkpoint_dir``'s ZeRO stage 2/3 checkpoint (``tag``, default the latest) as one file of float32
    weights under ``"state_dict"`` with the run's other entries, to ``output_file``; returns what was written."""
    try:
        from deepspeed.utils.zero_to_fp32 import (
            get_fp32_state_dict_from_zero_checkpoint,
            get_model_state_file,
            get_optim_files,
        )
    except ImportError:
        raise BackendNotInstalledError(
            "convert_zero_checkpoint_to_fp32_state_dict reads a DeepSpeed checkpoint with DeepSpeed's own reader: "
            "pip install accelplug-deepspeed (it brings deepspeed)."
        ) from None
    weights = get_fp32_state_dict_from_zero_checkpoint(checkpoint_dir, tag)
    folder = ds_checkpoint_dir(checkpoint_dir, tag)
    optimizer_state = torch.load(get_optim_files(folder)[0], map_location=CPU_DEVICE, weights_only=False)
    stage = optimizer_state["optimizer_state_dict"]["zero_stage"]
    client_state = torch.load(get_model_state_file(folder, stage), map_location=CPU_DEVICE, weights_only=False)
    written = {key: value for key, value in client_state.items() if key not in _DEEPSPEED_ENTRIES}
    written["state_dict"] = {_strip(key): value for key, value in weights.items()}
    print(f"Saving fp32 state dict to {output_file}")
    torch.save(written, output_file)
    return written
