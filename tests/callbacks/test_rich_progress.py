"""``RichProgressBar``'s public surface against Lightning 2.6: the display's tasks after a run, the columns a subclass
or a patch gives, the metrics column, and a missing ``rich``."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

import accelplug
from accelplug.callbacks.rich_progress import CustomInfiniteTask, CustomProgress, MetricsTextColumn, RichProgressBar
from accelplug.errors import MisconfigurationException

from .parity import fit_both, make_module

pytestmark = pytest.mark.filterwarnings(
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval"
)

PUBLIC_PATH = "accelplug.pytorch.callbacks.progress.rich_progress"


def _bar(framework: Any, **kwargs: Any) -> list[Any]:
    module = "lightning.pytorch.callbacks" if framework.__name__ == "lightning" else "accelplug.callbacks"
    return [__import__(module, fromlist=["RichProgressBar"]).RichProgressBar(**kwargs)]


def _tasks(bar: Any) -> list[tuple[str, float, float | None, bool]]:
    return [(t.description.strip(), t.completed, t.total, t.visible) for t in bar.progress.tasks]


def test_the_display_keeps_lightnings_tasks_after_fit(tmp_path: Path) -> None:
    """Sanity check, training epoch (one task, reset each epoch) and validation passes: counts and visibility."""
    sides = fit_both(tmp_path, _bar, enable_progress_bar=True, num_sanity_val_steps=2, max_epochs=2)
    theirs, ours = (_tasks(sides[name].callbacks[0]) for name in ("lightning", "accelplug"))
    assert ours == theirs
    assert [t[0] for t in ours][:2] == ["Sanity Checking", "Epoch 1/1"]


def test_leave_starts_a_display_per_epoch_as_lightning(tmp_path: Path) -> None:
    sides = fit_both(tmp_path, lambda f: _bar(f, leave=True), enable_progress_bar=True, max_epochs=3)
    theirs, ours = (sides[name].callbacks[0] for name in ("lightning", "accelplug"))
    assert _tasks(ours) == _tasks(theirs)
    assert ours.train_progress_bar.description.startswith("Epoch 2/2")


def test_the_metrics_column_shows_the_training_bars_metrics_only(tmp_path: Path) -> None:
    sides = fit_both(tmp_path, _bar, module={"prog_bar": True}, enable_progress_bar=True, max_epochs=1)
    bar = sides["accelplug"].callbacks[0]
    column = bar.progress.columns[-1]
    assert isinstance(column, MetricsTextColumn)
    drawn = {task_id: str(text) for task_id, (_, text) in column._renderable_cache.items()}
    assert "train_loss" in drawn[bar.train_progress_bar_id]
    assert drawn.get(bar.val_progress_bar_id, "") == ""


def test_a_subclass_columns_come_first_then_the_metrics() -> None:
    from rich.progress import TextColumn

    mine = TextColumn("{task.description}")

    class Plain(RichProgressBar):
        def configure_columns(self, trainer: Any) -> list[Any]:
            return [mine]

    bar = Plain()
    bar._init_progress(accelplug.Trainer(logger=False))
    try:
        assert bar.progress is not None
        assert list(bar.progress.columns[:1]) == [mine]
        assert isinstance(bar.progress.columns[1], MetricsTextColumn)
    finally:
        bar._stop_progress()


def test_a_column_replaced_at_lightnings_path_is_the_one_drawn() -> None:
    import accelplug.pytorch.callbacks.progress.rich_progress  # noqa: F401  # the path code patches

    with mock.patch(f"{PUBLIC_PATH}.BatchesProcessedColumn") as replaced:
        columns = RichProgressBar().configure_columns(None)
    assert columns[2] is replaced.return_value
    assert replaced.call_args.kwargs == {"style": RichProgressBar().theme.batch_progress}


def test_without_rich_the_bar_is_lightnings_module_not_found_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import accelplug.pytorch.callbacks.progress.rich_progress as path

    monkeypatch.setattr(path, "_RICH_AVAILABLE", False)
    with pytest.raises(ModuleNotFoundError, match=r"`RichProgressBar` requires `rich` >= 10\.2\.2") as caught:
        RichProgressBar()
    assert isinstance(caught.value, MisconfigurationException)


def test_a_loader_without_length_gets_an_open_ended_task() -> None:
    progress = CustomProgress()
    task_id = progress.add_task("Epoch 0", total=float("inf"))
    progress.update(task_id, completed=5)
    assert isinstance(progress.tasks[task_id], CustomInfiniteTask)
    assert progress.tasks[task_id].time_remaining is None  # rich's own estimate would overflow: inf / speed


def test_a_bar_pickles_before_and_after_a_run(tmp_path: Path) -> None:
    """The display holds a lock and a thread, the metrics column the Trainer: a pickled bar leaves them behind."""
    from accelplug.demos.boring_classes import BoringModel

    bar = RichProgressBar()
    pickle.dumps(bar)
    trainer = accelplug.Trainer(
        callbacks=[bar],
        logger=False,
        max_epochs=1,
        limit_train_batches=2,
        limit_val_batches=1,
        default_root_dir=tmp_path,
    )
    trainer.fit(BoringModel())
    copy = pickle.loads(pickle.dumps(bar))
    assert copy.progress is None and bar.progress is not None


def test_a_disabled_bar_starts_no_display(tmp_path: Path) -> None:
    bar = RichProgressBar(refresh_rate=0)
    trainer = accelplug.Trainer(
        callbacks=[bar], logger=False, max_epochs=1, limit_train_batches=2, default_root_dir=tmp_path
    )
    trainer.fit(make_module(accelplug))
    assert bar.progress is None and bar.train_progress_bar_id is None


def test_a_run_bounded_by_steps_alone_counts_the_steps_left_as_lightning(tmp_path: Path) -> None:
    """``max_epochs=-1`` with ``max_steps``: the training bar's total is the steps left, not the epoch's batches."""
    sides = fit_both(tmp_path, _bar, enable_progress_bar=True, max_epochs=-1, max_steps=4, limit_val_batches=0)
    theirs, ours = (_tasks(sides[name].callbacks[0]) for name in ("lightning", "accelplug"))
    assert ours == theirs
    assert ours[0][1:3] == (4, 4)
