"""Where ``Trainer(strategy="ddp")`` cannot start its processes itself, it says so before starting anything.

``ddp`` re-runs the script once per device. An interpreter not started from a script file (pytest, a notebook, ``-c``)
has nothing to re-run: ``ddp_spawn``/``ddp_notebook`` are the strategies for it (``tests/trainer/process``). A worker
(``LOCAL_RANK`` > 0) whose cluster environment claims nobody else starts processes would start a world of its own:
refused as in Lightning 2.6, with Lightning's exception type and key phrase.
"""

from __future__ import annotations

from typing import Any

import lightning
import pytest

import accelplug
from accelplug.errors import MisconfigurationException
from tests.callbacks.parity import make_module, quiet_lightning


def _ddp_trainer(framework: Any, tmp_path: Any, **extra: Any) -> Any:
    return framework.pytorch.Trainer(
        default_root_dir=tmp_path, strategy="ddp", accelerator="cpu", devices=2, barebones=True, **extra
    )


def test_ddp_from_an_interpreter_without_a_script_file_is_refused_naming_the_alternatives(tmp_path: Any) -> None:
    trainer = _ddp_trainer(accelplug, tmp_path)
    with pytest.raises(MisconfigurationException, match="not started from a script file") as info:
        trainer.fit(make_module(accelplug))
    assert "accelplug launch" in str(info.value)


@pytest.mark.parametrize("framework", [accelplug, lightning], ids=["accelplug", "lightning"])
def test_a_worker_whose_environment_claims_to_start_processes_is_refused_as_in_lightning(
    framework: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    class StartsNothingItself(framework.fabric.plugins.environments.LightningEnvironment):  # type: ignore[misc,name-defined]
        @property
        def creates_processes_externally(self) -> bool:
            return False

    monkeypatch.setenv("LOCAL_RANK", "1")
    with quiet_lightning(framework):
        trainer = _ddp_trainer(framework, tmp_path, plugins=[StartsNothingItself()])
        with pytest.raises(RuntimeError, match="launch new distributed processes with `local_rank > 0`"):
            trainer.fit(make_module(framework))
