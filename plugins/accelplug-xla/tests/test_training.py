"""A LightningModule trained for real on the XLA device of this machine's CPU (PJRT_DEVICE=CPU).

Each test runs where torch_xla runs (its own environment: ``nox -s xla``) and skips with the reason
elsewhere. The figures they hold XLA to come from the same module trained by accelplug on the CPU:
the same samples in the same order, the same weights up to float rounding.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, Dataset
from xla_models import ManualRegressor, Regressor, regression_data, trainer, weights

import accelplug as L
from accelplug import MisconfigurationException
from accelplug.errors import AcceleratorUnavailableError

pytestmark = pytest.mark.usefixtures("xla")

XLA0 = torch.device("xla", 0)


def _val_loss(t: L.Trainer, model: Regressor) -> float:
    return t.validate(model, regression_data(n=128, shuffle=False, seed=1), verbose=False)[0]["val_loss"]


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)


def _counter(name: str) -> int:
    import torch_xla.debug.metrics as met

    return int(met.counter_value(name) or 0)


# ---- the four stages -----------------------------------------------------------------------------------
def test_fit_validate_test_and_predict_run_on_the_xla_device() -> None:
    L.seed_everything(0)
    model = Regressor()
    t = trainer(max_epochs=4)
    assert (t.accelerator.name, t.strategy.name, t.root_device) == ("xla", "single_xla", XLA0)
    before = _val_loss(t, model)
    t.fit(model, regression_data(), regression_data(n=128, shuffle=False, seed=1))
    after = _val_loss(t, model)
    assert after < before / 5, f"validation loss {before:.4f} -> {after:.4f} after 4 epochs"
    assert t.global_step == 32
    assert {p.device for p in model.parameters()} == {XLA0}
    assert set(model.batch_devices) == {"xla"}, "batches reach training_step already on the device"
    tested = t.test(model, regression_data(n=128, shuffle=False, seed=1), verbose=False)[0]["test_loss"]
    assert tested == pytest.approx(after, rel=1e-5)
    predictions = t.predict(model, regression_data(n=96, shuffle=False))
    assert isinstance(predictions, list) and len(predictions) == 3
    assert all(p.device == XLA0 and p.shape == (32, 1) for p in predictions)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"gradient_clip_val": 0.5, "accumulate_grad_batches": 3},
        {"val_check_interval": 3, "num_sanity_val_steps": 2},
    ],
    ids=["plain", "clipping-and-accumulation", "validation-within-epochs"],
)
def test_training_on_xla_matches_the_cpu_sample_for_sample(options: dict[str, Any]) -> None:
    def trained(accelerator: str) -> Regressor:
        L.seed_everything(0)
        model = Regressor()
        validation = regression_data(n=64, shuffle=False, seed=1)
        trainer(accelerator=accelerator, max_epochs=2, **options).fit(model, regression_data(), validation)
        return model

    on_xla, on_cpu = trained("xla"), trained("cpu")
    assert on_xla.seen == on_cpu.seen, "the shuffled order is drawn on the training thread, as without XLA"
    torch.testing.assert_close(weights(on_xla), weights(on_cpu), rtol=1e-4, atol=1e-5)


def test_each_training_step_is_one_graph_compiled_once_and_then_reused() -> None:
    compiles: list[int] = []
    executions: list[int] = []
    marks: list[int] = []

    class Count(L.Callback):
        def on_train_epoch_end(self, trainer: Any, module: Any) -> None:
            compiles.append(_counter("UncachedCompile"))
            executions.append(_counter("ExecuteComputation"))
            marks.append(_counter("MarkStep"))

    L.seed_everything(0)
    trainer(max_epochs=3, callbacks=[Count()]).fit(Regressor(lr=0.02), regression_data(n=128))
    assert compiles[2] == compiles[1], f"epoch 3 compiled new graphs ({compiles}): the step graph kept changing"
    assert executions[2] - executions[1] >= 4, f"4 steps ran as executions of compiled graphs ({executions})"
    assert marks[2] - marks[1] >= 4, f"each of the 4 steps was marked ({marks})"


def test_manual_optimization_steps_through_the_strategy_on_xla() -> None:
    L.seed_everything(0)
    model = ManualRegressor()
    t = trainer(max_epochs=3)
    before = _val_loss(t, model)
    t.fit(model, regression_data())
    assert t.global_step == 24
    assert _val_loss(t, model) < before / 3


@pytest.mark.parametrize(
    ("precision", "dtype"), [("bf16-mixed", torch.bfloat16), ("bf16-true", torch.bfloat16), ("64-true", torch.float64)]
)
def test_a_claimed_precision_trains_in_its_dtype(precision: str, dtype: torch.dtype) -> None:
    L.seed_everything(0)
    model = Regressor()
    t = trainer(max_epochs=3, precision=precision)
    before = _val_loss(t, model)
    t.fit(model, regression_data())
    assert set(model.output_dtypes) == {dtype}
    assert _val_loss(t, model) < before / 3


# ---- checkpoints -------------------------------------------------------------------------------------------
def test_a_checkpoint_written_on_xla_holds_only_cpu_tensors_and_the_device_generator(tmp_path: Path) -> None:
    t = trainer(max_epochs=1)
    t.fit(Regressor(dropout=0.2), regression_data(n=64))
    path = t.save_checkpoint(tmp_path / "xla.ckpt")
    raw = torch.load(path, weights_only=True)  # no map_location: a storage tagged xla:0 would fail here
    tensors = list(_tensors(raw))
    assert tensors and {x.device.type for x in tensors} == {"cpu"}
    assert raw["rng"]["device"]["accelerator"] == "xla"
    assert isinstance(raw["rng"]["device"]["state"], int)


def _seeded(dropout: float) -> Regressor:
    L.seed_everything(0)
    return Regressor(dropout=dropout)


def test_a_fit_resumed_on_xla_after_an_epoch_ends_where_an_uninterrupted_one_does(tmp_path: Path) -> None:
    straight = _seeded(0.3)
    trainer(max_epochs=2).fit(straight, regression_data())
    first = _seeded(0.3)
    t = trainer(max_epochs=1)
    t.fit(first, regression_data())
    path = t.save_checkpoint(tmp_path / "epoch1.ckpt")
    resumed = Regressor(dropout=0.3)
    trainer(max_epochs=2).fit(resumed, regression_data(), ckpt_path=path)
    assert resumed.seen == straight.seen[len(first.seen) :]
    assert torch.equal(weights(resumed), weights(straight)), "dropout masks came from the restored device generator"


def test_a_fit_resumed_on_xla_mid_epoch_ends_where_an_uninterrupted_one_does(tmp_path: Path) -> None:
    straight = _seeded(0.3)
    trainer(max_epochs=2).fit(straight, regression_data())
    first = _seeded(0.3)
    t = trainer(max_steps=3)
    t.fit(first, regression_data())
    path = t.save_checkpoint(tmp_path / "step3.ckpt")
    resumed = Regressor(dropout=0.3)
    trainer(max_epochs=2).fit(resumed, regression_data(), ckpt_path=path)
    assert resumed.seen == straight.seen[3 * 32 :], "the resume skipped exactly the 3 batches already trained on"
    assert torch.equal(weights(resumed), weights(straight))


def test_an_xla_checkpoint_resumes_on_the_cpu(tmp_path: Path) -> None:
    straight = _seeded(0.0)
    trainer(max_epochs=2).fit(straight, regression_data())
    first = _seeded(0.0)
    t = trainer(max_epochs=1)
    t.fit(first, regression_data())
    path = t.save_checkpoint(tmp_path / "xla.ckpt")
    resumed = Regressor()
    on_cpu = trainer(accelerator="cpu", max_epochs=2)
    on_cpu.fit(resumed, regression_data(), ckpt_path=path)
    assert on_cpu.global_step == 16
    assert {p.device.type for p in resumed.parameters()} == {"cpu"}
    assert resumed.seen == straight.seen[len(first.seen) :]
    torch.testing.assert_close(weights(resumed), weights(straight), rtol=1e-4, atol=1e-5)


def test_a_cpu_checkpoint_resumes_on_xla(tmp_path: Path) -> None:
    straight = _seeded(0.0)
    trainer(accelerator="cpu", max_epochs=2).fit(straight, regression_data())
    first = _seeded(0.0)
    t = trainer(accelerator="cpu", max_epochs=1)
    t.fit(first, regression_data())
    path = t.save_checkpoint(tmp_path / "cpu.ckpt")
    resumed = Regressor()
    on_xla = trainer(max_epochs=2)
    on_xla.fit(resumed, regression_data(), ckpt_path=path)
    assert on_xla.global_step == 16
    assert resumed.seen == straight.seen[len(first.seen) :]
    torch.testing.assert_close(weights(resumed), weights(straight), rtol=1e-4, atol=1e-5)


def test_validate_and_test_load_an_xla_checkpoint_onto_the_device(tmp_path: Path) -> None:
    L.seed_everything(0)
    model = Regressor()
    t = trainer(max_epochs=2)
    t.fit(model, regression_data())
    path = t.save_checkpoint(tmp_path / "fit.ckpt")
    expected = _val_loss(t, model)
    fresh = Regressor()
    checked = trainer().validate(fresh, regression_data(n=128, shuffle=False, seed=1), ckpt_path=path, verbose=False)
    assert checked[0]["val_loss"] == pytest.approx(expected, rel=1e-6)
    assert {p.device for p in fresh.parameters()} == {XLA0}


def test_ckpt_path_last_resumes_from_the_newest_checkpoint_of_an_xla_run(tmp_path: Path) -> None:
    options = {"enable_checkpointing": True, "default_root_dir": tmp_path}
    trainer(max_epochs=1, **options).fit(Regressor(), regression_data(n=64))
    resumed = trainer(max_epochs=2, **options)
    resumed.fit(Regressor(), regression_data(n=64), ckpt_path="last")
    assert resumed.global_step == 4


# ---- the device's generator ------------------------------------------------------------------------------
def test_torch_seed_decides_the_xla_random_numbers() -> None:
    from accelplug_xla import XLAAccelerator

    def draw(seed: int) -> torch.Tensor:
        torch.manual_seed(seed)
        XLAAccelerator().setup_device(XLA0)
        return torch.rand(6, device=XLA0).cpu()

    assert torch.equal(draw(3), draw(3))
    assert not torch.equal(draw(3), draw(4))


# ---- what is refused, and what does not go wrong quietly ------------------------------------------------
def test_compile_is_refused_with_the_reason_before_training() -> None:
    with pytest.raises(MisconfigurationException, match=r"compile=.*XLA traces each step"):
        trainer(compile=True, max_epochs=1).fit(Regressor(), regression_data(n=64))


def test_16_mixed_is_refused_naming_what_xla_trains_in() -> None:
    with pytest.raises(MisconfigurationException, match=r"'16-mixed' cannot run on 'xla'.*'bf16-mixed'"):
        trainer(precision="16-mixed")


def test_single_device_is_refused_on_xla() -> None:
    with pytest.raises(MisconfigurationException, match="single_xla"):
        trainer(strategy="single_device")


def test_single_xla_is_refused_on_the_cpu_with_the_reason() -> None:
    with pytest.raises(MisconfigurationException, match="runs on XLA devices"):
        trainer(accelerator="cpu", strategy="single_xla")


def test_a_second_device_is_refused_and_auto_means_one() -> None:
    assert trainer(devices="auto").num_devices == 1
    with pytest.raises(MisconfigurationException, match="devices=2"):
        trainer(devices=2)


def test_tpu_is_unavailable_here_with_the_reason() -> None:
    with pytest.raises(AcceleratorUnavailableError, match=r"PJRT_DEVICE='CPU' runs XLA on the host CPU"):
        trainer(accelerator="tpu")


class _BrokenAt(Dataset[tuple[torch.Tensor, ...]]):
    """A dataset whose sample ``bad`` cannot be read."""

    def __init__(self, n: int, bad: int) -> None:
        self.data = regression_data(n=n).dataset
        self.bad = bad

    def __len__(self) -> int:
        return self.bad + 16

    def __getitem__(self, index: int) -> tuple[torch.Tensor, ...]:
        if index == self.bad:
            raise OSError(f"sample {index} is unreadable")
        item: tuple[torch.Tensor, ...] = self.data[index]
        return item


@pytest.mark.parametrize("accelerator", ["xla", "cpu"])
def test_a_loader_error_in_the_upload_thread_reaches_the_training_loop(accelerator: str) -> None:
    loader = DataLoader(_BrokenAt(64, bad=40), batch_size=8)
    model = Regressor()
    with pytest.raises(OSError, match="sample 40 is unreadable"):
        trainer(accelerator=accelerator, max_epochs=1).fit(model, loader)
    # Batches are fetched one ahead of their step (Lightning's order), so the bad sixth batch surfaces
    # before the fifth step, on XLA as on the CPU.
    assert len(model.seen) == 32


def test_an_epoch_left_early_leaves_no_upload_threads_behind() -> None:
    trainer(max_epochs=2, limit_train_batches=2).fit(Regressor(), regression_data(n=1024))
    alive = [t.name for t in threading.enumerate() if "_loader_worker" in t.name or "(_worker)" in t.name]
    assert alive == []


def test_checkpoint_tensors_are_copied_to_the_cpu_keeping_the_state_dicts_metadata() -> None:
    from collections import OrderedDict

    from accelplug_xla import XLAAccelerator
    from accelplug_xla.strategy import to_cpu

    XLAAccelerator().setup_device(XLA0)  # loads torch_xla, as a run does
    module = torch.nn.BatchNorm1d(3).to(XLA0)
    state = module.state_dict()
    moved = to_cpu({"state_dict": state, "nested": [(state["weight"],)], "step": 3})
    assert isinstance(moved["state_dict"], OrderedDict)
    assert list(moved["state_dict"]) == list(state)
    assert getattr(moved["state_dict"], "_metadata", None) == getattr(state, "_metadata", "missing")
    assert {t.device.type for t in moved["state_dict"].values()} == {"cpu"}
    assert moved["nested"][0][0].device.type == "cpu" and moved["step"] == 3
    assert state["weight"].device == XLA0, "the run's own state stays on the device"
