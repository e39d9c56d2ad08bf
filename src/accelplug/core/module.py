"""``LightningModule``: the module base a Lightning 2.x script subclasses, as a plain ``torch.nn.Module``.

It gives what Lightning's modules rely on: ``save_hyperparameters``/``hparams``, ``log``/``log_dict``,
``device``, ``trainer``, ``global_step``, ``current_epoch``, ``optimizers()``, ``lr_schedulers()``,
``manual_backward``, ``toggle_optimizer``/``untoggle_optimizer``, ``clip_gradients``, ``print``, and
every hook Lightning 2.x calls, as methods that do nothing unless overridden. The Trainer calls a hook
only when the subclass overrides it, so the defaults cost nothing per step.

A module that subclasses plain ``torch.nn.Module`` and defines ``training_step`` and
``configure_optimizers`` trains as well; this base only adds the conveniences.
"""

from __future__ import annotations

import numbers
import os
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import IO, Any, ClassVar, Protocol, TypeVar

import torch

from ..errors import LightningDeprecationWarning, MisconfigurationException, PossibleUserWarning
from ..overrides import default_hook, hook_names
from .class_only import class_only_method
from .hooks import ModuleHooks
from .hparams import AttributeDict, HyperparametersMixin
from .steps import StepDefaults

#: Lightning 2.6's deprecation of ``LightningModule.to_torchscript``, word for word
TORCHSCRIPT_DEPRECATED = (
    "`LightningModule.to_torchscript` has been deprecated in v2.7 and will be removed in v2.8. "
    "TorchScript is deprecated in PyTorch. Use `torch.export.export()` for model exporting instead. "
    "See https://pytorch.org/docs/stable/export.html for more information."
)

__all__ = ["MODULE_HOOKS", "AttributeDict", "LightningModule", "LogSink", "OptimizerControl", "warn_logging_disabled"]


class LogSink(Protocol):
    """Where ``self.log`` goes while a run drives the module (the Trainer hands over its log router)."""

    def log(self, name: str, value: Any, *args: Any, **kwargs: Any) -> None: ...

    def log_dict(self, dictionary: Mapping[str, Any], *args: Any, **kwargs: Any) -> None: ...


class OptimizerControl(Protocol):
    """What ``optimizers()``, ``lr_schedulers()``, ``manual_backward`` and ``clip_gradients`` reach while fit trains.

    The Trainer's loop hands one over (its ``Optimization``); the module never imports its runner, so a
    custom loop (``accelplug.fabric``) can hand over its own.
    """

    @property
    def managed(self) -> Sequence[Any]:
        """The optimizers as the module sees them (``step`` goes through the precision)."""

    @property
    def optimizers(self) -> Sequence[torch.optim.Optimizer]:
        """The torch optimizers themselves."""

    @property
    def schedulers(self) -> Sequence[Any]:
        """The scheduler configurations (each has ``.scheduler``)."""

    def manual_backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None: ...

    def clip_gradients(self, optimizer: Any, value: float | None, algorithm: str | None) -> None: ...


_M = TypeVar("_M", bound="LightningModule")


class LightningModule(HyperparametersMixin, StepDefaults, ModuleHooks, torch.nn.Module):
    """Subclass this (or ``torch.nn.Module``) and define ``training_step`` and ``configure_optimizers``."""

    #: Where checkpoints keep the hyper-parameters (Lightning's keys, so each reads the other's).
    CHECKPOINT_HYPER_PARAMS_KEY = "hyper_parameters"
    CHECKPOINT_HYPER_PARAMS_NAME = "hparams_name"
    CHECKPOINT_HYPER_PARAMS_TYPE = "hparams_type"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._strict_loading: bool | None = None
        self._example_input_array: Any = None
        self._trainer: Any = None
        self._log_sink: LogSink | None = None
        self._optimizer_control: OptimizerControl | None = None
        self._automatic_optimization = True
        self._warned_no_trainer = False
        self._fabric: Any = None
        self._fabric_optimizers: list[Any] = []
        self._device_mesh: Any = None

    @property
    def automatic_optimization(self) -> bool:
        """Set to False to step the optimizers yourself in ``training_step`` (manual optimization)."""
        return self._automatic_optimization

    @automatic_optimization.setter
    def automatic_optimization(self, value: bool) -> None:
        self._automatic_optimization = bool(value)

    # ---- checkpoints and export -------------------------------------------------------------------------
    @class_only_method
    def load_from_checkpoint(
        cls: type[_M],
        checkpoint_path: str | os.PathLike[str] | IO[bytes],
        map_location: Any = None,
        hparams_file: str | os.PathLike[str] | None = None,
        strict: bool | None = None,
        weights_only: bool | None = None,
        **kwargs: Any,
    ) -> _M:
        """The module rebuilt from a checkpoint (accelplug's or Lightning's): its saved hyper-parameters are the
        constructor's arguments (``kwargs`` override them), then its weights are loaded (see :mod:`.saving`)."""
        from .saving import load_from_checkpoint

        arguments = (map_location, hparams_file, strict, weights_only)
        loaded: _M = load_from_checkpoint(cls, checkpoint_path, *arguments, **kwargs)
        return loaded

    @property
    def strict_loading(self) -> bool:
        """Whether ``load_from_checkpoint`` (and a resume) require the checkpoint's keys to match exactly."""
        return self._strict_loading in (None, True)

    @strict_loading.setter
    def strict_loading(self, value: bool) -> None:
        self._strict_loading = value

    @property
    def example_input_array(self) -> Any:
        """An input for ``to_onnx``/``to_torchscript(method="trace")`` when none is passed."""
        return self._example_input_array

    @example_input_array.setter
    def example_input_array(self, example: Any) -> None:
        self._example_input_array = example

    def freeze(self: _M) -> _M:
        """No parameter requires a gradient, and evaluation mode: ready for inference."""
        for parameter in self.parameters():
            parameter.requires_grad = False
        return self.eval()

    def unfreeze(self: _M) -> _M:
        for parameter in self.parameters():
            parameter.requires_grad = True
        return self.train()

    def to_onnx(self, file_path: Any = None, input_sample: Any = None, **kwargs: Any) -> Any:
        """``torch.onnx.export`` of this module (needs the ``onnx`` package); ``input_sample`` defaults to
        ``example_input_array``; ``kwargs`` go to ``torch.onnx.export``."""
        from .saving import export_onnx

        return export_onnx(self, file_path, input_sample, **kwargs)

    def to_torchscript(
        self, file_path: Any = None, method: str | None = "script", example_inputs: Any = None, **kwargs: Any
    ) -> Any:
        """This module as TorchScript (``torch.jit.script``, or ``trace`` with ``example_inputs``), in eval mode.

        Lightning 2.6 deprecates it (torch deprecates TorchScript) and says so on rank 0 at every call, before
        looking at the arguments; so does this one, with Lightning's words, so a script migrating sees the same.
        """
        from lightning_utilities.core.rank_zero import rank_zero_only

        from .saving import export_torchscript

        if int(getattr(rank_zero_only, "rank", 0) or 0) == 0:
            warnings.warn(TORCHSCRIPT_DEPRECATED, LightningDeprecationWarning, stacklevel=2)
        return export_torchscript(self, file_path, method, example_inputs, **kwargs)

    def to_tensorrt(
        self,
        file_path: str | os.PathLike[str] | IO[bytes] | None = None,
        input_sample: Any | None = None,
        ir: str = "default",
        output_format: str = "exported_program",
        retrace: bool = False,
        default_device: str | torch.device = "cuda",
        **compile_kwargs: Any,
    ) -> Any:
        """This module compiled by ``torch_tensorrt`` (needs that package and an NVIDIA GPU), optionally saved."""
        from .saving import export_tensorrt

        options = (ir, output_format, retrace, default_device)
        return export_tensorrt(self, file_path, input_sample, *options, **compile_kwargs)

    # ---- logging ------------------------------------------------------------------------------------
    def log(
        self,
        name: str,
        value: Any,
        prog_bar: bool = False,
        logger: bool | None = None,
        on_step: bool | None = None,
        on_epoch: bool | None = None,
        reduce_fx: str | Callable[[Any], Any] = "mean",
        enable_graph: bool = False,
        sync_dist: bool = False,
        sync_dist_group: Any = None,
        add_dataloader_idx: bool = True,
        batch_size: int | None = None,
        metric_attribute: str | None = None,
        rank_zero_only: bool = False,
    ) -> None:
        """Report a metric (Lightning's meaning: step or epoch value depending on the hook; see the docs)."""
        sink = self._log_sink
        if sink is None:
            if self._fabric is not None:
                self._log_through_fabric({name: value}, logger)
                return
            self._refuse_outside_collection("self.log")
            return
        if (
            metric_attribute is None
            and isinstance(value, torch.nn.Module)
            and callable(getattr(value, "compute", None))
        ):
            metric_attribute = self._metric_attribute_of(value, name)
        options = {k: v for k, v in locals().items() if k not in ("self", "sink", "name", "value")}
        sink.log(name, value, **options)

    def _metric_attribute_of(self, metric: torch.nn.Module, name: str) -> str:
        """The attribute that holds a logged torchmetrics ``Metric`` (Lightning needs it to restore the metric's
        state); found once per module, as Lightning does, and refused with Lightning's words when it has none."""
        found: dict[int, str] | None = self.__dict__.get("_logged_metric_attributes")
        if found is None:
            found = {
                id(m): n
                for n, m in self.named_modules()
                if m is not self and callable(getattr(m, "compute", None)) and callable(getattr(m, "update", None))
            }
            self.__dict__["_logged_metric_attributes"] = found
        hint = "You can fix this by setting an attribute for the metric in your `LightningModule`."
        if found:
            hint = (
                f"You can fix this by calling `self.log({name}, ..., metric_attribute=name)` where `name` is one of "
                f"{list(found.values())}"
            )
        attribute = found.get(id(metric))
        if attribute is None:
            raise MisconfigurationException(
                f"Could not find the `LightningModule` attribute for the `torchmetrics.Metric` logged as {name!r}. "
                + hint
            )
        return attribute

    def log_dict(
        self,
        dictionary: Mapping[str, Any],
        prog_bar: bool = False,
        logger: bool | None = None,
        on_step: bool | None = None,
        on_epoch: bool | None = None,
        reduce_fx: str | Callable[[Any], Any] = "mean",
        enable_graph: bool = False,
        sync_dist: bool = False,
        sync_dist_group: Any = None,
        add_dataloader_idx: bool = True,
        batch_size: int | None = None,
        rank_zero_only: bool = False,
    ) -> None:
        sink = self._log_sink
        if sink is None:
            if self._fabric is not None:
                self._log_through_fabric(dictionary, logger)
                return
            self._refuse_outside_collection("self.log_dict")
            return
        options = {k: v for k, v in locals().items() if k not in ("self", "sink", "dictionary")}
        sink.log_dict(dictionary, **options)

    def _log_through_fabric(self, metrics: Mapping[str, Any], logger: bool | None) -> None:
        """Under Fabric, ``self.log`` goes to the Fabric's loggers (``logger=False`` keeps it out, as in Lightning);
        a value no logger can take (a nested dict, a list, a string) is refused with Lightning's words."""
        if logger is False:
            return
        nested = next((k for k, v in metrics.items() if isinstance(v, Mapping)), None)
        if nested is not None:
            raise MisconfigurationException(
                f"`self.log_dict({dict(metrics)})` was called, but nested dictionaries cannot be logged: the value "
                f"under {nested!r} is a dict; log each value under its own name."
            )
        for name, value in metrics.items():
            if not isinstance(value, (numbers.Number, torch.Tensor)):
                raise MisconfigurationException(
                    f"`self.log({name}, {value!r})` was called, but `{type(value).__name__}` values cannot be logged: "
                    "log a number or a tensor."
                )
        self._fabric.log_dict(dict(metrics))

    def _refuse_outside_collection(self, what: str) -> None:
        """``self.log`` where nothing collects it: a warning without a Trainer; with one, Lightning's errors (a hook
        that runs outside the loops, such as ``setup`` or ``configure_optimizers``, or a ``predict`` call)."""
        trainer = self._trainer
        if trainer is None:
            self._warn_unattached(what)
            return
        if getattr(trainer, "barebones", False):
            warn_logging_disabled(what)
            return
        if getattr(getattr(trainer, "state", None), "fn", None) == "predict":
            raise MisconfigurationException(
                f"You are trying to `{what}()` but the loop's result collection is not registered yet: "
                "`trainer.predict` does not support logging. Return the values from `predict_step` instead."
            )
        raise MisconfigurationException(
            f"You can't `{what}()` here: this hook runs outside the loops that collect logged values (as in "
            "Lightning: prepare_data, setup, configure_model, configure_optimizers, teardown...). Log from the "
            "step methods or the batch and epoch hooks."
        )

    def _warn_unattached(self, what: str) -> None:
        if not self._warned_no_trainer:
            self._warned_no_trainer = True
            warnings.warn(
                f"You are trying to `self.log()` but the `self.trainer` reference is not registered on the model yet: "
                f"{what}() was called outside trainer.fit/validate/test, so the value goes nowhere.",
                UserWarning,
                stacklevel=3,
            )

    def print(self, *args: Any, **kwargs: Any) -> None:
        """``print`` on the global-zero process only (each process would print otherwise), through the progress
        bar's ``print`` while one draws, so the text does not cut through the bars."""
        trainer = self._trainer
        if trainer is None:
            print(*args, **kwargs)
        elif trainer.is_global_zero:
            bar = trainer.progress_bar_callback
            if bar is not None and bar.is_enabled:
                bar.print(*args, **kwargs)
            else:
                print(*args, **kwargs)

    # ---- where the module runs ------------------------------------------------------------------------
    #: True while torch.jit scripts the module (``to_torchscript``): ``trainer`` then reads as None.
    _jit_is_scripting = False
    #: Properties torch.jit must not compile (filled in below the class: all of this class's own).
    __jit_unused_properties__: ClassVar[list[str]] = []

    @property
    def trainer(self) -> Any:
        """The Trainer running this module; under Fabric (set up by ``fabric.setup``, no Trainer), a view that
        answers with the Fabric's attributes (``self.trainer.global_rank``), as Lightning's does."""
        if self._trainer is None and self._fabric is not None:
            return _TrainerFabricShim(self._fabric)
        if self._trainer is None and not self._jit_is_scripting:
            raise RuntimeError(f"{type(self).__qualname__} is not attached to a `Trainer` (call trainer.fit first).")
        return self._trainer

    @trainer.setter
    def trainer(self, trainer: Any) -> None:
        for child in self.children():  # an ensemble's inner LightningModules see the same Trainer (Lightning's rule)
            if isinstance(child, LightningModule):
                child.trainer = trainer
        self._trainer = trainer

    def __getstate__(self) -> dict[str, Any]:
        # A copy (deepcopy, pickle) leaves the Trainer and what the run attached behind, as Lightning's does:
        # the weight-averaging callbacks copy the module while it is attached, and must not copy the Trainer.
        state = dict(self.__dict__)
        state["_trainer"] = state["_log_sink"] = state["_optimizer_control"] = None
        return state

    @property
    def fabric(self) -> Any:
        """The ``Fabric`` that set this module up (``fabric.setup``), or None: ``self.log`` then logs through it."""
        return self._fabric

    @fabric.setter
    def fabric(self, fabric: Any) -> None:
        for child in self.children():
            if isinstance(child, LightningModule):
                child.fabric = fabric
        if fabric is not None and not isinstance(fabric, weakref.ProxyTypes):
            fabric = weakref.proxy(fabric)  # the module must not keep its Fabric alive (Lightning's choice too)
        self._fabric = fabric

    @property
    def device_mesh(self) -> Any:
        """The ``DeviceMesh`` a mesh-building strategy (``ModelParallelStrategy``) made, for ``configure_model``
        to parallelise the layers over; None under every other strategy."""
        return self._device_mesh

    def all_gather(self, data: Any, group: Any | None = None, sync_grads: bool = False) -> Any:
        """``data`` (a tensor, number or collection of them) from every process, stacked on a new first dimension.

        Every process must call it with tensors of one shape. With one process nothing is added, as in
        Lightning. ``sync_grads=True`` lets gradients flow back to each process's own part.
        """
        from ..data.batches import apply_to_tensors, convert_to_tensors

        strategy = self.trainer.strategy
        tensors = convert_to_tensors(data, self.device)
        return apply_to_tensors(tensors, lambda t: strategy.all_gather(t, group=group, sync_grads=sync_grads))

    @property
    def device(self) -> torch.device:
        for parameter in self.parameters():
            return parameter.device
        for buffer in self.buffers():
            return buffer.device
        return torch.device("cpu")

    @property
    def dtype(self) -> torch.dtype:
        for tensor in self.parameters():
            return tensor.dtype
        return torch.get_default_dtype()

    @property
    def on_gpu(self) -> bool:
        return self.device.type == "cuda"

    @property
    def global_step(self) -> int:
        return int(self._trainer.global_step) if self._trainer is not None else 0

    @property
    def current_epoch(self) -> int:
        return int(self._trainer.current_epoch) if self._trainer is not None else 0

    @property
    def global_rank(self) -> int:
        return int(self._trainer.global_rank) if self._trainer is not None else 0

    @property
    def local_rank(self) -> int:
        return int(self._trainer.local_rank) if self._trainer is not None else 0

    @property
    def logger(self) -> Any:
        if self._trainer is None and self._fabric is not None:
            return self._fabric.logger  # no loggers: Fabric's IndexError, as in Lightning
        return self._trainer.logger if self._trainer is not None else None

    @property
    def loggers(self) -> list[Any]:
        if self._trainer is None and self._fabric is not None:
            return list(self._fabric.loggers)
        return list(self._trainer.loggers) if self._trainer is not None else []

    # ---- optimizers -------------------------------------------------------------------------------------
    def configure_optimizers(self) -> Any:
        raise MisconfigurationException(
            f"{type(self).__name__} does not define configure_optimizers(), which fit() needs: return an "
            "optimizer, e.g. torch.optim.Adam(self.parameters(), lr=1e-3)."
        )

    def optimizers(self, use_pl_optimizer: bool = True) -> Any:
        """The optimizer(s) of the current or last fit: one object when there is one, else a list (``[]`` on a
        Trainer that has not fitted this module, as in Lightning)."""
        if self._optimizer_control is None and self._fabric is not None:
            fabric_optimizers = self._fabric_optimizers
            return fabric_optimizers[0] if len(fabric_optimizers) == 1 else list(fabric_optimizers)
        control = self._optimizer_control
        if control is None:
            _ = self.trainer  # unattached: Lightning's RuntimeError
            return []
        found = control.managed if use_pl_optimizer else control.optimizers
        return found[0] if len(found) == 1 else list(found)

    def lr_schedulers(self) -> Any:
        """The scheduler(s) of the current or last fit: None, one object, or a list."""
        if self._optimizer_control is None:
            _ = self.trainer  # unattached: Lightning's RuntimeError
            return None
        schedulers = [c.scheduler for c in self._optimizer_control.schedulers]
        if not schedulers:
            return None
        return schedulers[0] if len(schedulers) == 1 else schedulers

    def manual_backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        """Backward for manual optimization: through the precision (loss scaling) and the backward hooks (under
        Fabric: ``fabric.backward``)."""
        if self._optimizer_control is None and self._fabric is not None:
            self._fabric.backward(loss, *args, **kwargs)
            return
        self._control().manual_backward(loss, *args, **kwargs)

    def clip_gradients(
        self,
        optimizer: Any,
        gradient_clip_val: float | None = None,
        gradient_clip_algorithm: str | None = None,
    ) -> None:
        self._check_clipping_agrees(gradient_clip_val, gradient_clip_algorithm)
        if gradient_clip_algorithm not in (None, "norm", "value"):
            raise MisconfigurationException(
                f"gradient_clip_algorithm={gradient_clip_algorithm!r} is invalid: expected 'norm' or 'value'."
            )
        if self._optimizer_control is None and self._fabric is not None:  # under Fabric: fabric.clip_gradients
            by_value = gradient_clip_algorithm == "value"
            clip_val, max_norm = (gradient_clip_val, None) if by_value else (None, gradient_clip_val)
            self._fabric.clip_gradients(self, optimizer, clip_val=clip_val, max_norm=max_norm)
            return
        self._control().clip_gradients(optimizer, gradient_clip_val, gradient_clip_algorithm)

    def _check_clipping_agrees(self, value: float | None, algorithm: str | None) -> None:
        """A value or algorithm given both to the Trainer and to ``clip_gradients`` must be the same (Lightning's
        rule: ``configure_gradient_clipping`` receives the Trainer's, and one of the two would be silently lost)."""
        trainer = self._trainer
        if trainer is None:
            return
        set_value = getattr(trainer, "gradient_clip_val", None)
        if value is not None and set_value is not None and set_value != value:
            raise MisconfigurationException(
                f"You have set `Trainer(gradient_clip_val={set_value!r})` and have passed "
                f"`clip_gradients(gradient_clip_val={value!r})`. Please use only one of them."
            )
        set_algorithm = getattr(trainer, "gradient_clip_algorithm", None)
        if algorithm is not None and set_algorithm is not None and set_algorithm != algorithm.lower():
            raise MisconfigurationException(
                f"You have set `Trainer(gradient_clip_algorithm={set_algorithm!r})` and have passed "
                f"`clip_gradients(gradient_clip_algorithm={algorithm!r})`. Please use only one of them."
            )

    def toggle_optimizer(self, optimizer: Any) -> None:
        """Let only ``optimizer``'s parameters require gradients: the parameters of the run's other optimizers are
        frozen until :meth:`untoggle_optimizer`, and parameters no optimizer holds are left as they are (Lightning's
        rule: a frozen layer outside every optimizer would otherwise leave the loss without a gradient)."""
        saved: dict[torch.nn.Parameter, bool] = {}
        for raw in self._run_optimizers(optimizer):
            for group in raw.param_groups:
                for param in group["params"]:
                    if param not in saved:
                        saved[param] = param.requires_grad
                        param.requires_grad_(False)
        for group in _raw_optimizer(optimizer).param_groups:
            for param in group["params"]:
                param.requires_grad_(saved[param])
        self._toggled = saved

    def untoggle_optimizer(self, optimizer: Any) -> None:
        """Give the other optimizers' parameters back the ``requires_grad`` they had at :meth:`toggle_optimizer`."""
        saved: dict[torch.nn.Parameter, bool] = getattr(self, "_toggled", {})
        target = _raw_optimizer(optimizer)
        for raw in self._run_optimizers(optimizer):
            if raw is target:
                continue
            for group in raw.param_groups:
                for param in group["params"]:
                    if param in saved:
                        param.requires_grad_(saved[param])
        self._toggled = {}

    def _run_optimizers(self, optimizer: Any) -> list[Any]:
        """The unwrapped optimizers of the running Trainer (or Fabric), ``optimizer`` included."""
        found: list[Any] = []
        if self._trainer is not None:
            found = [_raw_optimizer(o) for o in getattr(self._trainer, "optimizers", [])]
        elif self._fabric_optimizers:
            found = [_raw_optimizer(o) for o in self._fabric_optimizers]
        target = _raw_optimizer(optimizer)
        return found if any(o is target for o in found) else [*found, target]

    @contextmanager
    def toggled_optimizer(self, optimizer: Any) -> Iterator[None]:
        self.toggle_optimizer(optimizer)
        try:
            yield
        finally:
            self.untoggle_optimizer(optimizer)

    def _control(self) -> OptimizerControl:
        if self._optimizer_control is None:
            raise RuntimeError(
                f"{type(self).__name__}.manual_backward()/clip_gradients() need a fit's optimizers: call them inside "
                "trainer.fit()."
            )
        return self._optimizer_control

    # ---- how a runner attaches (the Trainer today, a custom loop next): it hands over, never imported ------
    @contextmanager
    def _logging_to(self, sink: LogSink) -> Iterator[None]:
        """While the block runs, ``self.log``/``self.log_dict`` go to ``sink``."""
        previous, self._log_sink = self._log_sink, sink
        try:
            yield
        finally:
            self._log_sink = previous

    @contextmanager
    def _optimizing_with(self, control: OptimizerControl, *, keep: bool = False) -> Iterator[None]:
        """While the block runs, ``optimizers()``, ``manual_backward``... reach ``control``; with ``keep`` they
        still do afterwards (a fit's optimizers, which Lightning's ``optimizers()`` returns after the fit)."""
        previous, self._optimizer_control = self._optimizer_control, control
        try:
            yield
        finally:
            self._optimizer_control = control if keep else previous

    # ---- data hooks (override to give the Trainer your loaders) ----------------------------------------
    def predict_step(self, batch: Any, batch_idx: int = 0, dataloader_idx: int = 0) -> Any:
        """Default prediction: ``self(batch)`` (or ``self(*batch)`` is up to your own override)."""
        return self(batch)

    # ---- hooks: the rest are ModuleHooks' defaults (accelplug.core.hooks) -------------------------------
    def configure_callbacks(self) -> Any:
        return []

    @default_hook
    def configure_gradient_clipping(
        self, optimizer: Any, gradient_clip_val: float | None = None, gradient_clip_algorithm: str | None = None
    ) -> None:
        self.clip_gradients(
            optimizer, gradient_clip_val=gradient_clip_val, gradient_clip_algorithm=gradient_clip_algorithm
        )

    # ---- Lightning 1.x hooks that Lightning 2 removed: refused, never silently ignored ------------------
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_removed_hooks(cls)


#: torch.jit.script compiles every property it finds unless told not to; these read the Trainer or Python state.
LightningModule.__jit_unused_properties__ = sorted(
    {n for n, v in vars(LightningModule).items() if isinstance(v, property)}
    | set(HyperparametersMixin.__jit_unused_properties__)
)

#: The hooks a module may define, called as ``module.hook(*args)`` (Lightning 2.x's ``ModelHooks``, data and
#: checkpoint hooks): read from ``LightningModule``'s marked methods, so a hook is declared once, as its method.
MODULE_HOOKS = hook_names(LightningModule)

#: Lightning 1.x hooks removed in 2.0 that Lightning 2 refuses (``NotImplementedError`` when a run starts), with
#: what replaced each: their outputs argument no longer exists, so code written for them cannot be ported silently.
REFUSED_HOOKS = {
    "training_epoch_end": "on_train_epoch_end() (keep the step outputs you need on self)",
    "validation_epoch_end": "on_validation_epoch_end() (keep the step outputs you need on self)",
    "test_epoch_end": "on_test_epoch_end() (keep the step outputs you need on self)",
}

#: Lightning 1.x hooks removed in 2.0 that Lightning 2 silently never calls: a library may still define one (as a
#: no-op for subclasses), so defining one is accepted, with a warning that it will not run.
IGNORED_HOOKS = {
    "training_step_end": "do the work at the end of training_step",
    "validation_step_end": "do the work at the end of validation_step",
    "test_step_end": "do the work at the end of test_step",
    "on_pretrain_routine_start": "on_fit_start()",
    "on_pretrain_routine_end": "on_fit_start()",
    "on_epoch_start": "on_train_epoch_start() / on_validation_epoch_start()",
    "on_epoch_end": "on_train_epoch_end() / on_validation_epoch_end()",
    "on_batch_start": "on_train_batch_start()",
    "on_batch_end": "on_train_batch_end()",
}

#: Every Lightning 1.x hook Lightning 2 removed, with what replaced it.
REMOVED_HOOKS = {**REFUSED_HOOKS, **IGNORED_HOOKS}


class RemovedHookError(MisconfigurationException, NotImplementedError):
    """A LightningModule defines a hook Lightning 2 refuses (Lightning raises ``NotImplementedError``)."""


def warn_logging_disabled(what: str = "self.log") -> None:
    """``self.log`` under ``Trainer(barebones=True)``: the value is dropped, with Lightning's warning."""
    warnings.warn(
        f"You are trying to `{what}()` but `Trainer(barebones=True)` is configured. Logging can impact raw speed so "
        "it is disabled under this setting: the value goes nowhere.",
        UserWarning,
        stacklevel=4,
    )


def _installed_package(cls: type) -> bool:
    """Whether ``cls`` comes from an installed distribution (site-packages) rather than the user's own code."""
    import site
    import sys

    path = getattr(sys.modules.get(cls.__module__), "__file__", None) or ""
    return any(path.startswith(folder) for folder in (*site.getsitepackages(), site.getusersitepackages()))


def check_removed_hooks(cls: type) -> None:
    """Refuse a class that defines a hook Lightning 2 refuses; warn of one that Lightning 2 never calls."""
    for name, replacement in REFUSED_HOOKS.items():
        if name in cls.__dict__:
            raise RemovedHookError(
                f"{cls.__qualname__}.{name}() is a Lightning 1.x hook: support for `{name}` has been removed in "
                f"v2.0.0. Use {replacement} instead (see docs/migrating-from-lightning.md)."
            )
    if _installed_package(cls):
        return  # a library may keep one for its own calls (pytorch-forecasting's BaseModel.on_epoch_end)
    for name, replacement in IGNORED_HOOKS.items():
        if name in cls.__dict__:
            warnings.warn(
                f"{cls.__qualname__}.{name}() is a Lightning 1.x hook that Lightning 2 removed: the Trainer never "
                f"calls it (as Lightning 2's does not). Use {replacement} for work that should run.",
                PossibleUserWarning,
                stacklevel=3,
            )


class _TrainerFabricShim:
    """``self.trainer`` of a module Fabric set up: attributes come from the Fabric (``global_rank``, ``world_size``,
    ``strategy``...); a Trainer-only attribute raises an ``AttributeError`` that says so (Lightning's words)."""

    def __init__(self, fabric: Any) -> None:
        self._fabric = fabric

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(self._fabric, name)
        except AttributeError:
            raise AttributeError(
                f"Your LightningModule code tried to access `self.trainer.{name}` but this attribute is not available "
                "when using Fabric with a LightningModule."
            ) from None


def _raw_optimizer(optimizer: Any) -> Any:
    """The torch optimizer inside a wrapper (``self.optimizers()``'s, Fabric's), or ``optimizer`` itself."""
    return getattr(optimizer, "optimizer", optimizer)
