"""Every hook Lightning 2.x calls on a module, as a default the Trainer knows to skip.

``LightningModule`` inherits these (Lightning keeps them in ``ModelHooks``, ``DataHooks`` and
``CheckpointHooks``). Each is marked with :func:`~accelplug.overrides.default_hook`: a hook a module does
not override is never called, so the defaults cost nothing per step, and the names of the module hooks
(``accelplug.core.module.MODULE_HOOKS``) are read from these marks rather than written out again.
"""

from __future__ import annotations

from typing import Any

import torch

from ..overrides import default_hook

__all__ = ["ModuleHooks"]


class ModuleHooks:
    """No-ops unless overridden, or Lightning's default behaviour (moving a batch, stepping an optimizer)."""

    @default_hook
    def setup(self, stage: str) -> None: ...
    @default_hook
    def teardown(self, stage: str) -> None: ...
    @default_hook
    def prepare_data(self) -> None: ...
    @default_hook
    def configure_model(self) -> None: ...
    @default_hook
    def on_fit_start(self) -> None: ...
    @default_hook
    def on_fit_end(self) -> None: ...
    @default_hook
    def on_train_start(self) -> None: ...
    @default_hook
    def on_train_end(self) -> None: ...
    @default_hook
    def on_train_epoch_start(self) -> None: ...
    @default_hook
    def on_train_epoch_end(self) -> None: ...
    @default_hook
    def on_train_batch_start(self, batch: Any, batch_idx: int) -> int | None: ...
    @default_hook
    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None: ...
    @default_hook
    def on_validation_start(self) -> None: ...
    @default_hook
    def on_validation_end(self) -> None: ...
    @default_hook
    def on_validation_epoch_start(self) -> None: ...
    @default_hook
    def on_validation_epoch_end(self) -> None: ...
    @default_hook
    def on_validation_batch_start(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None: ...
    @default_hook
    def on_validation_batch_end(self, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None: ...
    @default_hook
    def on_validation_model_zero_grad(self) -> None:
        # what the loop does unless this is overridden; for super() calls (Lightning's default)
        self.zero_grad()  # type: ignore[attr-defined]

    @default_hook
    def on_validation_model_eval(self) -> None:
        self.trainer.model.eval()  # type: ignore[attr-defined]  # what the loop does unless this is overridden

    @default_hook
    def on_validation_model_train(self) -> None:
        # Unless overridden, the loop gives each submodule back its own mode; this is for super() calls.
        self.trainer.model.train()  # type: ignore[attr-defined]

    @default_hook
    def on_test_start(self) -> None: ...
    @default_hook
    def on_test_end(self) -> None: ...
    @default_hook
    def on_test_epoch_start(self) -> None: ...
    @default_hook
    def on_test_epoch_end(self) -> None: ...
    @default_hook
    def on_test_batch_start(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None: ...
    @default_hook
    def on_test_batch_end(self, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None: ...
    @default_hook
    def on_test_model_eval(self) -> None:
        self.trainer.model.eval()  # type: ignore[attr-defined]  # what the loop does unless this is overridden

    @default_hook
    def on_test_model_train(self) -> None:
        # Unless overridden, the loop gives each submodule back its own mode; this is for super() calls.
        self.trainer.model.train()  # type: ignore[attr-defined]

    @default_hook
    def on_predict_start(self) -> None: ...
    @default_hook
    def on_predict_end(self) -> None: ...
    @default_hook
    def on_predict_epoch_start(self) -> None: ...
    @default_hook
    def on_predict_epoch_end(self) -> None: ...
    @default_hook
    def on_predict_batch_start(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None: ...
    @default_hook
    def on_predict_batch_end(self, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None: ...
    @default_hook
    def on_predict_model_eval(self) -> None:
        self.trainer.model.eval()  # type: ignore[attr-defined]  # what the loop does unless this is overridden

    @default_hook
    def on_before_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        return batch

    @default_hook
    def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        return batch

    @default_hook
    def transfer_batch_to_device(self, batch: Any, device: torch.device, dataloader_idx: int) -> Any:
        from ..data.batches import make_transfer

        return make_transfer(device, None)(batch)

    @default_hook
    def on_before_backward(self, loss: torch.Tensor) -> None: ...
    @default_hook
    def on_after_backward(self) -> None: ...
    @default_hook
    def on_before_optimizer_step(self, optimizer: Any) -> None: ...
    @default_hook
    def on_before_zero_grad(self, optimizer: Any) -> None: ...
    @default_hook
    def backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        loss.backward(*args, **kwargs)  # type: ignore[no-untyped-call]

    @default_hook
    def optimizer_step(self, epoch: int, batch_idx: int, optimizer: Any, optimizer_closure: Any = None) -> None:
        optimizer.step(closure=optimizer_closure)

    @default_hook
    def optimizer_zero_grad(self, epoch: int, batch_idx: int, optimizer: Any) -> None:
        optimizer.zero_grad()

    @default_hook
    def lr_scheduler_step(self, scheduler: Any, metric: Any) -> None:
        if metric is None:
            scheduler.step()
        else:
            scheduler.step(metric)

    @default_hook
    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None: ...
    @default_hook
    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None: ...
