"""``trainer.state.status``/``finished``/``stopped``: where the last call stands, as Lightning 2.6 reports it."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from tests.callbacks.parity import FRAMEWORKS, make_module, quiet_lightning

pytest.importorskip("lightning", reason="the parity tests compare with Lightning, not installed here")


def _value(status: Any) -> str:
    """Lightning's status is a ``TrainerStatus`` (a ``str`` enum); accelplug's is its string value."""
    return str(getattr(status, "value", status))


def _statuses(framework: Any, root: Path, fail_at_step: int | None) -> list[Any]:
    trainer = framework.Trainer(
        accelerator="cpu",
        max_epochs=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=root,
    )
    seen: list[Any] = [(_value(trainer.state.status),)]
    module = make_module(framework, validation=False, fail_at_step=fail_at_step)
    with quiet_lightning(framework):
        if fail_at_step is None:
            trainer.fit(module)
        else:
            with pytest.raises(RuntimeError, match="failing at step"):
                trainer.fit(module)
    state = trainer.state
    seen.append((_value(state.status), state.finished, state.stopped))
    return seen


@pytest.mark.parametrize(
    ("fail_at_step", "after"),
    [(None, ("finished", True, True)), (2, ("interrupted", False, True))],
    ids=["ran-to-the-end", "raised"],
)
def test_the_status_after_a_fit_is_lightnings(fail_at_step: int | None, after: tuple[Any, ...], tmp_path: Path) -> None:
    results = [_statuses(fw, tmp_path / name, fail_at_step) for name, fw in FRAMEWORKS.items()]
    assert results[0] == results[1] == [("initializing",), after]


def _fns_seen(framework: Any, root: Path) -> list[tuple[bool, bool]]:
    """Inside validation, whether ``trainer.state.fn`` equals ``TrainerFn.FITTING`` / ``TrainerFn.VALIDATING``."""
    states = importlib.import_module(f"{framework.__name__}.pytorch.trainer.states")  # Lightning's path on both
    seen: list[tuple[bool, bool]] = []

    class Record(framework.Callback):  # type: ignore[misc, name-defined]
        def on_validation_start(self, trainer: Any, pl_module: Any) -> None:
            seen.append((trainer.state.fn == states.TrainerFn.FITTING, trainer.state.fn == states.TrainerFn.VALIDATING))

    trainer = framework.Trainer(
        accelerator="cpu",
        max_epochs=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=root,
        callbacks=[Record()],
    )
    module = make_module(framework)
    with quiet_lightning(framework):
        trainer.fit(module)
        trainer.validate(module, verbose=False)
    return seen


def test_trainer_fn_names_the_call_running_as_lightnings(tmp_path: Path) -> None:
    results = [_fns_seen(fw, tmp_path / name) for name, fw in FRAMEWORKS.items()]
    assert results[0] == results[1] == [(True, False), (False, True)]


def _stages_seen(framework: Any, root: Path) -> list[tuple[str | None, str | None]]:
    """What a library keyed on Lightning's enums reads in each hook: its own stage name for
    ``trainer.state.stage`` and ``trainer.state.fn``, looked up in dicts keyed by ``RunningStage``/``TrainerFn``
    members (pytorch-forecasting's ``STAGE_STATES``)."""
    states = importlib.import_module(f"{framework.__name__}.pytorch.trainer.states")
    stage_names = {
        states.RunningStage.TRAINING: "train",
        states.RunningStage.VALIDATING: "val",
        states.RunningStage.SANITY_CHECKING: "sanity_check",
        states.RunningStage.TESTING: "test",
        states.RunningStage.PREDICTING: "predict",
    }
    fn_names = {member: member.value for member in states.TrainerFn}
    seen: list[tuple[str | None, str | None]] = []

    class Record(framework.Callback):  # type: ignore[misc, name-defined]
        def _record(self, trainer: Any) -> None:
            seen.append((stage_names.get(trainer.state.stage), fn_names.get(trainer.state.fn)))

        def on_train_batch_start(self, trainer: Any, *args: Any) -> None:
            self._record(trainer)

        def on_validation_batch_start(self, trainer: Any, *args: Any) -> None:
            self._record(trainer)

        def on_test_batch_start(self, trainer: Any, *args: Any) -> None:
            self._record(trainer)

        def on_predict_batch_start(self, trainer: Any, *args: Any) -> None:
            self._record(trainer)

    trainer = framework.Trainer(
        accelerator="cpu",
        max_steps=1,
        limit_val_batches=1,
        limit_test_batches=1,
        limit_predict_batches=1,
        num_sanity_val_steps=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=root,
        callbacks=[Record()],
    )

    class Evaluated(type(make_module(framework))):  # type: ignore[misc]
        def test_step(self, batch: Any, batch_idx: int) -> None:
            self(batch[0])

        def predict_step(self, batch: Any, batch_idx: int) -> Any:
            return self(batch[0])

    module = Evaluated()
    with quiet_lightning(framework):
        trainer.fit(module)
        trainer.test(module, dataloaders=module.val_dataloader(), verbose=False)
        trainer.predict(module, dataloaders=module.val_dataloader())
    return seen


def test_the_stage_and_fn_in_each_hook_are_lightnings_enum_members(tmp_path: Path) -> None:
    results = [_stages_seen(fw, tmp_path / name) for name, fw in FRAMEWORKS.items()]
    assert results[0] == results[1]
    assert ("train", "fit") in results[1] and ("sanity_check", "fit") in results[1]


def _compared_with_trainer_state(framework: Any, root: Path) -> list[bool]:
    """``trainer.state`` against Lightning's ``TrainerState`` records, before and after a fit."""
    states = importlib.import_module(f"{framework.__name__}.pytorch.trainer.states")
    trainer = framework.Trainer(
        accelerator="cpu",
        max_steps=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=root,
    )
    fresh = states.TrainerState(status=states.TrainerStatus.INITIALIZING, fn=None, stage=None)
    seen = [trainer.state == fresh, fresh == trainer.state, trainer.state != fresh]
    with quiet_lightning(framework):
        trainer.fit(make_module(framework, validation=False))
    fitted = states.TrainerState(status=states.TrainerStatus.FINISHED, fn=states.TrainerFn.FITTING, stage=None)
    seen += [trainer.state == fresh, trainer.state == fitted, fitted == trainer.state]
    return seen


def test_trainer_state_equals_lightnings_trainer_state_record(tmp_path: Path) -> None:
    results = [_compared_with_trainer_state(fw, tmp_path / name) for name, fw in FRAMEWORKS.items()]
    assert results[0] == results[1] == [True, True, False, False, True, True]


@pytest.mark.parametrize("limits", [{}, {"min_steps": 2}, {"min_epochs": 1}, {"max_steps": 3}])
def test_the_epoch_and_step_limits_read_as_lightnings_before_during_and_after_a_fit(
    tmp_path: Path, limits: dict[str, int]
) -> None:
    """``trainer.min_epochs`` and friends: unset ones read None before a fit and Lightning's parsed values (0, or 1
    with ``min_steps``; 1000 or -1 epochs) once it started."""
    names = ("min_epochs", "max_epochs", "min_steps", "max_steps")
    seen = {}
    for name, framework in FRAMEWORKS.items():
        reads: list[tuple[Any, ...]] = []

        class Reader(framework.Callback):  # type: ignore[misc, name-defined]
            def __init__(self, reads: list[tuple[Any, ...]]) -> None:
                self.reads = reads

            def on_train_start(self, trainer: Any, module: Any) -> None:
                self.reads.append(tuple(getattr(trainer, n) for n in names))

        trainer = framework.Trainer(
            accelerator="cpu",
            limit_train_batches=2,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            default_root_dir=tmp_path / name,
            callbacks=[Reader(reads)],
            **({"max_epochs": 1} if "max_steps" not in limits else {}),
            **limits,
        )
        reads.append(tuple(getattr(trainer, n) for n in names))
        with quiet_lightning(framework):
            trainer.fit(make_module(framework, validation=False))
        reads.append(tuple(getattr(trainer, n) for n in names))
        seen[name] = reads
    assert seen["accelplug"] == seen["lightning"]
