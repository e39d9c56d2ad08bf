"""What fit, validate and predict do on a single CPU device."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import Trainer
from accelplug.callbacks.base import Callback
from tests.modules import TRUE_BIAS, TRUE_WEIGHT, LinearRegression, quiet, regression_data

#: These fits use a few batches on purpose, under the default ``log_every_n_steps=50``: Lightning's hint about it (which
#: accelplug gives too, in both frameworks) is expected here and says nothing about what these tests check.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval"
)


def _loss(model: torch.nn.Module, loader: Any) -> float:
    with torch.no_grad():
        return sum(float(model.training_step(batch, 0)) for batch in loader) / len(loader)


def test_fit_drives_the_loss_down_and_reaches_the_least_squares_solution(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model, data = LinearRegression(), regression_data()
    before = _loss(model, data)
    Trainer(**quiet(max_epochs=15, default_root_dir=tmp_path, enable_checkpointing=False)).fit(model, data)
    assert _loss(model, data) < before * 1e-6
    torch.testing.assert_close(model.linear.weight.detach(), TRUE_WEIGHT, atol=1e-4, rtol=0)
    torch.testing.assert_close(model.linear.bias.detach(), torch.tensor([TRUE_BIAS]), atol=1e-4, rtol=0)


def test_bf16_mixed_trains_on_cpu_under_autocast(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model, data = LinearRegression(), regression_data()
    before = _loss(model, data)
    trainer = Trainer(**quiet(precision="bf16-mixed", max_epochs=5, default_root_dir=tmp_path))
    model.seen_dtypes.clear()
    trainer.fit(model, data)
    assert set(model.seen_dtypes) == {torch.bfloat16}
    assert model.linear.weight.dtype == torch.float32
    assert _loss(model, data) < before / 10


def test_64_true_trains_parameters_and_inputs_in_float64(tmp_path: Path) -> None:
    model = LinearRegression()
    Trainer(**quiet(precision="64-true", max_steps=3, default_root_dir=tmp_path)).fit(model, regression_data())
    assert model.linear.weight.dtype == torch.float64
    assert set(model.seen_dtypes) == {torch.float64}


def test_max_steps_counts_optimizer_steps_with_accumulation(tmp_path: Path) -> None:
    trainer = Trainer(**quiet(max_steps=5, accumulate_grad_batches=3, default_root_dir=tmp_path))
    model = LinearRegression()
    trainer.fit(model, regression_data(n=288))  # 9 batches: 3 optimizer steps per epoch
    assert trainer.global_step == 5
    assert len(model.seen_dtypes) == 15


def test_accumulating_two_half_batches_equals_one_full_batch(tmp_path: Path) -> None:
    torch.manual_seed(1)
    accumulated, whole = LinearRegression(), LinearRegression()
    whole.load_state_dict(accumulated.state_dict())
    options = quiet(max_steps=4, logger=False, enable_checkpointing=False)
    Trainer(**options, accumulate_grad_batches=2).fit(accumulated, regression_data(batch_size=16, shuffle=False))
    Trainer(**options).fit(whole, regression_data(batch_size=32, shuffle=False))
    for a, b in zip(accumulated.parameters(), whole.parameters(), strict=True):
        torch.testing.assert_close(a, b)


def test_gradient_clip_val_bounds_the_update(tmp_path: Path) -> None:
    model = LinearRegression(lr=1.0)
    start = [p.detach().clone() for p in model.parameters()]
    data = regression_data(batch_size=256)
    Trainer(**quiet(max_steps=1, gradient_clip_val=0.01, logger=False, enable_checkpointing=False)).fit(model, data)
    moved = torch.cat([(p.detach() - s).flatten() for p, s in zip(model.parameters(), start, strict=True)])
    assert moved.norm() <= 0.01 + 1e-6


def test_val_check_interval_validates_within_the_epoch(tmp_path: Path) -> None:
    ends: list[int] = []

    class Recorder(Callback):
        def on_validation_end(self, trainer: Trainer, model: torch.nn.Module) -> None:
            ends.append(trainer.global_step)

    data = regression_data()
    # num_sanity_val_steps=0: Lightning's sanity check (on by default) also ends with on_validation_end.
    trainer = Trainer(
        **quiet(
            max_epochs=1,
            val_check_interval=0.5,
            callbacks=[Recorder()],
            default_root_dir=tmp_path,
            num_sanity_val_steps=0,
        )
    )
    trainer.fit(LinearRegression(), data, regression_data(shuffle=False))
    assert ends == [4, 8]


def test_epoch_scheduler_from_configure_optimizers_dict_steps_each_epoch(tmp_path: Path) -> None:
    class WithScheduler(LinearRegression):
        def configure_optimizers(self) -> Any:
            optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
            return {"optimizer": optimizer, "lr_scheduler": torch.optim.lr_scheduler.StepLR(optimizer, 1, 0.5)}

    model = WithScheduler()
    trainer = Trainer(**quiet(max_epochs=3, default_root_dir=tmp_path))
    trainer.fit(model, regression_data())
    assert trainer.optimizers[0].param_groups[0]["lr"] == pytest.approx(0.1 * 0.5**3)


def test_validate_returns_the_average_over_batches(tmp_path: Path) -> None:
    model = LinearRegression()
    data = regression_data(shuffle=False)
    (metrics,) = Trainer(**quiet(default_root_dir=tmp_path)).validate(model, data, verbose=False)
    with torch.no_grad():
        expected = sum(float(model.validation_step(b, 0)["loss"]) for b in data) / len(data)
    assert metrics["val_loss"] == pytest.approx(expected, rel=1e-5)


def test_predict_returns_each_batch_output_in_order(tmp_path: Path) -> None:
    model = LinearRegression()
    data = regression_data(n=70, shuffle=False)
    outputs = Trainer(**quiet(default_root_dir=tmp_path)).predict(model, data)
    assert [o.shape[0] for o in outputs] == [32, 32, 6]
    with torch.no_grad():
        torch.testing.assert_close(torch.cat(outputs), model.linear(data.dataset.tensors[0]))  # type: ignore[attr-defined]


def test_predict_warns_once_when_a_step_returns_none_and_keeps_it_as_its_prediction(tmp_path: Path) -> None:
    class OddOnes(LinearRegression):
        def predict_step(self, batch: Any, batch_idx: int) -> Any:
            return None if batch_idx % 2 else self.linear(batch[0])

    with pytest.warns(UserWarning, match="predict returned None") as caught:
        outputs = Trainer(**quiet(default_root_dir=tmp_path)).predict(OddOnes(), regression_data(n=128, shuffle=False))
    assert [o is None for o in outputs] == [False, True, False, True]
    assert len([w for w in caught if "predict returned None" in str(w.message)]) == 1


def test_training_step_returning_neither_tensor_nor_loss_dict_is_explained(tmp_path: Path) -> None:
    from accelplug import MisconfigurationException

    class Bad(LinearRegression):
        def training_step(self, batch: Any, batch_idx: int) -> Any:
            return {"not_loss": 1.0}

    with pytest.raises(MisconfigurationException, match="the 'loss' key needs to be present"):
        Trainer(**quiet(max_steps=1, default_root_dir=tmp_path)).fit(Bad(), regression_data())


def test_a_training_step_returning_a_number_is_refused_with_lightnings_phrase(tmp_path: Path) -> None:
    from accelplug import MisconfigurationException

    class Number(LinearRegression):
        def training_step(self, batch: Any, batch_idx: int) -> Any:
            return 5.0

    with pytest.raises(MisconfigurationException, match="must return a Tensor, a dict, or None"):
        Trainer(**quiet(max_steps=1, default_root_dir=tmp_path)).fit(Number(), regression_data())


def test_a_training_step_may_return_any_mapping_holding_the_loss(tmp_path: Path) -> None:
    class Output(Mapping[str, Any]):
        def __init__(self, **values: Any) -> None:
            self.values = values

        def __getitem__(self, key: str) -> Any:
            return self.values[key]

        def __iter__(self) -> Iterator[str]:
            return iter(self.values)

        def __len__(self) -> int:
            return len(self.values)

    class MappingOutput(LinearRegression):
        def training_step(self, batch: Any, batch_idx: int) -> Any:
            return Output(loss=super().training_step(batch, batch_idx))

    model = MappingOutput()
    before = model.linear.weight.detach().clone()
    Trainer(**quiet(max_steps=2, default_root_dir=tmp_path)).fit(model, regression_data())
    assert not torch.equal(model.linear.weight, before)


def test_a_manual_training_step_returning_a_number_is_refused_with_lightnings_phrase(tmp_path: Path) -> None:
    from accelplug import MisconfigurationException

    class Manual(LinearRegression):
        automatic_optimization = False

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            return 5

    with pytest.raises(MisconfigurationException, match="must return a Tensor or have no return"):
        Trainer(**quiet(max_steps=1, default_root_dir=tmp_path)).fit(Manual(), regression_data())
