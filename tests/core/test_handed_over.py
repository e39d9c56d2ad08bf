"""A LightningModule reaches its runner only through what the runner hands over (``LogSink``, ``OptimizerControl``).

The module never imports the Trainer: ``self.log`` and ``optimizers()``/``manual_backward`` go to objects
the runner attaches for the length of a block, so a custom loop can attach its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
import torch

from accelplug import LightningModule, Trainer


class _Sink:
    def __init__(self) -> None:
        self.logged: list[tuple[str, Any]] = []

    def log(self, name: str, value: Any, *args: Any, **kwargs: Any) -> None:
        self.logged.append((name, value))

    def log_dict(self, dictionary: Mapping[str, Any], *args: Any, **kwargs: Any) -> None:
        self.logged.extend(dictionary.items())


class _Control:
    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        self.managed = [optimizer]
        self.optimizers = [optimizer]
        self.schedulers: list[Any] = []
        self.backwards: list[torch.Tensor] = []

    def manual_backward(self, loss: torch.Tensor) -> None:
        self.backwards.append(loss)
        loss.backward()  # type: ignore[no-untyped-call]

    def clip_gradients(self, optimizer: Any, value: float | None, algorithm: str | None) -> None:
        raise AssertionError("not asked")


class _Module(LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 1)


def test_a_handed_over_optimizer_control_serves_optimizers_and_manual_backward() -> None:
    module = _Module()
    optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
    control = _Control(optimizer)
    with module._optimizing_with(control):
        assert module.optimizers() is optimizer
        assert module.lr_schedulers() is None
        loss = module.linear(torch.ones(1, 2)).sum()
        module.manual_backward(loss)
    assert control.backwards == [loss] and module.linear.weight.grad is not None
    with pytest.raises(RuntimeError, match="is not attached to a `Trainer`"):  # Lightning's words, unattached
        module.optimizers()


def test_a_handed_over_log_sink_receives_self_log_only_while_attached() -> None:
    module, sink = _Module(), _Sink()
    with module._logging_to(sink):
        module.log("a", 1.0)
        module.log_dict({"b": 2.0})
    assert sink.logged == [("a", 1.0), ("b", 2.0)]
    with pytest.warns(UserWarning, match="outside trainer.fit"):
        module.log("c", 3.0)
    assert len(sink.logged) == 2


def test_the_trainer_says_which_method_runs_throughout_a_fit_and_its_validation() -> None:
    seen: list[tuple[str | None, str | None]] = []

    class Recording(_Module):
        def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
            seen.append((self.trainer.state.fn, self.trainer.state.stage))
            return self.linear(batch).sum()

        def validation_step(self, batch: torch.Tensor, batch_idx: int) -> None:
            seen.append((self.trainer.state.fn, self.trainer.state.stage))

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = Trainer(
        accelerator="cpu",
        max_steps=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    module, batches = Recording(), [torch.ones(1, 2)]
    trainer.fit(module, batches, batches)
    assert seen == [("fit", "train"), ("fit", "validate")]
    assert (trainer.state.fn, trainer.state.stage) == ("fit", None)  # Lightning's: fn names the last method called
    seen.clear()
    trainer.validate(module, batches, verbose=False)
    assert seen == [("validate", "validate")]
