"""StochasticWeightAveraging, WeightAveraging and EMAWeightAveraging against Lightning 2.6.

The same module (with a BatchNorm layer, whose statistics SWA recomputes in an extra epoch), seed and data
are fitted under both frameworks with the same callback; the final weights, the learning rate of every
epoch, the averaged model, the callback's state and what the checkpoints hold are compared. A fit resumed
from a mid-run checkpoint must end with the weights of the uninterrupted run, and bad arguments must be
refused with a message that names them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.errors import MisconfigurationException
from tests.callbacks.parity import quiet_lightning

# These resumes leave the checkpoint's ModelCheckpoint out on purpose (the weights and loop are what they compare):
# Lightning's advice to pass it again is given by both frameworks and is not what the tests are about.
pytestmark = pytest.mark.filterwarnings("ignore:Be aware that when using `ckpt_path`, callbacks used to create")

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}


def _data(n: int, seed: int) -> DataLoader[Any]:
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=generator)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True) + 0.5), batch_size=8)


def make_module(
    framework: Any, *, batch_norm: bool = True, scheduler: str | None = "step", two_optimizers: bool = False
) -> Any:
    """A small regression network (Linear, BatchNorm, ReLU, Linear) on ``framework``'s LightningModule."""

    class Net(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.automatic_optimization = not two_optimizers  # Lightning's trainer refuses two otherwise
            norm = torch.nn.BatchNorm1d(8) if batch_norm else torch.nn.Identity()
            self.net = torch.nn.Sequential(torch.nn.Linear(4, 8), norm, torch.nn.ReLU(), torch.nn.Linear(8, 1))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.net(x)  # type: ignore[no-any-return]

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            loss = torch.nn.functional.mse_loss(self(x), y)
            self.log("train_loss", loss, on_epoch=True)
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            x, y = batch
            self.log("val_loss", torch.nn.functional.mse_loss(self(x), y))

        def configure_optimizers(self) -> Any:
            optimizer = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)
            if two_optimizers:
                return [optimizer, torch.optim.SGD(self.parameters(), lr=0.1)]
            if scheduler == "step":
                return [optimizer], [torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)]
            if scheduler == "lambda":  # its load_state_dict would fail on SWALR's state
                return [optimizer], [torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.8**epoch)]
            if scheduler == "two":
                decay = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
                return [optimizer], [torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7), decay]
            return optimizer

    return Net()


def recorder(framework: Any) -> Any:
    """A callback noting the learning rate at each epoch's start and at the end, and the validation losses."""

    class Recorder(framework.Callback):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self.lrs: list[float] = []
            self.val_losses: list[float] = []
            self.max_epochs_seen: list[Any] = []

        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            self.lrs.append(trainer.optimizers[0].param_groups[0]["lr"])
            self.max_epochs_seen.append(trainer.max_epochs)

        def on_validation_epoch_end(self, trainer: Any, pl_module: Any) -> None:
            if not trainer.sanity_checking:
                self.val_losses.append(float(trainer.callback_metrics["val_loss"]))

        def on_train_end(self, trainer: Any, pl_module: Any) -> None:
            self.lrs.append(trainer.optimizers[0].param_groups[0]["lr"])

    return Recorder()


def fit(
    framework: Any,
    root: Path,
    callback: Any,
    *,
    module: dict[str, Any] | None = None,
    ckpt_path: Path | None = None,
    checkpoints: bool = False,
    validation: bool = False,
    **options: Any,
) -> tuple[Any, Any, Any]:
    """Fit the network under ``framework`` with ``callback`` (and a recorder); (trainer, module, recorder)."""
    record = recorder(framework)
    callbacks = [callback, record]
    if checkpoints:
        callbacks.append(
            framework.pytorch.callbacks.ModelCheckpoint(dirpath=root / "ckpts", filename="{epoch}", save_top_k=-1)
        )
    settings: dict[str, Any] = {
        "accelerator": "cpu",
        "devices": 1,
        "max_epochs": 5,
        "logger": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "enable_checkpointing": checkpoints,
        "num_sanity_val_steps": 0,
        "default_root_dir": root,
        **options,
    }
    trainer = framework.Trainer(callbacks=callbacks, **settings)
    model = make_module(framework, **(module or {}))
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    with quiet_lightning():  # only Lightning's own warnings
        trainer.fit(
            model,
            train_dataloaders=_data(40, 0),
            val_dataloaders=_data(16, 1) if validation else None,
            ckpt_path=ckpt_path,
        )
    return trainer, model, record


def fit_both(tmp_path: Path, make: Callable[[Any], Any], **kwargs: Any) -> dict[str, tuple[Any, Any, Any, Any]]:
    sides = {}
    for name, framework in FRAMEWORKS.items():
        callback = make(framework)
        sides[name] = (*fit(framework, tmp_path / name, callback, **kwargs), callback)
    return sides


def assert_same_tensors(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    assert list(ours) == list(theirs)
    for key in theirs:
        torch.testing.assert_close(ours[key], theirs[key], rtol=1e-6, atol=1e-7, msg=key)


def swa(framework: Any, **kwargs: Any) -> Any:
    options = {"swa_lrs": 0.05, "swa_epoch_start": 2, "annealing_epochs": 3, **kwargs}
    return framework.pytorch.callbacks.StochasticWeightAveraging(**options)


# ---- StochasticWeightAveraging -------------------------------------------------------------------------------
def test_swa_with_batch_norm_ends_as_lightning_does(tmp_path: Path) -> None:
    sides = fit_both(tmp_path, swa, checkpoints=True)
    (ours, our_model, our_record, our_swa), (theirs, their_model, their_record, their_swa) = (
        sides["accelplug"],
        sides["lightning"],
    )
    assert_same_tensors(our_model.state_dict(), their_model.state_dict())
    assert our_record.lrs == pytest.approx(their_record.lrs, rel=1e-9)
    # the BatchNorm epoch is added (max_epochs reads 6 while it applies) and then taken back
    assert our_record.max_epochs_seen == their_record.max_epochs_seen == [6] * 6
    assert (ours.global_step, ours.current_epoch, ours.max_epochs) == (
        theirs.global_step,
        theirs.current_epoch,
        theirs.max_epochs,
    )
    assert int(our_swa.n_averaged) == int(their_swa.n_averaged) == 4
    our_state, their_state = our_swa.state_dict(), their_swa.state_dict()
    assert sorted(our_state) == sorted(their_state)
    assert our_state["n_averaged"] == their_state["n_averaged"]
    assert our_state["latest_update_epoch"] == their_state["latest_update_epoch"]
    assert our_state["scheduler_state"] == their_state["scheduler_state"]
    assert_same_tensors(our_state["average_model_state"], their_state["average_model_state"])
    # every epoch's checkpoint carries the same callback state
    our_files = sorted(p.name for p in (tmp_path / "accelplug" / "ckpts").iterdir())
    assert our_files == sorted(p.name for p in (tmp_path / "lightning" / "ckpts").iterdir())
    for name in our_files:
        our_ckpt = torch.load(tmp_path / "accelplug" / "ckpts" / name, weights_only=True)
        their_ckpt = torch.load(tmp_path / "lightning" / "ckpts" / name, weights_only=False)
        assert_same_tensors(our_ckpt["state_dict"], their_ckpt["state_dict"])
        ours_saved, theirs_saved = (c["callbacks"][our_swa.state_key] for c in (our_ckpt, their_ckpt))
        assert ours_saved["n_averaged"] == theirs_saved["n_averaged"], name
        assert ours_saved["scheduler_state"] == theirs_saved["scheduler_state"], name
        assert_same_tensors(ours_saved["average_model_state"], theirs_saved["average_model_state"])
        assert our_ckpt["lr_schedulers"] == their_ckpt["lr_schedulers"], name


def test_swa_batch_norm_epoch_reads_on_fit_loop_skip_backward_as_lightning(tmp_path: Path) -> None:
    """``trainer.fit_loop._skip_backward`` is True in the BatchNorm epoch only (Lightning's SWA sets it there)."""

    def reading(framework: Any) -> Any:
        class Reading(framework.pytorch.callbacks.StochasticWeightAveraging):  # type: ignore[misc, name-defined]
            def on_train_epoch_start(self, trainer: Any, module: Any) -> None:
                super().on_train_epoch_start(trainer, module)
                self.seen.append((trainer.current_epoch, trainer.fit_loop._skip_backward))

            def on_train_end(self, trainer: Any, module: Any) -> None:
                super().on_train_end(trainer, module)
                self.seen.append((-1, trainer.fit_loop._skip_backward))

        made = Reading(swa_lrs=0.05, swa_epoch_start=2, annealing_epochs=3)
        made.seen = []
        return made

    sides = fit_both(tmp_path, reading)
    ours, theirs = (sides[name][3].seen for name in ("accelplug", "lightning"))
    assert ours == theirs
    assert (5, True) in ours and (-1, False) in ours


@pytest.mark.parametrize(
    "options",
    [
        {"accumulate_grad_batches": 2, "gradient_clip_val": 0.01},
        {"limit_train_batches": 3, "validation": True, "val_check_interval": 2},
        # validation after each epoch releases the gradients the BatchNorm epoch's single step would use
        {"validation": True},
        {"validation": True, "accumulate_grad_batches": 2, "val_check_interval": 3},
    ],
)
def test_swa_batch_norm_epoch_under_loop_options(tmp_path: Path, options: dict[str, Any]) -> None:
    sides = fit_both(tmp_path, swa, **options)
    (ours, our_model, our_record, _), (theirs, their_model, their_record, _) = sides["accelplug"], sides["lightning"]
    assert_same_tensors(our_model.state_dict(), their_model.state_dict())
    assert our_record.lrs == pytest.approx(their_record.lrs, rel=1e-9)
    assert our_record.val_losses == pytest.approx(their_record.val_losses, rel=1e-5)
    assert (ours.global_step, ours.current_epoch) == (theirs.global_step, theirs.current_epoch)


def test_swa_without_batch_norm_fractional_start_linear_annealing_and_validation(tmp_path: Path) -> None:
    def make(framework: Any) -> Any:
        return swa(framework, swa_epoch_start=0.5, annealing_strategy="linear", swa_lrs=[0.02])

    sides = fit_both(tmp_path, make, module={"batch_norm": False, "scheduler": None}, validation=True, max_epochs=4)
    (ours, our_model, our_record, our_swa), (theirs, their_model, their_record, their_swa) = (
        sides["accelplug"],
        sides["lightning"],
    )
    assert_same_tensors(our_model.state_dict(), their_model.state_dict())
    assert our_record.lrs == pytest.approx(their_record.lrs, rel=1e-9)
    assert our_record.val_losses == pytest.approx(their_record.val_losses, rel=1e-5)
    assert our_record.max_epochs_seen == [4] * 4  # no BatchNorm: no extra epoch
    assert (ours.global_step, ours.current_epoch) == (theirs.global_step, theirs.current_epoch)
    # without the BatchNorm epoch the model ends with exactly the averaged weights
    averaged = our_swa._average_model.state_dict()
    assert_same_tensors({k: v for k, v in our_model.state_dict().items()}, averaged)
    assert int(our_swa.n_averaged) == int(their_swa.n_averaged)


@pytest.mark.parametrize("scheduler", ["step", "lambda"])
def test_swa_resumed_mid_average_ends_with_the_uninterrupted_weights(tmp_path: Path, scheduler: str) -> None:
    module = {"scheduler": scheduler}
    _, whole, whole_record, _ = fit_both(tmp_path / "whole", swa, checkpoints=True, module=module)["accelplug"]
    for name, framework in FRAMEWORKS.items():
        # epoch=2.ckpt: saved after the third epoch, with SWALR already in charge and 2 models averaged
        mid = tmp_path / "whole" / name / "ckpts" / "epoch=2.ckpt"
        _, resumed, record = fit(framework, tmp_path / "resumed" / name, swa(framework), ckpt_path=mid, module=module)
        assert_same_tensors(resumed.state_dict(), whole.state_dict())
        assert record.lrs == pytest.approx(whole_record.lrs[3:], rel=1e-9), name


def test_swa_refuses_what_lightning_refuses(tmp_path: Path) -> None:
    for options, needle in [
        ({"module": {"two_optimizers": True}}, "SWA currently works with 1 `optimizer`"),
        ({"module": {"scheduler": "two"}}, "more than 1 `lr_scheduler`"),
        ({"max_epochs": -1, "max_steps": 10}, "`swa_epoch_start` as a float is not supported"),
    ]:
        for name, framework in FRAMEWORKS.items():
            callback = framework.pytorch.callbacks.StochasticWeightAveraging(swa_lrs=0.1)
            errors = accelplug.MisconfigurationException if name == "accelplug" else Exception
            with pytest.raises(errors, match=needle.replace("`", ".").replace("(", ".")):
                fit(framework, tmp_path / name, callback, **options)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"swa_lrs": 0}, "swa_lrs=0"),
        ({"swa_lrs": 1}, "write 1.0"),
        ({"swa_lrs": -0.1}, "swa_lrs=-0.1"),
        ({"swa_lrs": [0.1, "x"]}, "positive floats"),
        ({"swa_lrs": []}, "swa_lrs=[]"),
        ({"swa_lrs": 0.1, "swa_epoch_start": 0}, "swa_epoch_start=0"),
        ({"swa_lrs": 0.1, "swa_epoch_start": 1.5}, "swa_epoch_start=1.5"),
        ({"swa_lrs": 0.1, "swa_epoch_start": "2"}, "swa_epoch_start='2'"),
        ({"swa_lrs": 0.1, "annealing_epochs": -1}, "annealing_epochs=-1"),
        ({"swa_lrs": 0.1, "annealing_strategy": "cosine"}, "Did you mean 'cos'"),
        ({"swa_lrs": 0.1, "avg_fn": 3}, "avg_fn"),
        ({"swa_lrs": 0.1, "device": 3.5}, "3.5"),
        ({"swa_lrs": 0.1, "device": "gpu:0"}, "'gpu:0'"),
    ],
)
def test_swa_bad_arguments_are_named(kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(MisconfigurationException) as caught:
        accelplug.callbacks.StochasticWeightAveraging(**kwargs)
    assert needle in str(caught.value)


def test_swa_per_group_lrs_must_match_the_groups(tmp_path: Path) -> None:
    callback = accelplug.callbacks.StochasticWeightAveraging(swa_lrs=[0.1, 0.2])
    with pytest.raises(MisconfigurationException, match="1 parameter group"):
        fit(accelplug, tmp_path, callback)


# ---- WeightAveraging and EMAWeightAveraging -----------------------------------------------------------------
def ema(framework: Any) -> Any:
    return framework.pytorch.callbacks.EMAWeightAveraging(decay=0.8, update_starting_at_step=3, update_every_n_steps=2)


def test_ema_validates_and_checkpoints_the_average_as_lightning_does(tmp_path: Path) -> None:
    sides = fit_both(tmp_path, ema, checkpoints=True, validation=True, max_epochs=3)
    (_, our_model, our_record, our_ema), (_, their_model, their_record, their_ema) = (
        sides["accelplug"],
        sides["lightning"],
    )
    assert_same_tensors(our_model.state_dict(), their_model.state_dict())
    # validation ran on the averaged weights, on both sides
    assert our_record.val_losses == pytest.approx(their_record.val_losses, rel=1e-5)
    assert_same_tensors(our_ema._average_model.state_dict(), their_ema._average_model.state_dict())
    assert our_ema.state_dict() == their_ema.state_dict()
    for epoch in range(3):
        our_ckpt = torch.load(tmp_path / "accelplug" / "ckpts" / f"epoch={epoch}.ckpt", weights_only=True)
        their_ckpt = torch.load(tmp_path / "lightning" / "ckpts" / f"epoch={epoch}.ckpt", weights_only=False)
        for key in ("state_dict", "current_model_state", "averaging_state"):
            assert_same_tensors(our_ckpt[key], their_ckpt[key])
        assert our_ckpt["callbacks"][our_ema.state_key] == their_ckpt["callbacks"][their_ema.state_key]
    # the model ends with the averaged weights, as the last checkpoint's state_dict holds them
    assert_same_tensors(our_model.state_dict(), our_ckpt["state_dict"])


def test_ema_resumed_from_a_checkpoint_ends_with_the_uninterrupted_weights(tmp_path: Path) -> None:
    _, whole, _, _ = fit_both(tmp_path / "whole", ema, checkpoints=True, max_epochs=3)["accelplug"]
    mid = tmp_path / "whole" / "accelplug" / "ckpts" / "epoch=1.ckpt"
    _, resumed, _ = fit(accelplug, tmp_path / "resumed", ema(accelplug), ckpt_path=mid, max_epochs=3)
    assert_same_tensors(resumed.state_dict(), whole.state_dict())
    # a validate() from the checkpoint evaluates the averaged weights
    checkpoint = torch.load(mid, weights_only=True)
    assert not torch.equal(checkpoint["state_dict"]["net.0.weight"], checkpoint["current_model_state"]["net.0.weight"])


def test_weight_averaging_subclass_updating_per_epoch(tmp_path: Path) -> None:
    def make(framework: Any) -> Any:
        class EveryEpoch(framework.pytorch.callbacks.WeightAveraging):  # type: ignore[misc, name-defined]
            def should_update(self, step_idx: int | None = None, epoch_idx: int | None = None) -> bool:
                return epoch_idx is not None and epoch_idx >= 1

        return EveryEpoch(use_buffers=False)

    sides = fit_both(tmp_path, make, validation=True, max_epochs=4)
    (_, our_model, our_record, ours), (_, their_model, their_record, theirs) = sides["accelplug"], sides["lightning"]
    assert_same_tensors(our_model.state_dict(), their_model.state_dict())
    assert our_record.val_losses == pytest.approx(their_record.val_losses, rel=1e-5)
    assert int(ours._average_model.n_averaged) == int(theirs._average_model.n_averaged) == 3


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda: accelplug.callbacks.WeightAveraging(device=1.5), "device=1.5"),
        (lambda: accelplug.callbacks.WeightAveraging(device="gpu"), "'gpu'"),
        (lambda: accelplug.callbacks.WeightAveraging(use_buffers="yes"), "use_buffers='yes'"),
        (lambda: accelplug.callbacks.WeightAveraging(avg_fun=None), "avg_fun"),
        (lambda: accelplug.callbacks.WeightAveraging(avg_fn=2), "avg_fn=2"),
        (lambda: accelplug.callbacks.EMAWeightAveraging(decay=1.5), "decay=1.5"),
        (lambda: accelplug.callbacks.EMAWeightAveraging(update_every_n_steps=1.0), "update_every_n_steps=1.0"),
        (lambda: accelplug.callbacks.EMAWeightAveraging(update_starting_at_step=-2), "update_starting_at_step=-2"),
        (lambda: accelplug.callbacks.EMAWeightAveraging(avg_fn=lambda a, b, n: a), "decay"),
    ],
)
def test_weight_averaging_bad_arguments_are_named(make: Callable[[], Any], needle: str) -> None:
    with pytest.raises(MisconfigurationException) as caught:
        make()
    assert needle in str(caught.value)


def test_the_names_are_lightnings() -> None:
    for name in ("StochasticWeightAveraging", "WeightAveraging", "EMAWeightAveraging"):
        assert getattr(accelplug, name) is getattr(accelplug.callbacks, name)
        assert getattr(accelplug.pytorch.callbacks, name) is getattr(accelplug.callbacks, name)


@pytest.mark.parametrize(
    ("options", "released"),
    [({}, True), ({"accumulate_grad_batches": 2, "val_check_interval": 3}, False)],
)
def test_validation_inside_fit_releases_the_gradients_as_lightning_does(
    tmp_path: Path, options: dict[str, Any], released: bool
) -> None:
    """Between optimizer steps (not inside an accumulation window) validation starts with ``zero_grad()``."""
    for name, framework in FRAMEWORKS.items():
        _, model, _ = fit(framework, tmp_path / name, recorder(framework), validation=True, max_epochs=1, **options)
        assert [p.grad is None for p in model.parameters()] == [released] * 6, name
