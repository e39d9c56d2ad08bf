"""What a run shows without set-up (``accelplug._console``), side by side with Lightning 2.6.6 where it has a view:
its INFO lines on standard error once, whether or not the program configured logging, and accelplug's own warnings
on one line."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

Run = Callable[..., subprocess.CompletedProcess[str]]

_FIT = (
    "import warnings\n"
    "{setup}"
    "import {package} as L\n"
    "from {package}.{demos} import BoringModel\n"
    "trainer = L.Trainer(max_epochs=1, limit_train_batches=2, limit_val_batches=1, logger={logger},\n"
    "                    enable_progress_bar=False, enable_model_summary=False, enable_checkpointing=False,\n"
    "                    default_root_dir={root!r})\n"
    "trainer.fit(BoringModel())\n"
)
_LINES = (
    "GPU available: False, used: False",
    "`Trainer(limit_val_batches=1)` was configured so 1 batch will be used.",
    "`Trainer.fit` stopped: `max_epochs=1` reached.",
)


def _fit(
    run_python: Run, root: str, package: str, setup: str = "", logger: bool = False
) -> subprocess.CompletedProcess[str]:
    demos = "demos" if package == "accelplug" else "pytorch.demos.boring_classes"
    result = run_python(_FIT.format(setup=setup, package=package, demos=demos, root=root, logger=logger))
    assert result.returncode == 0, result.stderr
    return result


@pytest.mark.parametrize("setup", ["", "import logging\nlogging.basicConfig(level=logging.INFO)\n"])
def test_the_info_lines_show_once_on_stderr_as_lightnings_do(run_python: Run, tmp_path: object, setup: str) -> None:
    pytest.importorskip("lightning", reason="compares with Lightning's output")
    seen = {}
    for package in ("lightning", "accelplug"):
        result = _fit(run_python, str(tmp_path), package if package == "accelplug" else "lightning", setup)
        seen[package] = [sum(line in row for row in result.stderr.splitlines()) for line in _LINES]
        assert not any(line in result.stdout for line in _LINES)
    assert seen["accelplug"] == [1, 1, 1]  # Lightning's, configured before its import, show twice
    assert all(seen["lightning"])


def test_a_program_can_silence_them_and_accelplugs_warnings_take_one_line(run_python: Run, tmp_path: object) -> None:
    setup = "import logging\nlogging.getLogger('accelplug').setLevel(logging.WARNING)\n"
    result = _fit(run_python, str(tmp_path), "accelplug", setup, logger=True)  # warns: 2 batches, logging every 50
    assert not any(line in result.stderr for line in _LINES)
    warning = next((row for row in result.stderr.splitlines() if "smaller than the logging interval" in row), "")
    assert warning, result.stderr
    assert "/accelplug/" in warning.split(": ", 1)[0] and ".py:" in warning.split(": ", 1)[0]
    assert "warnings.warn" not in result.stderr and "PossibleUserWarning" not in result.stderr  # no source line
