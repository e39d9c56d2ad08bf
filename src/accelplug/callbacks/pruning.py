"""Pruning weights during training with ``torch.nn.utils.prune``: Lightning's ``ModelPruning``.

At each training epoch's end (or validation epoch's end with ``prune_on_train_epoch_end=False``) the chosen
parameters are pruned by ``amount`` (a fraction, a count, or a function of the epoch), globally across them or
layer by layer; with the lottery ticket hypothesis the weights that survive are reset to their values at the
start (or resampled). The masks stay as torch's re-parametrisation (``weight_orig`` and ``weight_mask``) during
training; checkpoints and the end of training hold plain, masked weights when ``make_pruning_permanent``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from copy import deepcopy
from functools import partial
from typing import Any

import torch.nn.utils.prune as torch_prune
from torch import Tensor, nn

from ..errors import MisconfigurationException, did_you_mean
from .base import Callback

__all__ = ["ModelPruning"]

log = logging.getLogger(__name__)

_PRUNING_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "ln_structured": torch_prune.ln_structured,
    "l1_unstructured": torch_prune.l1_unstructured,
    "random_structured": torch_prune.random_structured,
    "random_unstructured": torch_prune.random_unstructured,
}
_PRUNING_METHODS: dict[str, type[torch_prune.BasePruningMethod]] = {
    "ln_structured": torch_prune.LnStructured,
    "l1_unstructured": torch_prune.L1Unstructured,
    "random_structured": torch_prune.RandomStructured,
    "random_unstructured": torch_prune.RandomUnstructured,
}
_CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict)

ParameterList = Sequence[tuple[nn.Module, str]]


def _is_container(module: nn.Module) -> bool:
    """Containers and LightningModules (accelplug's or Lightning's) hold no parameters to prune themselves."""
    return isinstance(module, _CONTAINERS) or any(c.__name__ == "LightningModule" for c in type(module).__mro__)


class ModelPruning(Callback):
    """Prune ``parameters_to_prune`` (every ``weight``/``bias`` of the model when empty) with ``pruning_fn``."""

    PARAMETER_NAMES = ("weight", "bias")

    def __init__(
        self,
        pruning_fn: Callable[..., Any] | str,
        parameters_to_prune: ParameterList = (),
        parameter_names: list[str] | None = None,
        use_global_unstructured: bool = True,
        amount: int | float | Callable[[int], int | float] = 0.5,
        apply_pruning: bool | Callable[[int], bool] = True,
        make_pruning_permanent: bool = True,
        use_lottery_ticket_hypothesis: bool | Callable[[int], bool] = True,
        resample_parameters: bool = False,
        pruning_dim: int | None = None,
        pruning_norm: int | None = None,
        verbose: int = 0,
        prune_on_train_epoch_end: bool = True,
    ) -> None:
        self._use_global_unstructured = use_global_unstructured
        self._parameters_to_prune: ParameterList = parameters_to_prune
        self._use_lottery_ticket_hypothesis = use_lottery_ticket_hypothesis
        self._resample_parameters = resample_parameters
        self._prune_on_train_epoch_end = prune_on_train_epoch_end
        self._parameter_names = parameter_names or self.PARAMETER_NAMES
        self._global_kwargs: dict[str, Any] = {}
        self._original_layers: dict[int, dict[str, Any]] | None = None
        self._pruning_method_name: str | None = None
        self._global_zero = True  # only global rank 0 logs the sparsity (set in setup)
        for name in self._parameter_names:
            if name not in self.PARAMETER_NAMES:
                raise MisconfigurationException(
                    f"The provided `parameter_names` name: {name} isn't in {self.PARAMETER_NAMES}"
                    + did_you_mean(name, self.PARAMETER_NAMES)
                )
        if isinstance(pruning_fn, str):
            pruning_fn = self._resolve_name(pruning_fn, pruning_dim, pruning_norm)
        elif self._is_pruning_method(pruning_fn):
            if not use_global_unstructured:
                raise MisconfigurationException(
                    "PyTorch `BasePruningMethod` is currently only supported with `use_global_unstructured=True`."
                )
        else:
            raise MisconfigurationException(
                f"`pruning_fn` is expected to be a str in {list(_PRUNING_FUNCTIONS)}"
                f" or a PyTorch `BasePruningMethod`. Found: {pruning_fn}."
                " HINT: if passing a `BasePruningMethod`, pass the class, not an instance"
            )
        if use_global_unstructured and getattr(pruning_fn, "PRUNING_TYPE", None) != "unstructured":
            raise MisconfigurationException(
                'Only the "unstructured" PRUNING_TYPE is supported with `use_global_unstructured=True`.'
                f" Found method {pruning_fn} of type {getattr(pruning_fn, 'PRUNING_TYPE', None)}. "
            )
        self.pruning_fn = pruning_fn
        self._apply_pruning = apply_pruning
        self._make_pruning_permanent = make_pruning_permanent
        if isinstance(amount, bool) or not (isinstance(amount, int | float) or callable(amount)):
            raise MisconfigurationException(
                f"amount={amount!r}: `amount` should be provided and be either an int, a float or Callable function."
            )
        if isinstance(amount, float) and not 0.0 <= amount <= 1.0:
            raise MisconfigurationException(f"amount={amount!r}: a float amount is a fraction, between 0.0 and 1.0.")
        self.amount = amount
        if verbose not in (0, 1, 2):
            raise MisconfigurationException(f"verbose={verbose!r}: `verbose` must be any of (0, 1, 2)")
        self._verbose = verbose

    def _resolve_name(self, name: str, dim: int | None, norm: int | None) -> Callable[..., Any]:
        name = name.lower()
        if name not in _PRUNING_FUNCTIONS:
            raise MisconfigurationException(
                f"The provided `pruning_fn` {name} isn't available in PyTorch's"
                f" built-in functions: {list(_PRUNING_FUNCTIONS)} " + did_you_mean(name, _PRUNING_FUNCTIONS)
            )
        kwargs: dict[str, Any] = {}
        if name.endswith("_structured"):
            if dim is None:
                raise MisconfigurationException(
                    "When requesting `structured` pruning, the `pruning_dim` should be provided."
                )
            if name == "ln_structured":
                if norm is None:
                    raise MisconfigurationException(
                        "When requesting `ln_structured` pruning, the `pruning_norm` should be provided."
                    )
                kwargs["n"] = norm
            kwargs["dim"] = dim
        return self._create_pruning_fn(name, **kwargs)

    def filter_parameters_to_prune(self, parameters_to_prune: ParameterList = ()) -> ParameterList:
        """Override to choose among the parameters found (all ``weight``/``bias`` when none were given)."""
        return parameters_to_prune

    def _create_pruning_fn(self, pruning_fn: str, **kwargs: Any) -> Callable[..., Any]:
        """The method class for global pruning (its keyword arguments kept for each call), else torch's function."""
        if self._use_global_unstructured:
            method: Callable[..., Any] = _PRUNING_METHODS[pruning_fn]
            self._global_kwargs = kwargs
            self._pruning_method_name = method.__name__
            return method
        function = _PRUNING_FUNCTIONS[pruning_fn]
        self._pruning_method_name = function.__name__
        return self._wrap_pruning_fn(function, **kwargs)

    @staticmethod
    def _wrap_pruning_fn(pruning_fn: Callable[..., Any], **kwargs: Any) -> Callable[..., Any]:
        return partial(pruning_fn, **kwargs)

    def make_pruning_permanent(self, module: nn.Module) -> None:
        """Fold every pruning mask of ``module`` into its weights and drop the re-parametrisation hooks."""
        for _, sub in module.named_modules():
            for key in list(sub._forward_pre_hooks):
                hook = sub._forward_pre_hooks[key]
                if isinstance(hook, torch_prune.BasePruningMethod):
                    hook.remove(sub)
                    del sub._forward_pre_hooks[key]

    @staticmethod
    def _copy_param(new: nn.Module, old: nn.Module, name: str) -> None:
        target = getattr(new, name + "_orig") if hasattr(new, name + "_orig") else getattr(new, name)
        source = getattr(old, name)
        if isinstance(target, Tensor) and isinstance(source, Tensor):
            target.data = source.data.to(target.device)

    def apply_lottery_ticket_hypothesis(self) -> None:
        """Reset the surviving weights to their values before training (or fresh ones with
        ``resample_parameters``): the lottery ticket hypothesis's last step."""
        assert self._original_layers is not None
        for layer in self._original_layers.values():
            copy = layer["data"]
            if self._resample_parameters and callable(getattr(copy, "reset_parameters", None)):
                copy = deepcopy(copy)
                copy.reset_parameters()
            for index, name in layer["names"]:
                module, _ = self._parameters_to_prune[index]
                self._copy_param(module, copy, name)

    def _apply_local_pruning(self, amount: int | float) -> None:
        for module, name in self._parameters_to_prune:
            self.pruning_fn(module, name=name, amount=amount)

    def _resolve_global_kwargs(self, amount: int | float) -> dict[str, Any]:
        self._global_kwargs["amount"] = amount
        accepted = set(inspect.signature(self.pruning_fn).parameters) - {"self"}
        return {k: v for k, v in self._global_kwargs.items() if k in accepted}

    def _apply_global_pruning(self, amount: int | float) -> None:
        torch_prune.global_unstructured(
            self._parameters_to_prune, pruning_method=self.pruning_fn, **self._resolve_global_kwargs(amount)
        )

    @staticmethod
    def _get_pruned_stats(module: nn.Module, name: str) -> tuple[int, int]:
        mask = getattr(module, f"{name}_mask", None)
        if mask is None:
            return 0, 1
        return int((mask == 0).sum().item()), mask.numel()

    def apply_pruning(self, amount: int | float) -> None:
        """Prune by ``amount`` now (globally or per layer, as configured)."""
        before = [self._get_pruned_stats(m, n) for m, n in self._parameters_to_prune] if self._verbose else []
        if self._use_global_unstructured:
            self._apply_global_pruning(amount)
        else:
            self._apply_local_pruning(amount)
        if self._verbose and self._global_zero:
            after = [self._get_pruned_stats(m, n) for m, n in self._parameters_to_prune]
            self._log_sparsity_stats(before, after, amount=amount)

    def _log_sparsity_stats(
        self, prev: list[tuple[int, int]], curr: list[tuple[int, int]], amount: int | float = 0
    ) -> None:
        total = sum(size for _, size in curr)
        zeros_before = sum(zeros for zeros, _ in prev)
        zeros_after = sum(zeros for zeros, _ in curr)
        log.info(
            f"Applied `{self._pruning_method_name}`. Pruned:"
            f" {zeros_before}/{total} ({zeros_before / total:.2%}) ->"
            f" {zeros_after}/{total} ({zeros_after / total:.2%})"
        )
        if self._verbose == 2:
            for i, (module, name) in enumerate(self._parameters_to_prune):
                (z0, n0), (z1, n1) = prev[i], curr[i]
                log.info(
                    f"Applied `{self._pruning_method_name}` to `{module!r}.{name}` with amount={amount}. Pruned:"
                    f" {z0} ({z0 / n0:.2%}) -> {z1} ({z1 / n1:.2%})"
                )

    # ---- the hooks ----------------------------------------------------------------------------------------
    def setup(self, trainer: Any, pl_module: nn.Module, stage: str) -> None:
        self._global_zero = bool(getattr(trainer, "is_global_zero", True))
        found = self.sanitize_parameters_to_prune(pl_module, self._parameters_to_prune, self._parameter_names)
        self._parameters_to_prune = self.filter_parameters_to_prune(found)
        if self._use_lottery_ticket_hypothesis:
            self._original_layers = {}
            for index, (module, name) in enumerate(self._parameters_to_prune):
                layer = self._original_layers.setdefault(id(module), {"data": deepcopy(module), "names": []})
                layer["names"].append((index, name))

    def _run_pruning(self, current_epoch: int) -> None:
        prune = self._apply_pruning(current_epoch) if callable(self._apply_pruning) else self._apply_pruning
        amount = self.amount(current_epoch) if callable(self.amount) else self.amount
        if not prune or not amount:
            return
        self.apply_pruning(amount)
        lottery = self._use_lottery_ticket_hypothesis
        if lottery(current_epoch) if callable(lottery) else lottery:
            self.apply_lottery_ticket_hypothesis()

    def on_train_epoch_end(self, trainer: Any, pl_module: nn.Module) -> None:
        if self._prune_on_train_epoch_end:
            log.debug("`ModelPruning.on_train_epoch_end`. Applying pruning")
            self._run_pruning(trainer.current_epoch)

    def on_validation_epoch_end(self, trainer: Any, pl_module: nn.Module) -> None:
        if not trainer.sanity_checking and not self._prune_on_train_epoch_end:
            log.debug("`ModelPruning.on_validation_epoch_end`. Applying pruning")
            self._run_pruning(trainer.current_epoch)

    def on_train_end(self, trainer: Any, pl_module: nn.Module) -> None:
        if self._make_pruning_permanent:
            log.debug("`ModelPruning.on_train_end`. Pruning is made permanent for this checkpoint")
            self.make_pruning_permanent(pl_module)

    def _make_pruning_permanent_on_state_dict(self, pl_module: nn.Module) -> dict[str, Any]:
        state_dict = pl_module.state_dict()
        pruned = {k[: -len("_mask")] for k in state_dict if k.endswith("_mask")}
        for name in pruned:
            original = state_dict.pop(name + "_orig")
            mask = state_dict.pop(name + "_mask")
            state_dict[name] = mask.to(dtype=original.dtype) * original
        return {k: v.cpu() if isinstance(v, Tensor) else v for k, v in state_dict.items()}

    def on_save_checkpoint(self, trainer: Any, pl_module: nn.Module, checkpoint: dict[str, Any]) -> None:
        if self._make_pruning_permanent:
            log.debug("`ModelPruning.on_save_checkpoint`. Pruning is made permanent for this checkpoint")
            checkpoint["state_dict"] = self._make_pruning_permanent_on_state_dict(pl_module)

    @staticmethod
    def sanitize_parameters_to_prune(
        pl_module: nn.Module, parameters_to_prune: ParameterList = (), parameter_names: Sequence[str] = ()
    ) -> ParameterList:
        """``parameters_to_prune`` checked against the model, or (empty) every ``parameter_names`` parameter of
        its layers."""
        names = parameter_names or ModelPruning.PARAMETER_NAMES
        layers = [m for m in pl_module.modules() if not _is_container(m)]
        if not parameters_to_prune:
            return [(m, p) for p in names for m in layers if isinstance(getattr(m, p, None), nn.Parameter)]
        if (
            isinstance(parameters_to_prune, list | tuple)
            and all(isinstance(p, list | tuple) and len(p) == 2 for p in parameters_to_prune)
            and all(isinstance(a, nn.Module) and isinstance(b, str) for a, b in parameters_to_prune)
        ):
            missing_modules, missing_parameters = [], []
            for module, name in parameters_to_prune:
                if not any(module is layer for layer in layers):
                    missing_modules.append(module)
                elif not hasattr(module, name):
                    missing_parameters.append(name)
            if missing_modules or missing_parameters:
                raise MisconfigurationException(
                    "Some provided `parameters_to_prune` don't exist in the model."
                    f" Found missing modules: {missing_modules} and missing parameters: {missing_parameters}"
                )
            return parameters_to_prune
        raise MisconfigurationException(
            "The provided `parameters_to_prune` should either be list of tuple"
            " with 2 elements: (nn.Module, parameter_name_to_prune) or None"
        )

    @staticmethod
    def _is_pruning_method(method: Any) -> bool:
        return inspect.isclass(method) and issubclass(method, torch_prune.BasePruningMethod)
