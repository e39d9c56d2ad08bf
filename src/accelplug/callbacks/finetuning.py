"""Freezing part of a model before training and unfreezing it later: Lightning's ``BaseFinetuning`` and
``BackboneFinetuning``.

The parameters a callback unfreezes join the running optimizer as a new param group (``add_param_group``), so
the optimizer ``configure_optimizers()`` built keeps its state for the rest. Which groups were added is kept by
parameter *name* in the callback's ``state_dict``: a resumed run rebuilds them in ``on_fit_start`` (before the
optimizer's saved state is loaded, which needs the same groups), as Lightning does.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Generator, Iterable
from typing import Any

import torch
from torch.nn import Module, ModuleDict
from torch.nn.modules.batchnorm import _BatchNorm

from ..errors import MisconfigurationException
from .base import Callback

__all__ = ["BackboneFinetuning", "BaseFinetuning", "multiplicative"]

log = logging.getLogger(__name__)

#: What the modules arguments accept: a module, or (nested) iterables of modules.
Modules = Module | Iterable[Any]


def multiplicative(epoch: int) -> float:
    """``BackboneFinetuning``'s default ``lambda_func``: the backbone's learning rate doubles each epoch."""
    return 2.0


class BaseFinetuning(Callback):
    """Override ``freeze_before_training`` (runs in ``setup``, before ``configure_optimizers``) and
    ``finetune_function`` (runs at each training epoch's start, once per optimizer) to unfreeze modules with
    :meth:`unfreeze_and_add_param_group`."""

    def __init__(self) -> None:
        self._internal_optimizer_metadata: dict[int, list[dict[str, Any]]] = {}
        self._restarting = False

    def state_dict(self) -> dict[str, Any]:
        return {"internal_optimizer_metadata": self._internal_optimizer_metadata}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._restarting = True
        # checkpoints written before the key existed hold the metadata itself
        self._internal_optimizer_metadata = state_dict.get("internal_optimizer_metadata", state_dict)

    def on_fit_start(self, trainer: Any, pl_module: Module) -> None:
        if not self._restarting:
            return
        if self._internal_optimizer_metadata:
            named = dict(pl_module.named_parameters())
            for index, optimizer in enumerate(trainer.optimizers):
                groups = self._internal_optimizer_metadata.get(index)
                if groups is not None:
                    optimizer.param_groups = self._apply_mapping_to_param_groups(groups, named)
        self._restarting = False

    # ---- the static helpers users call ------------------------------------------------------------------
    @staticmethod
    def flatten_modules(modules: Modules) -> list[Module]:
        """The leaf modules of ``modules`` plus every module holding parameters of its own (not its children's)."""
        if isinstance(modules, ModuleDict):
            modules = modules.values()
        if isinstance(modules, Iterable):  # before Module: a Sequential is walked through its children, as Lightning
            candidates: Iterable[Module] = [leaf for item in modules for leaf in BaseFinetuning.flatten_modules(item)]
        elif isinstance(modules, Module):
            candidates = modules.modules()
        else:
            raise MisconfigurationException(
                f"modules={modules!r} is not a torch.nn.Module; accepted: a Module or an iterable of Modules."
            )
        return [m for m in candidates if not list(m.children()) or m._parameters]

    @staticmethod
    def filter_params(
        modules: Modules, train_bn: bool = True, requires_grad: bool = True
    ) -> Generator[torch.nn.Parameter, None, None]:
        """The parameters of ``modules`` whose ``requires_grad`` is ``requires_grad`` (BatchNorm's left out
        unless ``train_bn``)."""
        for module in BaseFinetuning.flatten_modules(modules):
            if isinstance(module, _BatchNorm) and not train_bn:
                continue
            for param in module.parameters(recurse=False):
                if param.requires_grad == requires_grad:
                    yield param

    @staticmethod
    def make_trainable(modules: Modules) -> None:
        """Unfreeze ``modules`` (BatchNorm layers track running statistics again)."""
        for module in BaseFinetuning.flatten_modules(modules):
            if isinstance(module, _BatchNorm):
                module.track_running_stats = True
            for param in module.parameters(recurse=False):
                param.requires_grad = True

    @staticmethod
    def freeze_module(module: Module) -> None:
        """Freeze one module's own parameters; a frozen BatchNorm stops tracking running statistics."""
        if isinstance(module, _BatchNorm):
            module.track_running_stats = False
        for param in module.parameters(recurse=False):
            param.requires_grad = False

    @staticmethod
    def freeze(modules: Modules, train_bn: bool = True) -> None:
        """Freeze ``modules``; with ``train_bn`` their BatchNorm layers stay trainable."""
        for module in BaseFinetuning.flatten_modules(modules):
            if isinstance(module, _BatchNorm) and train_bn:
                BaseFinetuning.make_trainable(module)
            else:
                BaseFinetuning.freeze_module(module)

    @staticmethod
    def filter_on_optimizer(optimizer: torch.optim.Optimizer, params: Iterable[Any]) -> list[Any]:
        """``params`` less those the optimizer already holds (with a warning naming the usual cause).

        Parameters are compared by value (``torch.equal``), as Lightning compares them, so a parameter equal to one
        already in the optimizer is skipped too.
        """
        held = [p for group in optimizer.param_groups for p in group["params"]]
        kept: list[Any] = []
        skipped: list[Any] = []
        for param in params:
            (skipped if any(torch.equal(p, param) for p in held) else kept).append(param)
        if skipped:
            warnings.warn(
                "The provided params to be frozen already exist within another group of this optimizer."
                " Those parameters will be skipped.\n"
                "HINT: Did you init your optimizer in `configure_optimizer` as such:\n"
                f" {type(optimizer)}(filter(lambda p: p.requires_grad, self.parameters()), ...) ",
                stacklevel=2,
            )
        return kept

    @staticmethod
    def unfreeze_and_add_param_group(
        modules: Modules,
        optimizer: torch.optim.Optimizer,
        lr: float | None = None,
        initial_denom_lr: float = 10.0,
        train_bn: bool = True,
    ) -> None:
        """Unfreeze ``modules`` and add their parameters to ``optimizer`` as one new group, at ``lr`` or (None)
        at the first group's rate divided by ``initial_denom_lr``."""
        if lr is None and (not isinstance(initial_denom_lr, int | float) or initial_denom_lr <= 0):
            raise MisconfigurationException(
                f"initial_denom_lr={initial_denom_lr!r} must be a number > 0 (the first group's lr is divided by it)."
            )
        BaseFinetuning.make_trainable(modules)
        base_lr = optimizer.param_groups[0]["lr"] if lr is None else float(lr)
        denominator = initial_denom_lr if lr is None else 1.0
        params = BaseFinetuning.filter_params(modules, train_bn=train_bn, requires_grad=True)
        kept = BaseFinetuning.filter_on_optimizer(optimizer, params)
        if kept:
            optimizer.add_param_group({"params": kept, "lr": base_lr / denominator})

    # ---- the hooks ----------------------------------------------------------------------------------------
    def setup(self, trainer: Any, pl_module: Module, stage: str) -> None:
        self.freeze_before_training(pl_module)

    def on_train_epoch_start(self, trainer: Any, pl_module: Module) -> None:
        for index, optimizer in enumerate(trainer.optimizers):
            before = len(optimizer.param_groups)
            self.finetune_function(pl_module, trainer.current_epoch, optimizer)
            self._store(pl_module, index, before, optimizer.param_groups)

    def finetune_function(self, pl_module: Module, epoch: int, optimizer: torch.optim.Optimizer) -> None:
        """Override: unfreeze what should train from ``epoch`` on."""
        raise NotImplementedError(f"{type(self).__name__} must override finetune_function(pl_module, epoch, optimizer)")

    def freeze_before_training(self, pl_module: Module) -> None:
        """Override: freeze what should not train at first."""
        raise NotImplementedError(f"{type(self).__name__} must override freeze_before_training(pl_module)")

    # ---- what a resume needs --------------------------------------------------------------------------------
    @staticmethod
    def _apply_mapping_to_param_groups(groups: list[dict[str, Any]], mapping: dict[Any, Any]) -> list[dict[str, Any]]:
        return [
            {**{k: v for k, v in g.items() if k != "params"}, "params": [mapping[p] for p in g["params"]]}
            for g in groups
        ]

    def _store(self, pl_module: Module, index: int, before: int, groups: list[dict[str, Any]]) -> None:
        names = {p: n for n, p in pl_module.named_parameters()}
        if index not in self._internal_optimizer_metadata:
            self._internal_optimizer_metadata[index] = self._apply_mapping_to_param_groups(groups, names)
        elif before != len(groups):
            self._internal_optimizer_metadata[index].extend(self._apply_mapping_to_param_groups(groups[before:], names))


class BackboneFinetuning(BaseFinetuning):
    """Train ``pl_module.backbone`` from ``unfreeze_backbone_at_epoch`` on, its learning rate growing by
    ``lambda_func(epoch + 1)`` each epoch (up to the model's own with ``should_align``)."""

    def __init__(
        self,
        unfreeze_backbone_at_epoch: int = 10,
        lambda_func: Callable[[int], float] = multiplicative,
        backbone_initial_ratio_lr: float = 10e-2,
        backbone_initial_lr: float | None = None,
        should_align: bool = True,
        initial_denom_lr: float = 10.0,
        train_bn: bool = True,
        verbose: bool = False,
        rounding: int = 12,
    ) -> None:
        super().__init__()
        if isinstance(unfreeze_backbone_at_epoch, bool) or not isinstance(unfreeze_backbone_at_epoch, int):
            raise MisconfigurationException(
                f"unfreeze_backbone_at_epoch={unfreeze_backbone_at_epoch!r} must be an int (an epoch index, 0 first)."
            )
        if not callable(lambda_func):
            raise MisconfigurationException(
                f"lambda_func={lambda_func!r} must be callable: epoch -> factor of the backbone's learning rate."
            )
        numbers = {"backbone_initial_ratio_lr": backbone_initial_ratio_lr, "initial_denom_lr": initial_denom_lr}
        for name, value in numbers.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise MisconfigurationException(f"{name}={value!r} must be a number.")
        if backbone_initial_lr is not None and (
            isinstance(backbone_initial_lr, bool) or not isinstance(backbone_initial_lr, int | float)
        ):
            raise MisconfigurationException(f"backbone_initial_lr={backbone_initial_lr!r} must be a number or None.")
        self.unfreeze_backbone_at_epoch = unfreeze_backbone_at_epoch
        self.lambda_func = lambda_func
        self.backbone_initial_ratio_lr = backbone_initial_ratio_lr
        self.backbone_initial_lr = backbone_initial_lr
        self.should_align = should_align
        self.initial_denom_lr = initial_denom_lr
        self.train_bn = train_bn
        self.verbose = verbose
        self.rounding = rounding
        self.previous_backbone_lr: float | None = None

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "previous_backbone_lr": self.previous_backbone_lr}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.previous_backbone_lr = state_dict["previous_backbone_lr"]
        super().load_state_dict(state_dict)

    def on_fit_start(self, trainer: Any, pl_module: Module) -> None:
        if not isinstance(getattr(pl_module, "backbone", None), Module):
            raise MisconfigurationException("The LightningModule should have a nn.Module `backbone` attribute")
        super().on_fit_start(trainer, pl_module)

    def freeze_before_training(self, pl_module: Module) -> None:
        backbone = getattr(pl_module, "backbone", None)
        if not isinstance(backbone, Module):
            raise MisconfigurationException("The LightningModule should have a nn.Module `backbone` attribute")
        self.freeze(backbone)

    def finetune_function(self, pl_module: Module, epoch: int, optimizer: torch.optim.Optimizer) -> None:
        backbone = pl_module.backbone
        assert isinstance(backbone, Module)
        current_lr = optimizer.param_groups[0]["lr"]
        if epoch == self.unfreeze_backbone_at_epoch:
            initial = self.backbone_initial_lr
            backbone_lr = initial if initial is not None else current_lr * self.backbone_initial_ratio_lr
            self.previous_backbone_lr = backbone_lr
            self.unfreeze_and_add_param_group(
                backbone, optimizer, backbone_lr, train_bn=self.train_bn, initial_denom_lr=self.initial_denom_lr
            )
        elif epoch > self.unfreeze_backbone_at_epoch:
            assert self.previous_backbone_lr is not None
            backbone_lr = self.lambda_func(epoch + 1) * self.previous_backbone_lr
            if self.should_align and backbone_lr > current_lr:
                backbone_lr = current_lr
            optimizer.param_groups[-1]["lr"] = backbone_lr
            self.previous_backbone_lr = backbone_lr
        else:
            return
        if self.verbose:
            log.info(
                f"Current lr: {round(current_lr, self.rounding)}, Backbone lr: {round(backbone_lr, self.rounding)}"
            )
