"""``Trainer(strategy="ddp_spawn")``: the call runs in two fresh interpreters, rank 0's outcome comes back.

Real processes and a real gloo group, under pytest, where no script could be started again: the Trainer,
the model and the data reach the processes pickled, as with Lightning's ``ddp_spawn``. Only what Lightning
brings back comes back: the weights, the loop state (``callback_metrics`` included), the checkpoint paths;
what a hook did to the module's other attributes stays in the processes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import Callback, LightningModule, Trainer
from accelplug.errors import MisconfigurationException
from tests.modules import regression_data
from tests.processes import REPO, child_env


class CountingRegression(LightningModule):
    """Logs the group's size and counts its steps (an attribute the parent never sees change)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 1)
        self.steps_here = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # predict's default step calls it
        return self.linear(x)  # type: ignore[no-any-return]

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        self.steps_here += 1
        self.log("world", float(self.trainer.world_size))
        x, y = batch
        return torch.nn.functional.mse_loss(self.linear(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _trainer(root: Path, **options: Any) -> Trainer:
    options = {"devices": 2, "strategy": "ddp_spawn", **options}
    return Trainer(
        accelerator="cpu",
        max_steps=2,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=root,
        **options,
    )


@pytest.mark.slow
def test_fit_spawns_two_ranks_and_brings_back_weights_state_and_checkpoint_path(tmp_path: Path) -> None:
    model = CountingRegression()
    before = model.linear.weight.detach().clone()
    trainer = _trainer(tmp_path)
    trainer.fit(model, regression_data(n=64, batch_size=8))

    assert not torch.equal(model.linear.weight, before)  # rank 0's trained weights, loaded here
    assert trainer.global_step == 2 and trainer.state.status == "finished"
    assert float(trainer.callback_metrics["world"]) == 2.0  # logged inside a group of two
    best = trainer.checkpoint_callback.best_model_path  # type: ignore[union-attr]
    assert Path(best).is_file() and Path(best).parent == tmp_path / "checkpoints"
    assert model.steps_here == 0  # the steps ran in the spawned processes, not here
    assert trainer.lightning_module is model  # so trainer.test() without a model tests it, as in Lightning


class _KeepsALambda(Callback):
    def __init__(self) -> None:
        self.transform = lambda x: x


def test_an_object_that_cannot_be_pickled_is_named_before_any_process_starts(tmp_path: Path) -> None:
    trainer = _trainer(tmp_path, callbacks=[_KeepsALambda()])
    with pytest.raises(
        MisconfigurationException, match=r"trainer\..*callbacks\[0\]\.transform cannot be pickled \(function"
    ):
        trainer.fit(CountingRegression(), regression_data(n=16, batch_size=8))


@pytest.mark.slow
def test_a_module_defined_in_python_c_is_refused_with_what_to_do_instead(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import accelplug
        from tests.modules import regression_data
        from tests.trainer.process.test_spawning import CountingRegression

        class Defined(CountingRegression):  # lives in this interpreter's __main__, which has no file
            pass

        trainer = accelplug.Trainer(accelerator="cpu", devices=2, strategy="ddp_spawn", max_steps=1, logger=False)
        try:
            trainer.fit(Defined(), regression_data(n=16))
        except accelplug.MisconfigurationException as error:
            print(error)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=child_env(pythonpath=REPO), capture_output=True, text=True, timeout=120
    )
    assert "Defined is defined in this interpreter's __main__" in result.stdout, result.stderr[-3000:]
    assert "strategy='ddp_notebook'" in result.stdout


@pytest.mark.slow
def test_a_script_without_a_main_guard_is_told_to_add_one(tmp_path: Path) -> None:
    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(
            """
            import accelplug
            from tests.modules import regression_data
            from tests.trainer.process.test_spawning import CountingRegression

            trainer = accelplug.Trainer(accelerator="cpu", devices=2, strategy="ddp_spawn", max_steps=1, logger=False)
            trainer.fit(CountingRegression(), regression_data(n=16))
            """
        )
    )
    result = subprocess.run(
        [sys.executable, str(script)], env=child_env(pythonpath=REPO), capture_output=True, text=True, timeout=180
    )
    assert result.returncode != 0
    assert 'guards the main function with an `if __name__ == "__main__"` clause' in result.stderr


def test_a_second_fit_of_a_trainer_that_fitted_in_spawned_processes_is_refused_as_lightning_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lightning raises ``NotImplementedError`` for a second ``fit`` with a spawn-based strategy (a test in between
    stays allowed); the processes are stood in for by their outcome, so nothing starts."""
    from accelplug.trainer.process import spawning

    calls: list[str] = []

    def outcome(entry: Any, objects: dict[str, Any], processes: int, start_method: str, **_: Any) -> dict[str, Any]:
        calls.append(start_method)
        return {"weights": objects["model"].state_dict(), "state": {}, "checkpoint_paths": {}, "result": None}

    monkeypatch.setattr(spawning, "start_local_processes", outcome)
    model = CountingRegression()
    trainer = _trainer(tmp_path)
    data = regression_data(n=16, batch_size=4)
    trainer.fit(model, data)
    trainer.predict(model, data)
    with pytest.raises(NotImplementedError, match=r"twice.*is not supported.*ckpt_path"):
        trainer.fit(model, data)
    assert calls == ["spawn", "spawn"]  # the refused fit started nothing
    _trainer(tmp_path).fit(model, data)  # a new Trainer fits again


def test_the_second_fit_is_refused_on_one_device_too_and_only_after_a_first_finished(tmp_path: Path) -> None:
    """One device runs in this process, but the rule follows the strategy, as Lightning's (``ddp_spawn`` with
    ``devices=1`` still spawns there); a first fit that raised does not count, and a plain ``"ddp"`` fits again."""

    class Failing(CountingRegression):
        def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
            raise ValueError("the first fit fails")

    data = regression_data(n=16, batch_size=4)
    trainer = _trainer(tmp_path, devices=1)
    with pytest.raises(ValueError, match="the first fit fails"):
        trainer.fit(Failing(), data)
    trainer.fit(CountingRegression(), data)  # the failed fit did not count
    with pytest.raises(NotImplementedError, match=r"twice.*is not supported"):
        trainer.fit(CountingRegression(), data)
    plain = _trainer(tmp_path, devices=1, strategy="ddp")
    plain.fit(CountingRegression(), data)
    plain.fit(CountingRegression(), data)
