"""``TQDMProgressBar``/``RichProgressBar`` against Lightning 2.6: the same bars, counts, metrics and refusals."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

import accelplug
from accelplug.errors import MisconfigurationException

from .parity import fit_both, lightning

# These fits use loaders of a few batches: the advice that an epoch is shorter than the logging interval
# (Lightning's, given by both frameworks) is not what the tests are about.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval"
)


def _callbacks(framework: Any) -> Any:
    return importlib.import_module(
        "lightning.pytorch.callbacks" if framework.__name__ == "lightning" else "accelplug.callbacks"
    )


def _csv(framework: Any, root: Path) -> Any:
    loggers = importlib.import_module(
        "lightning.pytorch.loggers" if framework.__name__ == "lightning" else "accelplug.loggers"
    )
    return loggers.CSVLogger(save_dir=root, name="runs", version=7)


def _fit_tqdm(tmp_path: Path, refresh_rate: int) -> tuple[Any, Any]:
    sides = fit_both(
        tmp_path,
        lambda f: [_callbacks(f).TQDMProgressBar(refresh_rate=refresh_rate)],
        module={"prog_bar": True},
        logger=_csv,
        enable_progress_bar=True,
        num_sanity_val_steps=2,
    )
    return sides["lightning"], sides["accelplug"]


def test_tqdm_bars_count_and_name_as_lightnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    theirs, ours = _fit_tqdm(tmp_path, 1)
    mine, wanted = ours.callbacks[0], theirs.callbacks[0]
    for name in ("train_progress_bar", "val_progress_bar"):
        a, b = getattr(mine, name), getattr(wanted, name)
        assert (a.n, a.desc, a.leave, a.disable) == (b.n, b.desc, b.leave, b.disable), name
    assert mine.train_progress_bar.format_num(2.37) == wanted.train_progress_bar.format_num(2.37) == "2.370"
    assert "Epoch 1: 100%" in capsys.readouterr().out


@pytest.mark.parametrize("refresh_rate", [1, 4])
def test_tqdm_bars_end_exactly_as_lightnings(refresh_rate: int, tmp_path: Path) -> None:
    theirs, ours = _fit_tqdm(tmp_path, refresh_rate)
    for name in ("train_progress_bar", "val_progress_bar"):
        a, b = getattr(ours.callbacks[0], name), getattr(theirs.callbacks[0], name)
        assert (a.n, a.total, a.desc, a.postfix) == (b.n, b.total, b.desc, b.postfix), name


def test_rich_bar_shows_lightnings_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sides = fit_both(
        tmp_path,
        lambda f: [_callbacks(f).RichProgressBar(leave=True)],
        module={"prog_bar": True},
        logger=_csv,
        enable_progress_bar=True,
    )
    theirs, ours = (sides[n].callbacks[0] for n in ("lightning", "accelplug"))
    assert ours.get_metrics(sides["accelplug"].trainer, None) == pytest.approx(
        theirs.get_metrics(sides["lightning"].trainer, None)
    )
    assert (ours.is_enabled, ours.refresh_rate) == (theirs.is_enabled, theirs.refresh_rate)
    assert "Epoch 1" in capsys.readouterr().out


def test_progress_bar_metrics_are_lightnings_at_every_step(tmp_path: Path) -> None:
    """What a bar reads each step: the live ``train_loss_step`` (never the returned loss), then the epoch values."""

    def recorder(framework: Any) -> list[Any]:
        class Record(framework.Callback):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                self.seen: list[dict[str, float]] = []

            def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
                self.seen.append(dict(trainer.progress_bar_metrics))

            def on_train_epoch_end(self, trainer: Any, *args: Any) -> None:
                self.seen.append(dict(trainer.progress_bar_metrics))

        return [Record()]

    sides = fit_both(tmp_path, recorder, module={"prog_bar": True}, log_every_n_steps=4)
    ours, theirs = (sides[n].callbacks[0].seen for n in ("accelplug", "lightning"))
    assert len(ours) == len(theirs) == 14
    for mine, wanted in zip(ours, theirs, strict=True):
        assert list(mine) == list(wanted)
        assert mine == pytest.approx(wanted, rel=1e-5)
    assert all(type(v) is float for v in sides["accelplug"].trainer.progress_bar_metrics.values())


def test_without_a_reader_the_step_values_wait_on_the_device(tmp_path: Path) -> None:
    """No bar and nobody reading: each step's prog_bar value is kept as the tensor logged (no read-back per step);
    reading ``trainer.progress_bar_metrics`` turns it into the float Lightning shows."""
    import torch

    kinds: list[type] = []

    class Peek(accelplug.Callback):  # type: ignore[misc]
        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            kinds.append(type(trainer.state.progress_bar_metrics["train_loss_step"]))

    sides = fit_both(
        tmp_path, lambda f: [Peek()] if f is accelplug else [], module={"prog_bar": True}, log_every_n_steps=50
    )
    assert kinds == [torch.Tensor] * 12
    ours, theirs = (sides[n].trainer.progress_bar_metrics for n in ("accelplug", "lightning"))
    assert ours == pytest.approx(theirs, rel=1e-5) and type(ours["train_loss_step"]) is float


def test_rich_bar_draws_each_epoch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sides = fit_both(tmp_path, lambda f: [_callbacks(f).RichProgressBar(leave=True)], enable_progress_bar=True)
    ours, theirs = sides["accelplug"].callbacks[0], sides["lightning"].callbacks[0]
    assert (ours.is_enabled, ours.refresh_rate) == (theirs.is_enabled, theirs.refresh_rate)
    assert vars(ours.theme) == vars(theirs.theme)
    out = capsys.readouterr().out
    assert "Epoch 0/1" in out and "Epoch 1/1" in out


@pytest.mark.parametrize("case", ["two-bars", "bar-but-disabled"])
def test_refusals_match_lightnings(case: str, tmp_path: Path) -> None:
    def build(framework: Any) -> BaseException:
        module = _callbacks(framework)
        options: dict[str, Any] = {"logger": False, "default_root_dir": tmp_path}
        if case == "two-bars":
            options["callbacks"] = [module.TQDMProgressBar(), module.RichProgressBar()]
        else:
            options.update(callbacks=[module.TQDMProgressBar()], enable_progress_bar=False)
        with pytest.raises(Exception, match=r"(?i)progress") as caught:
            framework.Trainer(**options)
        return caught.value

    assert type(build(lightning)).__name__ == "MisconfigurationException"
    assert isinstance(build(accelplug), MisconfigurationException)


def test_a_given_bar_is_in_trainer_callbacks_as_in_lightning(tmp_path: Path) -> None:
    def names(framework: Any) -> list[str]:
        trainer = framework.Trainer(
            logger=False, default_root_dir=tmp_path, callbacks=[_callbacks(framework).TQDMProgressBar(refresh_rate=5)]
        )
        return [type(c).__name__ for c in trainer.callbacks]

    assert names(accelplug) == names(lightning)


def test_a_bar_not_attached_says_so() -> None:
    with pytest.raises(MisconfigurationException, match="not attached"):
        _ = accelplug.callbacks.TQDMProgressBar().trainer  # type: ignore[attr-defined]
    with pytest.raises(MisconfigurationException, match="refresh_rate=-1"):
        accelplug.callbacks.RichProgressBar(refresh_rate=-1)  # type: ignore[attr-defined]
    with pytest.raises(MisconfigurationException, match="RichProgressBarTheme"):
        accelplug.callbacks.RichProgressBar(theme=None)  # type: ignore[attr-defined, arg-type]


def test_rich_bar_default_theme_is_lightnings_instance() -> None:
    import inspect

    ours = inspect.signature(accelplug.callbacks.RichProgressBar).parameters["theme"].default  # type: ignore[attr-defined]
    theirs = inspect.signature(_callbacks(lightning).RichProgressBar).parameters["theme"].default
    assert type(ours).__name__ == type(theirs).__name__ == "RichProgressBarTheme"
    assert vars(ours) == vars(theirs)
    assert accelplug.callbacks.RichProgressBar().theme is ours  # type: ignore[attr-defined]


def test_rich_bars_stay_readable_after_the_run_as_lightnings(tmp_path: Path) -> None:
    """Lightning stops the display at the end of a stage but keeps it: ``progress.tasks`` still tells the counts."""
    sides = fit_both(
        tmp_path,
        lambda f: [_callbacks(f).RichProgressBar(leave=True)],
        logger=_csv,
        enable_progress_bar=True,
    )
    seen = {}
    for name in ("lightning", "accelplug"):
        bar = sides[name].callbacks[0]
        assert bar.progress is not None, name
        train = bar.progress.tasks[bar.train_progress_bar_id]
        seen[name] = (train.completed, train.total)
    assert seen["accelplug"] == seen["lightning"]
