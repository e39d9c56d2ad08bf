"""``trainer.fit_loop.epoch_loop.val_loop.batch_progress`` during a fit, read as Lightning 2.6.6's.

Lightning forgets the sanity check's batches once it is over, starts ``total`` again at each training epoch (it
counts the batches of the epoch's validations, however many ran), and keeps ``current`` for the last validation.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from tests.trainer.loops.both import FRAMEWORKS, fit_one


def _progress_reader(framework: Any, seen: list[tuple[str, int, int]]) -> Any:
    """A callback writing (moment, total, current) of the fit's validation progress at each training boundary."""

    class ReadProgress(framework.Callback):  # type: ignore[misc, name-defined]
        def _read(self, trainer: Any, moment: str) -> None:
            progress = trainer.fit_loop.epoch_loop.val_loop.batch_progress
            seen.append((moment, progress.total.completed, progress.current.completed))

        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            self._read(trainer, "train_start")

        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            self._read(trainer, "epoch_start")

        def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
            self._read(trainer, "epoch_end")

    return ReadProgress()


def _progress_readers(framework: Any, seen: list[tuple[str, int, int]]) -> list[Any]:
    return [_progress_reader(framework, seen)]


def _progress_in_fit(tmp_path: Path, **options: Any) -> dict[str, list[tuple[str, int, int]]]:
    seen: dict[str, list[tuple[str, int, int]]] = {name: [] for name in FRAMEWORKS}
    for name, framework in FRAMEWORKS.items():
        fit_one(framework, tmp_path / name, callbacks=functools.partial(_progress_readers, seen=seen[name]), **options)
    return seen


def test_the_sanity_checks_batches_are_forgotten_when_training_starts(tmp_path: Path) -> None:
    seen = _progress_in_fit(tmp_path, max_epochs=1, num_sanity_val_steps=2)
    assert seen["lightning"][0] == ("train_start", 0, 0)
    assert seen["accelplug"] == seen["lightning"]


def test_the_total_counts_the_validations_of_the_current_epoch_only(tmp_path: Path) -> None:
    # two validations of 4 batches in each validating epoch; an epoch check_val_every_n_epoch skips counts none
    seen = _progress_in_fit(tmp_path, max_epochs=4, val_check_interval=4, check_val_every_n_epoch=2)
    epoch_ends = [entry for entry in seen["lightning"] if entry[0] == "epoch_end"]
    assert epoch_ends == [("epoch_end", 0, 0), ("epoch_end", 8, 4), ("epoch_end", 0, 4), ("epoch_end", 8, 4)]
    assert seen["accelplug"] == seen["lightning"]
