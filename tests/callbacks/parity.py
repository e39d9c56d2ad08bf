"""Running the same callback code under Lightning 2.6 and accelplug, for the callbacks' parity tests.

``fit_both(tmp_path, callbacks=..., module=..., **trainer_options)`` builds the same regression module on each
framework's ``LightningModule``, fits it with the callbacks that ``callbacks(framework)`` returns, each framework in
its own folder (``tmp_path/lightning``, ``tmp_path/accelplug``), and hands back both sides: the trainer, the
module, the callbacks and the files written, relative to that folder, so a test compares them directly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}


def data(n: int = 48, seed: int = 0, batch_size: int = 8) -> DataLoader[Any]:
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=generator)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1
    return DataLoader(TensorDataset(x, y), batch_size=batch_size)


def make_module(framework: Any, *, validation: bool = True, fail_at_step: int | None = None, **extra: Any) -> Any:
    """A linear regression logging ``train_loss`` (step and epoch) and ``val_loss`` (epoch) on ``framework``."""
    base = framework.LightningModule

    class Regression(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(4, 1)
            self.lr = extra.get("lr", 0.05)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.layer(x)  # type: ignore[no-any-return]

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            if fail_at_step is not None and self.trainer.global_step == fail_at_step:
                raise RuntimeError(f"failing at step {fail_at_step}")
            x, y = batch
            loss = torch.nn.functional.mse_loss(self(x), y)
            self.log("train_loss", loss, on_step=True, on_epoch=True, prog_bar=extra.get("prog_bar", False))
            return loss

        def configure_optimizers(self) -> Any:
            optimizer = torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.9, weight_decay=1e-4)
            if extra.get("scheduler"):
                scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
                return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
            return optimizer

    if validation:

        def validation_step(self: Any, batch: Any, batch_idx: int) -> None:
            x, y = batch
            self.log("val_loss", torch.nn.functional.mse_loss(self(x), y), prog_bar=extra.get("prog_bar", False))

        def val_dataloader(self: Any) -> DataLoader[Any]:
            return data(16, seed=1)

        Regression.validation_step = validation_step
        Regression.val_dataloader = val_dataloader

    def train_dataloader(self: Any) -> DataLoader[Any]:
        return data()

    Regression.train_dataloader = train_dataloader
    return Regression()


@dataclass
class Side:
    """One framework's run: what the test compares."""

    trainer: Any
    module: Any
    callbacks: list[Any]
    root: Path
    error: BaseException | None = None

    def files(self, under: str = "") -> set[str]:
        """The files written (links included), relative to the run's folder, ``under`` a sub-folder if given."""
        base = self.root / under
        found = set()
        for folder, _, names in os.walk(base):
            for name in names:
                found.add(str((Path(folder) / name).relative_to(base)))
        return found

    def rel(self, path: Any) -> str:
        """A path the callback reports, relative to the run's folder ("" stays "")."""
        return str(Path(path).relative_to(self.root)) if path else ""


#: Lightning 2.6's own warnings in these runs, which accelplug does not give: each is ignored by its message, and
#: only when a Lightning module gives it, so that every warning accelplug gives in a parity test is still seen.
#: (Lightning's torch-deprecation warning from its pytree helper, given in every parity test, is in pyproject.toml.)
LIGHTNING_ONLY_WARNINGS = (
    # a training_step that returns None skips the step in both; only Lightning says so
    r"`training_step` returned `None`\. If this was on purpose, ignore this warning",
    # Lightning's seed_everything() without a seed (LightningCLI's seed_everything=True) warns; accelplug's does not
    r"No seed found, seed set to 0",
    # Lightning 2.6's LightningCLI calls jsonargparse APIs that jsonargparse 4.49 deprecates (shown once a process)
    r"(?s).*(JsonargparseDeprecationWarning per type|deprecated in v4\.\d+\.\d+ and will be removed in v5)",
    # resuming without the callbacks whose state the checkpoint holds: Lightning lists them, accelplug says nothing
    r"Be aware that when using `ckpt_path`, callbacks used to create the checkpoint need to be provided",
    # a resume from the middle of an epoch: accelplug resumes there exactly (docs/migrating-from-lightning.md)
    r"You're resuming from a checkpoint that ended before the epoch ended and your dataloader is not resumable",
    # an empty training loader: Lightning warns for the user's loader (as accelplug does) and again for its own
    # CombinedLoader around it
    r"Total length of `CombinedLoader` across ranks is zero",
)


@contextlib.contextmanager
def quiet_lightning(framework: Any = lightning) -> Iterator[None]:
    """Lightning's logs and its own warnings (``LIGHTNING_ONLY_WARNINGS``) hidden while ``framework`` runs;
    accelplug's never are. Without ``framework``, for a block (or an autouse fixture) that runs both: the filters
    name Lightning's modules, so they cannot hide accelplug's warnings."""
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    logging.getLogger("lightning.fabric").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        if framework is lightning:
            for message in LIGHTNING_ONLY_WARNINGS:
                warnings.filterwarnings("ignore", message=message, module=r"lightning\.")
        yield


def fit_both(
    tmp_path: Path,
    callbacks: Callable[[Any], list[Any]],
    module: dict[str, Any] | None = None,
    expect_error: type[BaseException] | None = None,
    **options: Any,
) -> dict[str, Side]:
    """Fit the same module with the same callbacks under both frameworks; ``{"lightning": ..., "accelplug": ...}``."""
    sides = {}
    for name, framework in FRAMEWORKS.items():
        root = tmp_path / name
        root.mkdir(parents=True)
        made = callbacks(framework)
        settings = {
            "accelerator": "cpu",
            "devices": 1,
            "max_epochs": 2,
            "logger": False,
            "enable_progress_bar": False,
            "enable_model_summary": False,
            "num_sanity_val_steps": 0,
            "default_root_dir": root,
            **options,
        }
        if callable(settings.get("logger")):
            settings["logger"] = settings["logger"](framework, root)
        trainer = framework.Trainer(callbacks=made, **settings)
        model = make_module(framework, **(module or {}))
        error = None
        with quiet_lightning(framework):
            if expect_error is None:
                trainer.fit(model)
            else:
                with pytest.raises(expect_error) as caught:
                    trainer.fit(model)
                error = caught.value
        sides[name] = Side(trainer, model, made, root, error)
    return sides
