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
