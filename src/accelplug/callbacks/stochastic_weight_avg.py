"""``StochasticWeightAveraging``: average the weights of the last epochs, with the SWA learning-rate schedule.

Lightning 2.6's callback (Izmailov et al., "Averaging Weights Leads to Wider Optima and Better
Generalization", UAI 2018), on :class:`torch.optim.swa_utils.SWALR`. From epoch ``swa_epoch_start`` on:

- the optimizer's scheduler is replaced by ``SWALR`` (annealing to ``swa_lrs`` over ``annealing_epochs``),
  stepped once per epoch;
- at the start of each epoch the weights join an equal-weight running average (or ``avg_fn``'s);
- after the last epoch the averaged weights are copied into the model. A model with BatchNorm layers gets
  one epoch more: the averaged weights are copied in at its start, the running statistics reset, and the
  epoch runs ``training_step`` forward only so the statistics are recomputed for the averaged weights
  (``accelplug.trainer.loops._forward_only`` says exactly what that epoch does, Lightning's way).

The callback's ``state_dict`` (the average, how many models it holds, the scheduler's state) goes into
checkpoints, so a resumed fit continues the same average on the same schedule.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable
from copy import deepcopy
from typing import Any, Literal

import torch
from torch import nn
from torch.optim.swa_utils import SWALR

from ..errors import MisconfigurationException, did_you_mean
from ..strategies.optimizers import LRSchedulerConfig
from .base import Callback
from .weight_averaging import check_device, module_device

__all__ = ["StochasticWeightAveraging"]

log = logging.getLogger(__name__)

_AVG_FN = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
_STRATEGIES = ("cos", "linear")
#: Strategies whose model is sharded across processes: a full copy of it cannot be averaged (checked by class
#: name, so DeepSpeed's, which a plugin provides, is recognised without importing it).
_SHARDED = frozenset({"FSDPStrategy", "DeepSpeedStrategy"})
_EPOCH_START_ACCEPTED = "swa_epoch_start should be a >0 integer or a float between 0 and 1."
_LRS_ACCEPTED = "The `swa_lrs` should a positive float, or a list of positive floats"


def _check_epoch_start(value: Any) -> int | float:
    good_int = isinstance(value, int) and not isinstance(value, bool) and value >= 1
    if good_int or (isinstance(value, float) and 0.0 <= value <= 1.0):
        return value  # type: ignore[no-any-return]
    raise MisconfigurationException(
        f"{_EPOCH_START_ACCEPTED} Got swa_epoch_start={value!r}: an int epoch (1 is the first) or a fraction of "
        "max_epochs."
    )


def _positive_float(value: Any) -> bool:
    return isinstance(value, float) and value > 0


def _check_lrs(value: Any) -> float | list[float]:
    if _positive_float(value) or (isinstance(value, list) and value and all(_positive_float(v) for v in value)):
        return value  # type: ignore[no-any-return]
    hint = " (write 1.0, not 1)" if isinstance(value, int) and not isinstance(value, bool) and value > 0 else ""
    raise MisconfigurationException(f"{_LRS_ACCEPTED}; got swa_lrs={value!r}{hint}.")


class StochasticWeightAveraging(Callback):
    """Stochastic Weight Averaging over the last epochs (one optimizer, at most one scheduler).

    ``swa_lrs``: the SWA learning rate, one float or one per parameter group. ``swa_epoch_start``: the
    epoch it starts (an int, 1 for the first) or a fraction of ``max_epochs``. ``annealing_epochs`` and
    ``annealing_strategy`` (``"cos"`` or ``"linear"``): how ``SWALR`` moves the learning rate there.
    ``avg_fn(averaged, current, n_averaged)``: the averaging rule (an equal-weight mean by default).
    ``device``: where the average is kept (None: the model's device).
    """

    def __init__(
        self,
        swa_lrs: float | list[float],
        swa_epoch_start: int | float = 0.8,
        annealing_epochs: int = 10,
        annealing_strategy: Literal["cos", "linear"] = "cos",
        avg_fn: _AVG_FN | None = None,
        device: torch.device | str | None = torch.device("cpu"),  # noqa: B008 (Lightning's default)
    ) -> None:
        self._swa_epoch_start = _check_epoch_start(swa_epoch_start)
        self._swa_lrs: float | list[float] = _check_lrs(swa_lrs)
        if isinstance(annealing_epochs, bool) or not isinstance(annealing_epochs, int) or annealing_epochs < 0:
            raise MisconfigurationException(
                f"annealing_epochs={annealing_epochs!r} is not a number of epochs; pass an int >= 0."
            )
        if annealing_strategy not in _STRATEGIES:
            raise MisconfigurationException(
                f"annealing_strategy={annealing_strategy!r} is not one of {list(_STRATEGIES)}."
                + did_you_mean(annealing_strategy, _STRATEGIES)
            )
        if avg_fn is not None and not callable(avg_fn):
            raise MisconfigurationException(f"The `avg_fn` should be callable; got avg_fn={avg_fn!r}.")
        self._annealing_epochs = annealing_epochs
        self._annealing_strategy: Literal["cos", "linear"] = annealing_strategy
        self._avg_fn: _AVG_FN = avg_fn or self.avg_fn
        self._device = check_device(device, index=False)
        #: How many models the average holds (a tensor once averaging started).
        self.n_averaged: torch.Tensor | None = None
        #: The BatchNorm momenta put aside while the statistics are recomputed.
        self.momenta: dict[nn.modules.batchnorm._BatchNorm, float | None] = {}
        self._model_contains_batch_norm: bool | None = None
        self._average_model: nn.Module | None = None
        self._initialized = False
        self._swa_scheduler: SWALR | None = None
        self._scheduler_state: dict[str, Any] | None = None
        self._init_n_averaged = 0
        self._latest_update_epoch = -1
        self._max_epochs = -1
        self._extended = False
        self._accumulate_grad_batches: int | None = None

    # ---- Lightning's public helpers ---------------------------------------------------------------------
    @property
    def swa_start(self) -> int:
        """The first averaged epoch, 0-based (known once the fit started, for a fractional start)."""
        start = self._swa_epoch_start
        if not isinstance(start, int):
            raise MisconfigurationException(
                f"swa_epoch_start={start} is a fraction of max_epochs; swa_start is known once fit() started."
            )
        return max(start - 1, 0)

    @property
    def swa_end(self) -> int:
        """The last averaged epoch, 0-based (infinite without an epoch limit)."""
        if self._max_epochs == -1:
            return math.inf  # type: ignore[return-value]
        return self._max_epochs - 1

    @staticmethod
    def pl_module_contains_batch_norm(pl_module: nn.Module) -> bool:
        return any(isinstance(module, nn.modules.batchnorm._BatchNorm) for module in pl_module.modules())

    @staticmethod
    def transfer_weights(src_pl_module: nn.Module, dst_pl_module: nn.Module) -> None:
        """Copy the parameters (not the buffers) of one model into the other."""
        with torch.no_grad():
            for source, target in zip(src_pl_module.parameters(), dst_pl_module.parameters(), strict=False):
                target.copy_(source.to(target.device))

    def reset_batch_norm_and_save_state(self, pl_module: nn.Module) -> None:
        """Zero the BatchNorm running statistics and set their momentum to None, so the next epoch's batches
        make a plain average of them; the momenta are kept for :meth:`reset_momenta`."""
        self.momenta = {}
        for module in pl_module.modules():
            if isinstance(module, nn.modules.batchnorm._BatchNorm) and module.track_running_stats:
                module.reset_running_stats()
                self.momenta[module] = module.momentum
                module.momentum = None

    def reset_momenta(self) -> None:
        """Put back the momenta :meth:`reset_batch_norm_and_save_state` set aside."""
        for module, momentum in self.momenta.items():
            module.momentum = momentum

    @staticmethod
    def update_parameters(
        average_model: nn.Module, model: nn.Module, n_averaged: torch.Tensor, avg_fn: _AVG_FN
    ) -> None:
        """Fold ``model``'s parameters into ``average_model`` (the first time, copy them) and count it."""
        first = bool(n_averaged == 0)
        with torch.no_grad():
            for averaged, current in zip(average_model.parameters(), model.parameters(), strict=False):
                current_here = current.detach().to(averaged.device)
                count = n_averaged.to(averaged.device)
                averaged.copy_(current_here if first else avg_fn(averaged, current_here, count))
        n_averaged += 1

    @staticmethod
    def avg_fn(
        averaged_model_parameter: torch.Tensor, model_parameter: torch.Tensor, num_averaged: torch.Tensor
    ) -> torch.Tensor:
        """The equal-weight running mean: the new value moves 1/(n+1) of the way to the model's."""
        return averaged_model_parameter + (model_parameter - averaged_model_parameter) / (num_averaged + 1)

    # ---- hooks ------------------------------------------------------------------------------------------
    def setup(self, trainer: Any, pl_module: nn.Module, stage: str) -> None:
        sharded = {cls.__name__ for cls in type(trainer.strategy).__mro__} & _SHARDED
        if sharded:
            raise MisconfigurationException(
                f"SWA does not currently support sharded models (strategy {type(trainer.strategy).__name__}); use "
                "a strategy that keeps the whole model in each process, such as 'ddp'."
            )
        # Copied before the module moves to the accelerator, so the average can stay on the CPU.
        self._average_model = deepcopy(pl_module)

    def on_fit_start(self, trainer: Any, pl_module: nn.Module) -> None:
        optimizers = trainer.optimizers
        if len(optimizers) != 1:
            raise MisconfigurationException(
                f"SWA currently works with 1 `optimizer`; configure_optimizers() returned {len(optimizers)}."
            )
        if len(trainer.lr_scheduler_configs) > 1:
            raise MisconfigurationException(
                f"SWA currently not supported for more than 1 `lr_scheduler`; configure_optimizers() returned "
                f"{len(trainer.lr_scheduler_configs)}."
            )
        groups = len(optimizers[0].param_groups)
        if isinstance(self._swa_lrs, list) and len(self._swa_lrs) != groups:
            raise MisconfigurationException(
                f"swa_lrs={self._swa_lrs} gives {len(self._swa_lrs)} learning rates, but the optimizer has {groups} "
                "parameter group(s); pass one float, or one per group."
            )
        max_epochs = trainer.max_epochs
        if max_epochs is None:  # Lightning's default: 1000 epochs, or no epoch limit when max_steps is set
            max_epochs = 1000 if trainer.max_steps == -1 else -1
        if isinstance(self._swa_epoch_start, float):
            if max_epochs == -1:
                raise MisconfigurationException(
                    "SWA with `swa_epoch_start` as a float is not supported when `max_epochs=-1`. "
                    "Please provide `swa_epoch_start` as an integer."
                )
            self._swa_epoch_start = int(max_epochs * self._swa_epoch_start)
        self._model_contains_batch_norm = self.pl_module_contains_batch_norm(pl_module)
        self._max_epochs = max_epochs
        self._extended = bool(self._model_contains_batch_norm and max_epochs != -1)
        if self._extended:  # one epoch more, to recompute the BatchNorm statistics for the averaged weights
            trainer.state.extra_epochs += 1
        if self._scheduler_state is not None:
            self._clear_schedulers(trainer)

    def on_train_epoch_start(self, trainer: Any, pl_module: nn.Module) -> None:
        epoch = trainer.current_epoch
        averaging = self.swa_start <= epoch <= self.swa_end
        if averaging and not self._initialized:
            self._start_averaging(trainer, pl_module)
        if averaging and epoch > self._latest_update_epoch:
            assert self.n_averaged is not None and self._average_model is not None
            self.update_parameters(self._average_model, pl_module, self.n_averaged, self._avg_fn)
            self._latest_update_epoch = epoch
        # "==", not ">": a fit continued past the end (a larger max_epochs) must not redo this
        if self._max_epochs != -1 and epoch == self.swa_end + 1:
            assert self._average_model is not None
            if math.isinf(trainer.num_training_batches):
                raise MisconfigurationException(
                    "StochasticWeightAveraging recomputes the BatchNorm statistics with one more pass over the "
                    "training data, which needs a training loader with a length (not an IterableDataset); pass a "
                    "sized loader or set limit_train_batches to an int."
                )
            self.transfer_weights(self._average_model, pl_module)
            self.reset_batch_norm_and_save_state(pl_module)
            trainer.state.forward_only = True

    def on_train_epoch_end(self, trainer: Any, *args: Any) -> None:
        trainer.state.forward_only = False

    def on_train_end(self, trainer: Any, pl_module: nn.Module) -> None:
        # current_epoch already counts the last epoch as done here
        finished = trainer.current_epoch - 1
        if self._model_contains_batch_norm and self._max_epochs != -1 and finished == self.swa_end + 1:
            if self._extended:
                trainer.state.extra_epochs -= 1
                self._extended = False
            self.reset_momenta()
        elif (finished == self.swa_end or self._max_epochs == -1) and self._average_model is not None:
            self.transfer_weights(self._average_model, pl_module)

    def on_load_checkpoint(self, trainer: Any, pl_module: nn.Module, checkpoint: dict[str, Any]) -> None:
        # Saved once SWALR had replaced the scheduler: the checkpoint's scheduler state is SWALR's, which
        # must not be loaded into the scheduler configure_optimizers() made (SWALR is rebuilt from it instead).
        saved = checkpoint.get("callbacks", {}).get(self.state_key)
        if isinstance(saved, dict) and saved.get("scheduler_state") is not None:
            self._clear_schedulers(trainer)

    def state_dict(self) -> dict[str, Any]:
        return {
            "n_averaged": 0 if self.n_averaged is None else int(self.n_averaged.item()),
            "latest_update_epoch": self._latest_update_epoch,
            "scheduler_state": None if self._swa_scheduler is None else self._swa_scheduler.state_dict(),
            "average_model_state": None if self._average_model is None else self._average_model.state_dict(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._init_n_averaged = state_dict["n_averaged"]
        self._latest_update_epoch = state_dict["latest_update_epoch"]
        self._scheduler_state = state_dict["scheduler_state"]
        if self._average_model is not None and state_dict["average_model_state"] is not None:
            self._average_model.load_state_dict(state_dict["average_model_state"])

    # ---- the switch to SWA --------------------------------------------------------------------------------
    def _start_averaging(self, trainer: Any, pl_module: nn.Module) -> None:
        """The first averaged epoch (or the first after a resume): SWALR takes over the learning rate."""
        self._initialized = True
        assert self._average_model is not None, "setup() copies the model before fit starts"
        self._average_model = self._average_model.to(self._device or module_device(pl_module))
        optimizer = trainer.optimizers[0]
        if isinstance(self._swa_lrs, float):
            self._swa_lrs = [self._swa_lrs] * len(optimizer.param_groups)
        for lr, group in zip(self._swa_lrs, optimizer.param_groups, strict=False):
            group["initial_lr"] = lr
        last_epoch = self._max_epochs + (1 if self._extended else 0)
        self._swa_scheduler = SWALR(
            optimizer,
            swa_lr=self._swa_lrs,  # type: ignore[arg-type]
            anneal_epochs=self._annealing_epochs,
            anneal_strategy=self._annealing_strategy,
            last_epoch=last_epoch if self._annealing_strategy == "cos" else -1,
        )
        if self._scheduler_state is not None:
            self._swa_scheduler.load_state_dict(self._scheduler_state)
        elif trainer.current_epoch != self.swa_start:
            warnings.warn(
                "SWA is initializing after swa_start without any checkpoint data. "
                "This may be caused by loading a checkpoint from an older version of PyTorch Lightning.",
                UserWarning,
                stacklevel=2,
            )
        config = LRSchedulerConfig(self._swa_scheduler, interval="epoch", frequency=1)
        configs = trainer.lr_scheduler_configs
        if configs:
            replaced = configs[0]
            if replaced.interval != "epoch" or replaced.frequency != 1:
                warnings.warn(
                    f"SWA is currently only supported every epoch. Found {replaced}", UserWarning, stacklevel=2
                )
            log.info(
                f"Swapping scheduler `{type(replaced.scheduler).__name__}` for `{type(self._swa_scheduler).__name__}`"
            )
            configs[0] = config
        else:
            configs.append(config)
        if self.n_averaged is None:
            self.n_averaged = torch.tensor(self._init_n_averaged, dtype=torch.long, device=module_device(pl_module))

    @staticmethod
    def _clear_schedulers(trainer: Any) -> None:
        """Drop the configured scheduler: SWALR, rebuilt from the checkpoint, takes its place."""
        configs = trainer.lr_scheduler_configs
        if configs:
            configs.clear()
