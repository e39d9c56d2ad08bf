"""``ModelCheckpoint`` under Lightning 2.6 and accelplug: the same files, names, scores and bookkeeping."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

import pytest
import torch

from .parity import fit_both

# These fits use loaders of a few batches: the advice that an epoch is shorter than the logging interval
# (Lightning's, given by both frameworks) is not what the tests are about.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval"
)


def _same_bookkeeping(sides: dict[str, Any]) -> None:
    theirs, ours = sides["lightning"], sides["accelplug"]
    for a, b in zip(theirs.callbacks, ours.callbacks, strict=True):
        assert ours.rel(b.best_model_path) == theirs.rel(a.best_model_path)
        assert ours.rel(b.last_model_path) == theirs.rel(a.last_model_path)
        assert ours.rel(b.kth_best_model_path) == theirs.rel(a.kth_best_model_path)
        assert {ours.rel(p): float(v) for p, v in b.best_k_models.items()} == pytest.approx(
            {theirs.rel(p): float(v) for p, v in a.best_k_models.items()}
        )
        for name in ("best_model_score", "current_score", "kth_value"):
            mine, wanted = getattr(b, name), getattr(a, name)
            assert type(mine) is type(wanted), name
            if wanted is not None:
                assert float(mine) == pytest.approx(float(wanted)), name
        assert ours.rel(b.dirpath) == theirs.rel(a.dirpath)
        assert b.state_key == a.state_key


CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "default": ({}, {}),
    "monitored-top-2-with-last": (
        {"monitor": "val_loss", "save_top_k": 2, "filename": "{epoch}-{val_loss:.2f}", "save_last": True},
        {"max_epochs": 4},
    ),
    "max-mode-no-auto-names": (
        {
            "monitor": "val_loss",
            "mode": "max",
            "filename": "e{epoch:02d}-{val_loss:.3f}",
            "auto_insert_metric_name": False,
        },
        {"max_epochs": 3},
    ),
    "every-3-steps-keep-all-link-last": ({"every_n_train_steps": 3, "save_top_k": -1, "save_last": "link"}, {}),
    "every-4-steps-keep-newest": ({"every_n_train_steps": 4}, {}),
    "every-2-epochs": ({"every_n_epochs": 2, "save_top_k": -1}, {"max_epochs": 5}),
    "save-top-0-only-last": ({"save_top_k": 0, "save_last": True}, {}),
    "train-metric-without-validation": (
        {"monitor": "train_loss_epoch", "save_top_k": 1, "save_last": True},
        {"max_epochs": 3, "limit_val_batches": 0},
    ),
    "monitored-every-5-steps": ({"monitor": "val_loss", "every_n_train_steps": 5, "save_top_k": 2}, {"max_epochs": 3}),
    "a-missing-metric-in-the-name": ({"filename": "{epoch}-{nothing:.1f}"}, {}),
    "validation-every-2-epochs": (
        {"monitor": "val_loss", "save_top_k": -1},
        {"max_epochs": 4, "check_val_every_n_epoch": 2},
    ),
    "two-callbacks": ({}, {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_model_checkpoint_writes_what_lightning_writes(case: str, tmp_path: Path) -> None:
    arguments, options = CASES[case]

    def callbacks(framework: Any) -> list[Any]:
        made = [_checkpoint(framework)(**arguments)]
        if case == "two-callbacks":
            made.append(type(made[0])(monitor="val_loss", dirpath=None, filename="best-{epoch}"))
        return made

    sides = fit_both(tmp_path, callbacks, **options)
    assert sides["accelplug"].files() == sides["lightning"].files()
    _same_bookkeeping(sides)
    theirs, ours = sides["lightning"].root, sides["accelplug"].root
    for link in (p for p in theirs.rglob("*") if p.is_symlink()):
        mine = ours / link.relative_to(theirs)
        assert mine.is_symlink() and Path(str(mine.readlink())) == Path(str(link.readlink()))


def test_a_time_interval_saves_as_lightning_does(tmp_path: Path) -> None:
    """A zero interval saves at every step after the first (the clock starts at ``on_train_start``)."""

    def callbacks(framework: Any) -> list[Any]:
        return [_checkpoint(framework)(train_time_interval=timedelta(0), save_top_k=-1)]

    sides = fit_both(tmp_path, callbacks, max_epochs=1)
    assert sides["accelplug"].files() == sides["lightning"].files()
    assert len(sides["accelplug"].files()) == 6


def test_save_on_exception_writes_the_failing_state_as_lightning(tmp_path: Path) -> None:
    def callbacks(framework: Any) -> list[Any]:
        return [_checkpoint(framework)(save_on_exception=True, save_last=True)]

    sides = fit_both(tmp_path, callbacks, module={"fail_at_step": 8}, expect_error=RuntimeError)
    assert (
        sides["accelplug"].files()
        == sides["lightning"].files()
        == {
            "checkpoints/epoch=0-step=6.ckpt",
            "checkpoints/epoch=1-step=8.ckpt",
            "checkpoints/last.ckpt",
        }
    )
    _same_bookkeeping(sides)


def test_the_default_folder_follows_the_logger_as_lightning(tmp_path: Path) -> None:
    def logger(framework: Any, root: Path) -> Any:
        loggers = framework.pytorch.loggers if framework.__name__ == "lightning" else framework.loggers
        return loggers.CSVLogger(save_dir=root, name="runs", version=3)

    sides = fit_both(tmp_path, lambda f: [_checkpoint(f)(monitor="val_loss")], logger=logger)
    theirs, ours = sides["lightning"], sides["accelplug"]
    assert (
        ours.rel(ours.callbacks[0].dirpath) == theirs.rel(theirs.callbacks[0].dirpath) == "runs/version_3/checkpoints"
    )
    assert ours.files("runs/version_3/checkpoints") == theirs.files("runs/version_3/checkpoints")


def test_resuming_restores_the_callbacks_state_as_lightning(tmp_path: Path) -> None:
    def callbacks(framework: Any) -> list[Any]:
        return [_checkpoint(framework)(monitor="val_loss", save_top_k=2, save_last=True)]

    first = fit_both(tmp_path / "first", callbacks, max_epochs=2)
    restored = {}
    for name, side in first.items():
        callback = callbacks(
            (side.trainer.__class__.__module__.startswith("lightning") and _lightning()) or _accelplug()
        )[0]
        callback.dirpath = side.callbacks[0].dirpath
        callback.load_state_dict(
            torch.load(side.callbacks[0].last_model_path, weights_only=False)["callbacks"][callback.state_key]
        )
        restored[name] = callback
    theirs, ours = restored["lightning"], restored["accelplug"]
    assert first["accelplug"].rel(ours.best_model_path) == first["lightning"].rel(theirs.best_model_path)
    assert float(ours.best_model_score) == pytest.approx(float(theirs.best_model_score))
    assert sorted(first["accelplug"].rel(p) for p in ours.best_k_models) == sorted(
        first["lightning"].rel(p) for p in theirs.best_k_models
    )


def test_to_yaml_writes_the_same_scores(tmp_path: Path) -> None:
    sides = fit_both(tmp_path, lambda f: [_checkpoint(f)(monitor="val_loss", save_top_k=2)], max_epochs=3)
    import yaml

    written = {}
    for name, side in sides.items():
        side.callbacks[0].to_yaml()
        text = (Path(side.callbacks[0].dirpath) / "best_k_models.yaml").read_text()
        written[name] = {side.rel(k): v for k, v in yaml.safe_load(text).items()}
    assert written["accelplug"] == pytest.approx(written["lightning"])


def _lightning() -> Any:
    import lightning

    return lightning


def _accelplug() -> Any:
    import accelplug

    return accelplug


def _checkpoint(framework: Any) -> Any:
    return (
        framework.pytorch.callbacks.ModelCheckpoint if framework.__name__ == "lightning" else framework.ModelCheckpoint
    )


def test_loggers_hear_of_each_save_as_in_lightning(tmp_path: Path) -> None:
    def logger(framework: Any, root: Path) -> Any:
        import importlib

        base = importlib.import_module(
            "lightning.pytorch.loggers" if framework.__name__ == "lightning" else "accelplug.loggers"
        ).Logger

        class Recorder(base):  # type: ignore[misc, valid-type]
            def __init__(self) -> None:
                super().__init__()
                self.saves: list[tuple[str, str, str]] = []

            name = "recorder"
            version = 0

            def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
                pass

            def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
                pass

            def after_save_checkpoint(self, checkpoint_callback: Any) -> None:
                best, last = checkpoint_callback.best_model_path, checkpoint_callback.last_model_path
                # __class__: Lightning hands a weakref proxy, accelplug the callback itself; both answer it the same
                self.saves.append((Path(best).name, Path(last).name, checkpoint_callback.__class__.__name__))

        return Recorder()

    sides = fit_both(
        tmp_path,
        lambda f: [_checkpoint(f)(dirpath=tmp_path / f.__name__ / "ckpt", monitor="val_loss", save_last=True)],
        logger=logger,
        max_epochs=3,
    )
    wanted = sides["lightning"].trainer.logger.saves
    assert sides["accelplug"].trainer.loggers[0].saves == wanted
    assert len(wanted) >= 4


def test_a_subclass_overriding_lightnings_private_steps_is_obeyed(tmp_path: Path) -> None:
    """Projects subclass Lightning's ModelCheckpoint and override its private steps: which metrics are candidates,
    when saving is skipped, what a removal does. The same subclass keeps the same files under both frameworks."""

    def callbacks(framework: Any) -> list[Any]:
        import importlib

        module = "lightning.pytorch.callbacks" if framework.__name__ == "lightning" else "accelplug.callbacks"
        base = importlib.import_module(module).ModelCheckpoint

        class KeepEverySecond(base):  # type: ignore[misc, valid-type]
            removed: ClassVar[list[str]] = []

            def _monitor_candidates(self, trainer: Any) -> dict[str, Any]:
                return {**super()._monitor_candidates(trainer), "custom": torch.tensor(float(trainer.current_epoch))}

            def _should_skip_saving_checkpoint(self, trainer: Any) -> bool:
                return bool(trainer.current_epoch == 1 or super()._should_skip_saving_checkpoint(trainer))

            def _remove_checkpoint(self, trainer: Any, filepath: str) -> None:
                KeepEverySecond.removed.append(Path(filepath).name)  # keeps the file

        return [KeepEverySecond(monitor="custom", mode="max", save_top_k=1, filename="{epoch}-{custom:.0f}")]

    sides = fit_both(tmp_path, callbacks, max_epochs=4)
    theirs, ours = sides["lightning"], sides["accelplug"]
    a, b = theirs.callbacks[0], ours.callbacks[0]
    assert type(b).removed == type(a).removed == ["epoch=0-custom=0.ckpt", "epoch=2-custom=2.ckpt"]
    assert ours.files() == theirs.files()
    assert ours.rel(b.best_model_path) == theirs.rel(a.best_model_path)
