"""``LambdaCallback`` and ``OnExceptionCheckpoint`` under Lightning 2.6 and accelplug: same calls, same files."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from accelplug.errors import MisconfigurationException

from .parity import fit_both, lightning


def _callbacks(framework: Any) -> Any:
    return importlib.import_module(
        "lightning.pytorch.callbacks" if framework.__name__ == "lightning" else "accelplug.callbacks"
    )


def test_lambda_callback_calls_its_functions_as_lightning(tmp_path: Path) -> None:
    calls: dict[str, list[tuple[str, int]]] = {"lightning": [], "accelplug": []}

    def make(framework: Any) -> list[Any]:
        seen = calls[framework.__name__]
        return [
            _callbacks(framework).LambdaCallback(
                on_fit_start=lambda trainer, module: seen.append(("fit_start", trainer.global_step)),
                on_train_epoch_end=lambda trainer, module: seen.append(("epoch_end", trainer.global_step)),
                on_train_batch_end=lambda trainer, module, out, batch, i: seen.append(("batch_end", i)),
                on_validation_end=lambda trainer, module: seen.append(("val_end", trainer.global_step)),
            )
        ]

    fit_both(tmp_path, make, max_epochs=2)
    assert calls["accelplug"] == calls["lightning"]
    assert len(calls["accelplug"]) == 1 + 2 * (6 + 2)


def test_lambda_callback_refuses_what_is_not_a_function() -> None:
    with pytest.raises(MisconfigurationException, match="on_fit_start=3"):
        accelplug.callbacks.LambdaCallback(on_fit_start=3)  # type: ignore[arg-type, attr-defined]


def test_on_exception_checkpoint_keeps_the_failing_state_as_lightning(tmp_path: Path) -> None:
    def make(framework: Any) -> list[Any]:
        return [_callbacks(framework).OnExceptionCheckpoint(tmp_path / framework.__name__ / "crash")]

    sides = fit_both(tmp_path, make, module={"fail_at_step": 8}, expect_error=RuntimeError)
    files = {name: side.files() for name, side in sides.items()}
    assert files["accelplug"] == files["lightning"] == {"crash/on_exception.ckpt"}
    ours = torch.load(sides["accelplug"].callbacks[0].ckpt_path, weights_only=False)
    theirs = torch.load(sides["lightning"].callbacks[0].ckpt_path, weights_only=False)
    assert ours["global_step"] == theirs["global_step"] == 8
    for name, value in theirs["state_dict"].items():
        assert torch.allclose(ours["state_dict"][name], value), name


def test_on_exception_checkpoint_leaves_nothing_after_a_clean_fit(tmp_path: Path) -> None:
    def make(framework: Any) -> list[Any]:
        return [_callbacks(framework).OnExceptionCheckpoint(tmp_path / framework.__name__ / "crash")]

    sides = fit_both(tmp_path, make)
    assert sides["accelplug"].files() == sides["lightning"].files() == set()


def test_on_exception_checkpoint_needs_a_file_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="filename"):
        lightning.pytorch.callbacks.OnExceptionCheckpoint(tmp_path, filename="")
    with pytest.raises(MisconfigurationException, match="filename"):
        accelplug.callbacks.OnExceptionCheckpoint(tmp_path, filename="")  # type: ignore[attr-defined]
