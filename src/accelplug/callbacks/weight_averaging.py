"""``WeightAveraging`` and ``EMAWeightAveraging``: an averaged copy of the model, kept up to date while training.

Lightning 2.6's ``lightning.pytorch.callbacks`` names, built on :class:`torch.optim.swa_utils.AveragedModel`.
The copy is made in ``setup("fit")`` and updated after the optimizer steps (and epochs) that
:meth:`WeightAveraging.should_update` picks. It stands in for the training weights wherever Lightning puts
it: validation runs on the averaged weights (swapped in for the validation epoch and back out after it), a
checkpoint's ``state_dict`` holds them (the training weights go under ``current_model_state``, the
averager's own state under ``averaging_state``, so a resume continues both), and when training ends the
module keeps them.
"""

from __future__ import annotations

import itertools
import logging
import warnings
from collections.abc import Iterator
from copy import deepcopy
from typing import Any

import torch
from torch.optim.swa_utils import AveragedModel, get_ema_avg_fn

from ..errors import MisconfigurationException
from ..overrides import overrides
from .base import Callback

__all__ = ["EMAWeightAveraging", "WeightAveraging"]

log = logging.getLogger(__name__)

#: The prefix ``AveragedModel.state_dict()`` puts before the wrapped module's own keys.
_MODULE_PREFIX = "module."


def check_device(device: Any, *, index: bool = True) -> torch.device | int | None:
    """``device`` as the averaged copy will be placed: None (the model's), a ``torch.device`` (a string is
    parsed), or with ``index`` a CUDA device index."""
    if device is None or isinstance(device, torch.device):
        return device
    accepted = "None (the model's device), a torch.device, a string such as 'cpu' or 'cuda:0'" + (
        ", or a CUDA device index" if index else ""
    )
    if isinstance(device, bool) or not isinstance(device, (str, int)) or (isinstance(device, int) and not index):
        raise MisconfigurationException(
            f"device={device!r} ({type(device).__name__}) is not a device; pass {accepted}."
        )
    if isinstance(device, int):
        if device < 0:
            raise MisconfigurationException(f"device={device} is not a device index; pass an int >= 0.")
        return device
    try:
        return torch.device(device)
    except RuntimeError:
        raise MisconfigurationException(
            f"device={device!r} is not a device torch knows; pass e.g. 'cpu', 'cuda', 'cuda:0' or 'mps'."
        ) from None


def _tensors(module: torch.nn.Module) -> Iterator[torch.Tensor]:
    """Parameters then buffers, the order in which the two models are paired up."""
    return itertools.chain(module.parameters(), module.buffers())


class WeightAveraging(Callback):
    """Keeps an :class:`~torch.optim.swa_utils.AveragedModel` of the module (SWA by default, or any ``avg_fn``).

    ``device``: where the averaged copy lives (None: the model's; ``"cpu"`` saves accelerator memory).
    ``use_buffers``: average the buffers too (True, unlike ``AveragedModel``'s default), so BatchNorm
    statistics need no extra pass. Other keyword arguments (``avg_fn``, ``multi_avg_fn``) go to
    ``AveragedModel``. Override :meth:`should_update` to choose when the copy is updated.
    """

    def __init__(self, device: torch.device | str | int | None = None, use_buffers: bool = True, **kwargs: Any) -> None:
        self._device = check_device(device)
        if not isinstance(use_buffers, bool):
            raise MisconfigurationException(f"use_buffers={use_buffers!r} is not a bool; pass True or False.")
        self._use_buffers = use_buffers
        unknown = sorted(set(kwargs) - {"avg_fn", "multi_avg_fn"})
        if unknown:
            raise MisconfigurationException(
                f"WeightAveraging got unexpected keyword argument(s) {unknown}; besides device and use_buffers it "
                "accepts AveragedModel's avg_fn and multi_avg_fn."
            )
        for name in ("avg_fn", "multi_avg_fn"):
            if kwargs.get(name) is not None and not callable(kwargs[name]):
                raise MisconfigurationException(f"{name}={kwargs[name]!r} is not callable; pass a function or None.")
        self._kwargs = kwargs
        self._average_model: AveragedModel | None = None
        # Optimizer steps taken when the copy was last updated: starting at 0, the first update can only
        # follow the first optimizer step (after N batches with accumulate_grad_batches=N).
        self._latest_update_step = 0
        # The epoch after which the copy was last updated (-1: none yet, so epoch 0 may update it).
        self._latest_update_epoch = -1

    def should_update(self, step_idx: int | None = None, epoch_idx: int | None = None) -> bool:
        """Whether to update the averaged copy after optimizer step ``step_idx`` or epoch ``epoch_idx``
        (0-based; one of them is given). The default: after every optimizer step."""
        return step_idx is not None

    def setup(self, trainer: Any, pl_module: torch.nn.Module, stage: str) -> None:
        if stage != "fit":
            return
        device = self._device if self._device is not None else module_device(pl_module)
        if overrides(pl_module, "configure_model"):
            # The layers must exist before they are copied; the copy cannot be sharded, hence the warning.
            warnings.warn(
                "You're using the WeightAveraging callback with a model that overrides the configure_model "
                "callback. WeightAveraging doesn't support sharding model layers, so you may run out of memory.",
                UserWarning,
                stacklevel=2,
            )
            pl_module.configure_model()  # type: ignore[operator]
        self._average_model = AveragedModel(
            model=pl_module, device=device, use_buffers=self._use_buffers, **self._kwargs
        )

    def on_train_batch_end(
        self, trainer: Any, pl_module: torch.nn.Module, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        # global_step counts optimizer steps; should_update gets the 0-based index of the last one.
        step = trainer.global_step
        if step > self._latest_update_step and self.should_update(step_idx=step - 1):
            self._update(pl_module)
            self._latest_update_step = step

    def on_train_epoch_end(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        epoch = trainer.current_epoch
        if epoch > self._latest_update_epoch and self.should_update(epoch_idx=epoch):
            self._update(pl_module)
            self._latest_update_epoch = epoch

    def on_train_end(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        self._copy_average_to_current(pl_module)

    def on_validation_epoch_start(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        if self._average_model is not None:
            self._swap_models(pl_module)

    def on_validation_epoch_end(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        if self._average_model is not None:
            self._swap_models(pl_module)

    def state_dict(self) -> dict[str, Any]:
        return {"latest_update_step": self._latest_update_step}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._latest_update_step = state_dict["latest_update_step"]

    def on_save_checkpoint(self, trainer: Any, pl_module: torch.nn.Module, checkpoint: dict[str, Any]) -> None:
        """The averaged weights become the checkpoint's ``state_dict`` (what a later ``validate``, ``test`` or
        ``load_from_checkpoint`` reads); the training weights move to ``current_model_state``."""
        if self._average_model is None:
            log.info(
                "You're using the WeightAveraging callback, but saving a checkpoint outside the 'fit' stage. The "
                "state of the WeightAveraging callback won't be saved in the checkpoint. If training has finished, "
                "the average model parameters will be saved to the state_dict in the checkpoint."
            )
            return
        averaged = self._average_model.state_dict()
        checkpoint["current_model_state"] = checkpoint["state_dict"]
        checkpoint["state_dict"] = {
            name.removeprefix(_MODULE_PREFIX): value for name, value in averaged.items() if _is_module_key(name)
        }
        checkpoint["averaging_state"] = {name: value for name, value in averaged.items() if not _is_module_key(name)}

    def on_load_checkpoint(self, trainer: Any, pl_module: torch.nn.Module, checkpoint: dict[str, Any]) -> None:
        """Resuming: the averaged copy from ``state_dict`` and ``averaging_state``, the module's training
        weights from ``current_model_state`` (the Trainer has just loaded the averaged ones into it)."""
        if self._average_model is None:
            warnings.warn(
                "You're using the WeightAveraging callback, but loading a checkpoint outside the 'fit' stage. The "
                "WeightAveraging state cannot be restored. If you're using the checkpoint for prediction or testing, "
                "you can ignore this warning. To disable the warning, remove the WeightAveraging callback.",
                UserWarning,
                stacklevel=2,
            )
        elif "current_model_state" in checkpoint and "averaging_state" in checkpoint:
            log.info("Found current_model_state in the checkpoint. This will be used to initialize the model.")
            averaged = {_MODULE_PREFIX + name: value for name, value in checkpoint["state_dict"].items()}
            averaged.update(checkpoint["averaging_state"])
            self._average_model.load_state_dict(averaged)
            pl_module.load_state_dict(checkpoint["current_model_state"])
        else:
            warnings.warn(
                "The checkpoint was not created with WeightAveraging. Both the current and the average model will "
                "be initialized with state_dict.",
                UserWarning,
                stacklevel=2,
            )
            self._average_model.module.load_state_dict(deepcopy(checkpoint["state_dict"]), strict=False)

    # ---- moving weights between the two models ----------------------------------------------------------
    def _update(self, pl_module: torch.nn.Module) -> None:
        assert self._average_model is not None, "setup('fit') makes the averaged copy before training"
        self._average_model.update_parameters(pl_module)

    def _swap_models(self, pl_module: torch.nn.Module) -> None:
        """Exchange the values of the module's and the averaged copy's parameters and buffers."""
        assert self._average_model is not None
        for averaged, current in zip(_tensors(self._average_model.module), _tensors(pl_module), strict=False):
            kept = averaged.data.clone()
            averaged.data.copy_(current.data)
            current.data.copy_(kept)

    def _copy_average_to_current(self, pl_module: torch.nn.Module) -> None:
        assert self._average_model is not None, "setup('fit') makes the averaged copy before training"
        for averaged, current in zip(_tensors(self._average_model.module), _tensors(pl_module), strict=False):
            current.data.copy_(averaged.data)


class EMAWeightAveraging(WeightAveraging):
    """An exponential moving average of the weights (``decay`` per update), updated every
    ``update_every_n_steps`` optimizer steps from ``update_starting_at_step``, and after every epoch from
    ``update_starting_at_epoch`` when that is given."""

    def __init__(
        self,
        device: torch.device | str | int | None = None,
        use_buffers: bool = True,
        decay: float = 0.999,
        update_every_n_steps: int = 1,
        update_starting_at_step: int | None = None,
        update_starting_at_epoch: int | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(decay, bool) or not isinstance(decay, (int, float)) or not 0.0 <= decay <= 1.0:
            raise MisconfigurationException(f"decay={decay!r} is not a decay; pass a float between 0 and 1.")
        if isinstance(update_every_n_steps, bool) or not isinstance(update_every_n_steps, int):
            raise MisconfigurationException(
                f"update_every_n_steps={update_every_n_steps!r} is not an int; pass an int >= 1 (0 or less: "
                "never update after a step)."
            )
        for name, value in (
            ("update_starting_at_step", update_starting_at_step),
            ("update_starting_at_epoch", update_starting_at_epoch),
        ):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise MisconfigurationException(f"{name}={value!r} is not an index; pass None or an int >= 0.")
        if "avg_fn" in kwargs or "multi_avg_fn" in kwargs:
            raise MisconfigurationException(
                "EMAWeightAveraging averages with its decay; pass decay=..., or use WeightAveraging(avg_fn=...) "
                "for another averaging function."
            )
        super().__init__(device=device, use_buffers=use_buffers, **kwargs, avg_fn=get_ema_avg_fn(decay=decay))  # type: ignore[no-untyped-call]
        self.update_every_n_steps = update_every_n_steps
        self.update_starting_at_step = update_starting_at_step
        self.update_starting_at_epoch = update_starting_at_epoch

    def should_update(self, step_idx: int | None = None, epoch_idx: int | None = None) -> bool:
        if step_idx is not None:
            started = self.update_starting_at_step is None or step_idx >= self.update_starting_at_step
            every = self.update_every_n_steps
            if started and every > 0 and step_idx % every == 0:
                return True
        start_epoch = self.update_starting_at_epoch
        return epoch_idx is not None and start_epoch is not None and epoch_idx >= start_epoch


def _is_module_key(name: str) -> bool:
    return name.startswith(_MODULE_PREFIX)


def module_device(module: torch.nn.Module) -> torch.device:
    """The module's device (a LightningModule's ``device``; else its first parameter's or buffer's)."""
    device = getattr(module, "device", None)
    if isinstance(device, torch.device):
        return device
    first = next(_tensors(module), None)
    return first.device if first is not None else torch.device("cpu")
