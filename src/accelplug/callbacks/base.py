"""The callback protocol: Lightning 2.x's ``Callback`` hooks.

A callback is any object with some of these methods (Lightning 2.x's ``Callback`` hooks, each called
as ``hook(trainer, module, ...)``); subclassing :class:`Callback` is optional and only documents the
signatures. The Trainer resolves the hooks a callback overrides once per run, so a hook nobody
defines costs nothing per step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..overrides import default_hook, hook_names

if TYPE_CHECKING:
    import torch

__all__ = ["CALLBACK_HOOKS", "Callback", "Checkpoint"]


class Callback:
    """Hooks into fit/validate/test/predict; override the ones you need (Lightning's names and order)."""

    @property
    def state_key(self) -> str:
        """The key of this callback's ``state_dict`` in a checkpoint."""
        return type(self).__qualname__

    def _generate_state_key(self, **kwargs: Any) -> str:
        """A ``state_key`` that tells apart two instances configured differently (Lightning's format, so a
        checkpoint written by Lightning restores the same callback here)."""
        return f"{type(self).__qualname__}{kwargs!r}"

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned (on resume)."""

    @default_hook
    def setup(self, trainer: Any, pl_module: torch.nn.Module, stage: str) -> None:
        """At the start of fit/validate/test/predict, after ``prepare_data``, before the module is prepared."""

    @default_hook
    def teardown(self, trainer: Any, pl_module: torch.nn.Module, stage: str) -> None:
        """At the end of fit/validate/test/predict, also after an exception."""

    @default_hook
    def on_fit_start(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        """Before the sanity check and the first training step (after a resume has been restored)."""

    @default_hook
    def on_fit_end(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        """After the last training step."""

    @default_hook
    def on_sanity_check_start(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_sanity_check_end(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_train_start(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_train_end(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_train_epoch_start(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...

    @default_hook
    def on_train_epoch_end(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        """After the last training batch of an epoch and its validation."""

    @default_hook
    def on_train_batch_start(self, trainer: Any, pl_module: torch.nn.Module, batch: Any, batch_idx: int) -> None: ...

    @default_hook
    def on_train_batch_end(
        self, trainer: Any, pl_module: torch.nn.Module, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        """After each training batch (and after the optimizer step when one happened)."""

    @default_hook
    def on_validation_start(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...

    @default_hook
    def on_validation_end(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        """After a validation pass; ``trainer.callback_metrics`` holds its averaged metrics."""

    @default_hook
    def on_validation_epoch_start(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_validation_epoch_end(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_validation_batch_start(
        self, trainer: Any, pl_module: torch.nn.Module, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None: ...
    @default_hook
    def on_validation_batch_end(
        self,
        trainer: Any,
        pl_module: torch.nn.Module,
        outputs: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None: ...
    @default_hook
    def on_test_start(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_test_end(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_test_epoch_start(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_test_epoch_end(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_test_batch_start(
        self, trainer: Any, pl_module: torch.nn.Module, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None: ...
    @default_hook
    def on_test_batch_end(
        self,
        trainer: Any,
        pl_module: torch.nn.Module,
        outputs: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None: ...
    @default_hook
    def on_predict_start(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_predict_end(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_predict_epoch_start(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_predict_epoch_end(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_predict_batch_start(
        self, trainer: Any, pl_module: torch.nn.Module, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None: ...
    @default_hook
    def on_predict_batch_end(
        self,
        trainer: Any,
        pl_module: torch.nn.Module,
        outputs: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None: ...
    @default_hook
    def on_before_backward(self, trainer: Any, pl_module: torch.nn.Module, loss: torch.Tensor) -> None: ...
    @default_hook
    def on_after_backward(self, trainer: Any, pl_module: torch.nn.Module) -> None: ...
    @default_hook
    def on_before_optimizer_step(self, trainer: Any, pl_module: torch.nn.Module, optimizer: Any) -> None: ...
    @default_hook
    def on_before_zero_grad(self, trainer: Any, pl_module: torch.nn.Module, optimizer: Any) -> None: ...
    @default_hook
    def on_save_checkpoint(self, trainer: Any, pl_module: torch.nn.Module, checkpoint: dict[str, Any]) -> None: ...
    @default_hook
    def on_load_checkpoint(self, trainer: Any, pl_module: torch.nn.Module, checkpoint: dict[str, Any]) -> None: ...
    @default_hook
    def on_exception(self, trainer: Any, pl_module: torch.nn.Module, exception: BaseException) -> None: ...


#: The hooks a callback may define, called as ``hook(trainer, module, *args)``: read from ``Callback``'s marked methods.
CALLBACK_HOOKS = hook_names(Callback)


class Checkpoint(Callback):
    """The base of checkpointing callbacks: the Trainer runs them after the others and saves their state."""
