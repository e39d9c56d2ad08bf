"""What ``fabric.setup``, ``setup_module``, ``setup_optimizers`` and ``setup_dataloaders`` do, and what they
remember between calls: the modules already set up (each once), and the parameters a strategy replaced.

The strategy does the work, through the steps the Trainer uses (``Strategy.setup_module``, then
``Strategy.setup_optimizers``). What is Fabric's own is the order (the user builds optimizers, possibly
before the module is prepared) and the checks: under FSDP the sharded parameters replace the originals,
so an optimizer built on the originals gets the replacements swapped in before its first step.
"""

from __future__ import annotations

import inspect
import warnings
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from ..errors import MisconfigurationException
from .wrappers import FabricDataLoader, FabricModule, FabricOptimizer, unwrap_compiled

if TYPE_CHECKING:
    from ..precision.base import NumericPrecision
    from ..strategies.base import Strategy

__all__ = ["Preparation"]


class Preparation:
    """One Fabric's setup calls (see the module docstring)."""

    def __init__(
        self, strategy: Strategy, precision: NumericPrecision, callbacks: list[Any], unscaled: set[int]
    ) -> None:
        self.strategy = strategy
        self.precision = precision
        self.callbacks = callbacks
        self.unscaled = unscaled
        self.models = 0
        #: id(old parameter) -> (a weak reference to it, the parameter that replaced it).
        self._replaced: dict[int, tuple[weakref.ref[torch.Tensor], torch.Tensor]] = {}

    def __getstate__(self) -> dict[str, Any]:
        """A process started with ``ddp_spawn`` gets the strategy and precision, not this process's bookkeeping."""
        return {k: v for k, v in self.__dict__.items() if k != "_replaced"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._replaced = {}

    # ---- checks ----------------------------------------------------------------------------------
    @staticmethod
    def check_module(module: object, what: str) -> torch.nn.Module:
        """The user's module behind ``module`` (``torch.compile`` looked through), refused if it is already what
        ``setup`` returned. A module set up again is accepted, as in Lightning (it gets another wrapper)."""
        original, _ = unwrap_compiled(module)
        if isinstance(original, FabricModule):
            raise MisconfigurationException(
                f"A model should be passed only once to the `{what}` method: this one is what fabric.{what} returned "
                "before; pass the module you built."
            )
        if not isinstance(original, torch.nn.Module):
            raise MisconfigurationException(
                f"fabric.{what}(module={module!r}): expected a torch.nn.Module, got a {type(module).__name__}."
            )
        return original

    @staticmethod
    def check_optimizer(optimizer: object, index: int, what: str) -> None:
        if isinstance(optimizer, FabricOptimizer):
            raise MisconfigurationException(
                f"An optimizer should be passed only once to the `{what}` method: optimizer {index} is what "
                "fabric.setup returned before; pass the torch optimizer you built."
            )
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise MisconfigurationException(
                f"fabric.{what}: optimizer {index} is a {type(optimizer).__name__}, not a torch.optim.Optimizer."
            )

    @staticmethod
    def check_steps(optimizer: torch.optim.Optimizer, index: int, module: torch.nn.Module) -> None:
        """An optimizer given with its module must step some of that module's parameters."""
        params = [p for group in optimizer.param_groups for p in group["params"]]
        own = {id(p) for p in module.parameters()}
        if params and not any(id(p) in own for p in params):
            raise MisconfigurationException(
                f"fabric.setup(module, *optimizers): optimizer {index} ({type(optimizer).__name__}) steps none of "
                f"the parameters of {type(module).__name__}; build it from this module's parameters: "
                f"torch.optim.{type(optimizer).__name__}(model.parameters(), ...)."
            )

    def check_not_meta(self, optimizer: torch.optim.Optimizer, index: int) -> None:
        params = [p for group in optimizer.param_groups for p in group["params"]]
        if any(p.is_meta and self._replacement(p) is p for p in params):
            raise MisconfigurationException(
                f"fabric.setup_optimizers: optimizer {index} holds parameters on the meta device; create it after "
                "fabric.setup_module(model), from the set-up model's parameters."
            )

    # ---- preparing -----------------------------------------------------------------------------------
    def module(self, module: torch.nn.Module, move_to_device: bool, device: torch.device) -> FabricModule:
        original, compiled = unwrap_compiled(module)
        before = dict(original.named_parameters())
        if move_to_device:
            _warn_mixed_devices(original)
        if _lightning_form(self.strategy.setup_module):
            prepared = self._lightning_form_module(original, move_to_device, device)
        else:
            prepared = self.strategy.setup_module(original, self.precision, move_to_device=move_to_device)
        for name, param in prepared.module.named_parameters():
            old = before.get(name)
            if old is not None and old is not param:
                self._remember(old, param)
        self.models += 1
        placed = device if move_to_device else None
        return FabricModule(prepared, self.strategy, self.precision, compiled=compiled, device=placed)

    def _lightning_form_module(self, module: torch.nn.Module, move_to_device: bool, device: torch.device) -> Any:
        """A strategy written to Lightning's ``setup_module(module)``: Lightning's order (the precision converts,
        Fabric moves, the strategy sets up). One that hands back another object (a wrapper of its own) is refused:
        accelplug's Fabric routes calls through wrappers it made itself (``setup_module(module, precision, *,
        move_to_device)`` is accelplug's form)."""
        from ..strategies.prepared import PreparedModule, training_step_caller

        module = self.precision.convert_module(module)
        if move_to_device:
            module.to(device)
        returned: object = self.strategy.setup_module(module)  # type: ignore[call-arg]
        if returned is not module:
            raise MisconfigurationException(
                f"{type(self.strategy).__name__}.setup_module(module) returned a {type(returned).__name__}, not the "
                "module: accelplug's Fabric wraps modules through the strategy's setup_module(module, precision, *, "
                "move_to_device) form; override that one to wrap the module."
            )
        return PreparedModule(module, training_step_caller(module))

    def optimizers(self, optimizers: Sequence[torch.optim.Optimizer]) -> list[FabricOptimizer]:
        from ..strategies.optimizers import OptimizerSetup

        for optimizer in optimizers:
            if optimizer.state:
                continue  # stepped before: its state is keyed by the old parameters; left as the user built it
            for group in optimizer.param_groups:
                group["params"] = [self._replacement(p) for p in group["params"]]
        prepared = self.strategy.setup_optimizers(OptimizerSetup(list(optimizers), []))
        return [
            FabricOptimizer(o, self.strategy, self.precision, self.callbacks, self.unscaled)
            for o in prepared.optimizers
        ]

    def dataloaders(
        self, dataloaders: Sequence[Any], use_distributed_sampler: bool, device: torch.device | None, rank: int
    ) -> list[FabricDataLoader]:
        """Each loader sharded (a distributed sampler), its workers seeded after ``seed_everything(workers=True)``
        (Lightning's ``pl_worker_init_function`` for this rank), wrapped to move batches to ``device``."""
        from torch.utils.data import DataLoader

        from ..data.samplers import sampler_seed
        from ..data.workers import add_worker_seeding

        if not dataloaders:
            raise MisconfigurationException(
                "`setup_dataloaders` requires at least one dataloader as input: fabric.setup_dataloaders(loader, ...)."
            )
        for index, loader in enumerate(dataloaders):
            if isinstance(loader, FabricDataLoader):
                raise MisconfigurationException(
                    "A dataloader should be passed only once to the `setup_dataloaders` method: dataloader "
                    f"{index} is what setup_dataloaders returned before."
                )
        for index, loader in enumerate(dataloaders):
            if not isinstance(loader, DataLoader):
                raise _NotADataLoader(
                    f"Only PyTorch DataLoader are currently supported in `setup_dataloaders`: dataloader {index} is "
                    f"a {type(loader).__name__}; wrap it in torch.utils.data.DataLoader."
                )
        seed = sampler_seed()
        out = []
        for loader in dataloaders:
            if use_distributed_sampler:
                loader = self.strategy.prepare_dataloader(loader, shuffle_seed=seed)
            add_worker_seeding(loader, rank)
            out.append(FabricDataLoader(self.strategy.process_dataloader(loader), device, self.strategy))
        return out

    def _remember(self, old: torch.Tensor, new: torch.Tensor) -> None:
        key = id(old)

        def forget(_ref: weakref.ref[torch.Tensor]) -> None:
            self._replaced.pop(key, None)

        self._replaced[key] = (weakref.ref(old, forget), new)

    def _replacement(self, param: torch.Tensor) -> torch.Tensor:
        entry = self._replaced.get(id(param))
        return entry[1] if entry is not None and entry[0]() is param else param


class _NotADataLoader(MisconfigurationException, TypeError):
    """``setup_dataloaders`` was given something else than a DataLoader (Lightning: a ``TypeError``)."""


def _warn_mixed_devices(module: torch.nn.Module) -> None:
    devices = {p.device for p in module.parameters()}
    if len(devices) > 1:
        warnings.warn(
            f"the model given to fabric.setup has parameters on {len(devices)} devices "
            f"({', '.join(sorted(str(d) for d in devices))}); move_to_device=True moves all of them to one. Pass "
            "move_to_device=False to place them yourself.",
            UserWarning,
            stacklevel=4,
        )


def _lightning_form(setup_module: Any) -> bool:
    """Whether a strategy's ``setup_module`` has Lightning's signature (the module only): a strategy written to
    Lightning's API, or one whose method was replaced (``strategy.setup_module = lambda module: module``)."""
    try:
        parameters = inspect.signature(setup_module).parameters
    except (TypeError, ValueError):
        return False
    return "precision" not in parameters and not any(p.kind is p.VAR_KEYWORD for p in parameters.values())
