"""``bf16-true`` and ``16-true`` on the CPU: half-width parameters and inputs, training that converges, a
resume that keeps the dtype; and precision errors that suggest what a dtype word means, not what it resembles."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from accelplug import MisconfigurationException, Trainer
from tests.modules import LinearRegression, quiet, regression_data

# These fits use loaders of a few batches: the advice that an epoch is shorter than the logging interval
# (Lightning's, given by both frameworks) is not what the tests are about.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval"
)

HALF = {"bf16-true": torch.bfloat16, "16-true": torch.float16}


def _loss(model: LinearRegression) -> float:
    x, y = next(iter(regression_data(n=256, batch_size=256, shuffle=False)))
    with torch.no_grad():
        return float(torch.nn.functional.mse_loss(model.linear(x.to(model.linear.weight.dtype)).float(), y))


@pytest.mark.parametrize("precision", sorted(HALF))
def test_true_half_precisions_train_parameters_and_inputs_in_their_dtype(precision: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = LinearRegression(lr=0.05)
    trainer = Trainer(**quiet(precision=precision, max_epochs=4, default_root_dir=tmp_path))
    before = _loss(model.to(HALF[precision]))
    trainer.fit(model, regression_data())
    assert model.linear.weight.dtype == HALF[precision]
    assert set(model.seen_dtypes) == {HALF[precision]}, "inputs are cast to the parameter dtype"
    assert _loss(model) < before / 20


# a mid-epoch resume of a plain loader, on purpose
@pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended")
@pytest.mark.parametrize("precision", sorted(HALF))
def test_a_true_half_checkpoint_resumes_in_the_same_dtype(precision: str, tmp_path: Path) -> None:
    first = Trainer(**quiet(precision=precision, max_steps=4, default_root_dir=tmp_path))
    first.fit(LinearRegression(), regression_data())
    path = tmp_path / "half.ckpt"
    first.save_checkpoint(path)

    model = LinearRegression()
    second = Trainer(**quiet(precision=precision, max_steps=8, default_root_dir=tmp_path))
    # a new Trainer logs to version_1: the checkpoint's top-k bookkeeping names version_0's files (Lightning warns too)
    with pytest.warns(UserWarning, match=r"The dirpath has changed from .*version_0.* to .*version_1"):
        second.fit(model, regression_data(), ckpt_path=path)
    assert second.global_step == 8 and model.linear.weight.dtype == HALF[precision]


@pytest.mark.parametrize(
    ("value", "meant"),
    [
        ("fp16", "16-mixed"),  # spelling distance alone says 'bf16', another dtype
        ("half", "16-mixed"),
        ("float16", "16-mixed"),
        ("bfloat16", "bf16-mixed"),
        ("fp32", "32-true"),
        ("double", "64-true"),
        ("bf61", "bf16"),  # a typo still gets its nearest spelling
        (torch.float16, "16-mixed"),
        (torch.bfloat16, "bf16-mixed"),
    ],
)
def test_a_dtype_word_is_answered_with_the_precision_it_means(value: object, meant: str) -> None:
    with pytest.raises(MisconfigurationException, match=r"16-true") as caught:
        Trainer(**quiet(precision=value))
    assert f"{meant!r}?" in str(caught.value) and str(value) in str(caught.value)


def test_an_unrelated_precision_gets_no_suggestion() -> None:
    with pytest.raises(MisconfigurationException) as caught:
        Trainer(**quiet(precision="precise"))
    assert "did you mean" not in str(caught.value).lower()


@pytest.mark.parametrize("precision", [*sorted(HALF), "64-true"])
def test_tensors_a_training_step_creates_are_in_the_true_precisions_dtype(precision: str, tmp_path: Path) -> None:
    """As Lightning's ``HalfPrecision``/``DoublePrecision``: the step runs with torch's default dtype set to the
    parameters' dtype, so ``torch.zeros(...)`` inside it matches them (and it is float32 again afterwards)."""
    created: list[torch.dtype] = []

    class Model(LinearRegression):
        def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
            created.append(torch.zeros(1).dtype)
            return super().training_step(batch, batch_idx)

    Trainer(**quiet(precision=precision, max_steps=2, default_root_dir=tmp_path, log_every_n_steps=1)).fit(
        Model(), regression_data()
    )
    expected = HALF.get(precision, torch.float64)
    assert created == [expected, expected]
    assert torch.get_default_dtype() == torch.float32


@pytest.mark.parametrize("precision", sorted(HALF))
def test_lightnings_half_precision_sets_the_default_dtype_only_inside_its_forward_context(
    precision: str,
) -> None:
    from accelplug.pytorch.plugins import HalfPrecision

    with HalfPrecision(precision).forward_context():
        inside = torch.get_default_dtype()
    assert inside == HALF[precision]
    assert torch.get_default_dtype() == torch.float32


def test_64_true_converts_floating_tensors_and_keeps_complex_buffers_complex() -> None:
    """Lightning's ``DoublePrecision`` converts with ``module.double()``: a complex buffer keeps its dtype (casting
    it to float64 would drop the imaginary part)."""
    from accelplug.precision import Float64Precision

    module = torch.nn.Linear(2, 2)
    module.register_buffer("phase", torch.ones(2, dtype=torch.complex64))
    Float64Precision("cpu").convert_module(module)
    assert module.weight.dtype == torch.float64
    assert module.phase.dtype == torch.complex64
