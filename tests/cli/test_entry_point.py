"""The real entry point: ``python -m accelplug`` in a process of its own, once per command.

The sweeps call ``accelplug.cli.main`` in the test process (``conftest.cli``); these tests make sure the
way users start it still reaches the same function with the same result. ``list``, ``config`` and a
refused option are here; the other commands' real processes are their own tests' business: ``env --json``
(``test_env.py``, CUDA never initialised), ``launch`` (``test_launch_cli.py``, workers under torchrun),
``bench`` (``test_bench.py``, the shared quick run and the terminal's progress bar), ``demo``
(``test_demo.py``, training to the accuracy bar).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from accelplug.cli.reports import ConfigReport, ListReport

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def test_python_dash_m_accelplug_lists_the_builtin_accelerators_as_json(cli_process: RunCli) -> None:
    result = cli_process("list", "--json")
    assert (result.returncode, result.stderr) == (0, "")
    assert {a.name for a in ListReport.model_validate_json(result.stdout).accelerators} >= {"cpu", "cuda", "mps"}


def test_config_written_by_one_process_is_shown_by_the_next(cli_process: RunCli, config_file: Path) -> None:
    written = cli_process("config", "--default", "--precision", "bf16")
    assert written.returncode == 0, written.stderr
    shown = cli_process("config", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    settings = {s.key: (s.value, s.source) for s in ConfigReport.model_validate_json(shown.stdout).settings}
    assert settings["precision"] == ("bf16-mixed", f"config file {config_file}, line 5")


def test_a_refused_option_is_exit_2_and_one_line_from_a_real_process(cli_process: RunCli) -> None:
    result = cli_process("config", "--default", "--devices", "abc")
    assert result.returncode == 2
    assert result.stderr.startswith("accelplug: error: devices='abc'")
    assert len(result.stderr.splitlines()) == 1
    assert "Traceback" not in result.stderr
