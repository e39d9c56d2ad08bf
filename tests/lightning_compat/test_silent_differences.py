"""Issue 19's silent differences: the same script under Lightning 2.6.6 and accelplug, what it sees compared.

Each case ran under both before and gave different results with no error (a second ``fit`` retrained, the
epoch after ``fit`` was one lower, ``test`` left the fit's metrics in ``callback_metrics``, ``on_step`` values of
``validation_step`` never reached the loggers, values logged in ``on_train_batch_end`` reached
``callback_metrics`` a logging step late, ``trainer.model`` was None in ``configure_optimizers``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning

# These fits use loaders of a few batches: the advice that an epoch is shorter than the logging interval
# (Lightning's, given by both frameworks) is not what the tests are about.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval"
)

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    with quiet_lightning():  # Lightning's own warnings only: accelplug's stay visible
        yield


def _data(n: int = 32, seed: int = 0) -> DataLoader[Any]:
    x = torch.randn(n, 2, generator=torch.Generator().manual_seed(seed))
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8)


def _floats(metrics: dict[str, Any]) -> dict[str, float]:
    return {k: round(float(v), 4) for k, v in metrics.items()}


def _module(framework: Any, calls: list[str] | None = None) -> Any:
    class Regression(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)
            self.steps = 0
            self.seen_in_configure: tuple[Any, Any] | None = None

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            self.steps += 1
            x, y = batch
            loss = torch.nn.functional.mse_loss(self.layer(x), y)
            self.log("fit_loss", loss)
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            x, y = batch
            self.log("val_mse", torch.nn.functional.mse_loss(self.layer(x), y), on_step=True)
            self.log("val_index", float(batch_idx), on_step=True, on_epoch=False)

        def test_step(self, batch: Any, batch_idx: int) -> None:
            x, y = batch
            self.log("test_mse", torch.nn.functional.mse_loss(self.layer(x), y))

        def configure_optimizers(self) -> Any:
            trainer = self.trainer
            self.seen_in_configure = (trainer.model, trainer.lightning_module)
            return torch.optim.SGD(self.parameters(), lr=0.05)

    torch.manual_seed(0)
    return Regression()


_RECORDED = (
    "setup",
    "on_fit_start",
    "on_sanity_check_start",
    "on_train_start",
    "on_train_epoch_start",
    "on_validation_start",
    "on_validation_end",
    "on_train_epoch_end",
    "on_train_end",
    "on_fit_end",
    "teardown",
)


def _hook_recorder(framework: Any, calls: list[str]) -> Any:
    """A callback recording ``hook:trainer.current_epoch`` for the hooks above."""

    def recording(name: str) -> Any:
        def hook(self: Any, trainer: Any, *args: Any, **kwargs: Any) -> None:
            calls.append(f"{name}:{trainer.current_epoch}")

        return hook

    namespace = {name: recording(name) for name in _RECORDED}
    return type("Recorder", (framework.Callback,), namespace)()


def _trainer(framework: Any, root: Path, **options: Any) -> Any:
    settings = {
        "accelerator": "cpu",
        "devices": 1,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "logger": False,
        "default_root_dir": root,
        **options,
    }
    return framework.Trainer(**settings)


def _files(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


# ---- a second fit of a Trainer that reached its limits ------------------------------------------------------
def _fit_twice(framework: Any, root: Path, limits: dict[str, Any]) -> dict[str, Any]:
    calls: list[str] = []
    checkpoint = lightning.pytorch.callbacks.ModelCheckpoint if framework is lightning else accelplug.ModelCheckpoint
    trainer = _trainer(
        framework, root, callbacks=[_hook_recorder(framework, calls), checkpoint(save_last=False)], **limits
    )
    model = _module(framework)
    trainer.fit(model, _data(), _data(16, seed=1))
    first = {"step": trainer.global_step, "epoch": trainer.current_epoch, "trained": model.steps}
    written = _files(root)
    calls.clear()
    with pytest.warns(UserWarning, match="Checkpoint directory .* exists and is not empty"):  # both frameworks
        trainer.fit(model, _data(), _data(16, seed=1))
    second_calls = [c for c in calls if "sanity" not in c and "validation" not in c]
    return {
        "first": first,
        "second": {"step": trainer.global_step, "epoch": trainer.current_epoch, "trained": model.steps},
        "training hooks of the second fit": second_calls,
        "files rewritten": sorted(name for name, mtime in _files(root).items() if written.get(name) != mtime),
    }


@pytest.mark.parametrize(
    "limits",
    [{"max_epochs": 2}, {"max_steps": 5}, {"max_epochs": 3, "max_steps": 8}],
    ids=["max_epochs", "max_steps-inside-an-epoch", "max_steps-at-an-epoch-end"],
)
def test_a_second_fit_after_the_limits_is_a_no_op_and_current_epoch_matches(
    limits: dict[str, Any], tmp_path: Path
) -> None:
    expected = _fit_twice(lightning, tmp_path / "lightning", limits)
    seen = _fit_twice(accelplug, tmp_path / "accelplug", limits)
    assert seen == expected
    assert seen["files rewritten"] == [] and seen["second"]["trained"] == seen["first"]["trained"]


def test_current_epoch_in_every_hook_matches(tmp_path: Path) -> None:
    def run(framework: Any, root: Path) -> list[str]:
        calls: list[str] = []
        trainer = _trainer(framework, root, max_epochs=2, enable_checkpointing=False)
        trainer.callbacks.append(_hook_recorder(framework, calls))
        trainer.fit(_module(framework), _data(), _data(16, seed=1))
        calls.append(f"after fit:{trainer.current_epoch}")
        return [c for c in calls if "batch" not in c]

    assert run(accelplug, tmp_path / "a") == run(lightning, tmp_path / "l")


# ---- callback_metrics after test/validate ---------------------------------------------------------------------
def _metrics_per_call(framework: Any, root: Path) -> list[dict[str, float]]:
    trainer = _trainer(framework, root, max_epochs=2, enable_checkpointing=False, num_sanity_val_steps=0)
    model = _module(framework)
    trainer.fit(model, _data(), _data(16, seed=1))
    seen = [_floats(trainer.callback_metrics)]
    trainer.test(model, _data(16, seed=2), verbose=False)
    seen.append(_floats(trainer.callback_metrics))
    trainer.validate(model, _data(16, seed=3), verbose=False)
    seen.append(_floats(trainer.callback_metrics))
    return seen


def test_callback_metrics_hold_the_last_calls_metrics(tmp_path: Path) -> None:
    expected = _metrics_per_call(lightning, tmp_path / "lightning")
    seen = _metrics_per_call(accelplug, tmp_path / "accelplug")
    assert [sorted(m) for m in seen] == [sorted(m) for m in expected]
    for ours, theirs in zip(seen, expected, strict=True):
        assert ours == pytest.approx(theirs, rel=1e-3)
    assert set(seen[1]) == {"test_mse"}


# ---- what the loggers receive from validation_step(on_step=True) ---------------------------------------------
def _recording_logger(framework: Any, rows: list[tuple[int, dict[str, float]]]) -> Any:
    if framework is lightning:

        class Recording(lightning.pytorch.loggers.Logger):  # type: ignore[misc, name-defined]
            name, version = "recording", 0

            def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
                rows.append((int(step or 0), _floats(metrics)))

            def log_hyperparams(self, *args: Any, **kwargs: Any) -> None:
                pass

        return Recording()

    class Plain:
        name, version = "recording", 0

        def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
            rows.append((int(step or 0), _floats(metrics)))

        def log_hyperparams(self, *args: Any, **kwargs: Any) -> None:
            pass

    return Plain()


def _validation_rows(framework: Any, root: Path) -> dict[str, Any]:
    rows: list[tuple[int, dict[str, float]]] = []
    trainer = _trainer(
        framework, root, max_epochs=2, enable_checkpointing=False, logger=_recording_logger(framework, rows)
    )
    model = _module(framework)
    trainer.fit(model, _data(), _data(16, seed=1))
    # the rows of on_step values (their step is the count of validation batches seen); the epoch rows'
    # step is the loggers' business (tests/loggers)
    in_fit = [row for row in rows if "val_index" in row[1]]
    rows.clear()
    trainer.validate(model, _data(16, seed=1), verbose=False)
    return {"fit": in_fit, "validate": list(rows), "logged": sorted(trainer.logged_metrics)}


def test_on_step_values_of_validation_step_reach_the_loggers_as_in_lightning(tmp_path: Path) -> None:
    expected = _validation_rows(lightning, tmp_path / "lightning")
    seen = _validation_rows(accelplug, tmp_path / "accelplug")
    assert seen == expected
    assert any("val_mse_step" in row for _, row in seen["fit"])


# ---- values logged in on_train_batch_end are in callback_metrics at once -------------------------------------
def _batch_end_views(framework: Any, root: Path, log_every: int) -> list[tuple[str, int, dict[str, float]]]:
    seen: list[tuple[str, int, dict[str, float]]] = []

    class Logs(framework.Callback):  # type: ignore[misc, name-defined]
        def on_train_batch_start(self, trainer: Any, module: Any, batch: Any, batch_idx: int) -> None:
            seen.append(("batch start", trainer.global_step, _floats(trainer.callback_metrics)))

        def on_train_batch_end(self, trainer: Any, module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
            module.log("from_callback", float(trainer.global_step))
            seen.append(("batch end", trainer.global_step, _floats(trainer.callback_metrics)))

        def on_validation_epoch_end(self, trainer: Any, module: Any) -> None:
            seen.append(("validation epoch end", trainer.global_step, _floats(trainer.callback_metrics)))

    trainer = _trainer(
        framework,
        root,
        max_epochs=2,
        enable_checkpointing=False,
        log_every_n_steps=log_every,
        num_sanity_val_steps=0,
        callbacks=[Logs()],
    )
    trainer.fit(_module(framework), _data(), _data(16, seed=1))
    return seen


@pytest.mark.parametrize("log_every", [1, 3])
def test_a_logged_value_is_in_callback_metrics_at_the_same_step(log_every: int, tmp_path: Path) -> None:
    expected = _batch_end_views(lightning, tmp_path / "lightning", log_every)
    seen = _batch_end_views(accelplug, tmp_path / "accelplug", log_every)
    assert seen == expected
    assert seen[1][2]["from_callback"] == 1.0


# ---- trainer.model inside configure_optimizers --------------------------------------------------------------
def test_trainer_model_is_set_inside_configure_optimizers(tmp_path: Path) -> None:
    for framework in (lightning, accelplug):
        model = _module(framework)
        _trainer(framework, tmp_path / framework.__name__, max_steps=1).fit(model, _data())
        assert model.seen_in_configure is not None
        assert model.seen_in_configure[0] is model and model.seen_in_configure[1] is model, framework.__name__
