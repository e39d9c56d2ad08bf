"""A misbehaving plugin never hangs, kills or corrupts the host, and is always reported.

Eight real distributions (``tests/plugin_dists/misbehaving``), installed by pip once for the module,
each asked by ``accelplug list --json``, ``Trainer(accelerator="auto")`` and
``get_registry().available()`` in processes of their own run four at a time (see ``misbehaving_plugins.py``,
which also prints the matrix as a script). A few more runs check what the matrix does not: the time
of a slow import in the table, ``accelplug launch`` with defaults, the allowlist and the trace switch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from misbehaving_plugins import (
    AVAILABLE,
    COMMANDS,
    KINDS,
    TRAINER,
    Run,
    child_env,
    install,
    matrix_jobs,
    run_all,
    verdict,
)

from accelplug.cli.reports import EnvReport, ListReport

pytestmark = pytest.mark.slow

IMPORTED = """
import sys
print(json.dumps(sorted(m for m in sys.modules if m.startswith("ap_test_"))))
"""

LAUNCHED_SCRIPT = """
import os
from accelplug import Trainer
t = Trainer()
print("LAUNCHED", t.accelerator.name, t.num_devices, t.strategy.name, os.environ["WORLD_SIZE"])
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install(tmp_path_factory.mktemp("misbehaving_site"))


@pytest.fixture(scope="module")
def runs(site: Path) -> dict[str, Run]:
    """Every run of this module, started together so that their waiting overlaps."""
    script = site / "train_defaults.py"
    script.write_text(LAUNCHED_SCRIPT)
    single = {"ACCELPLUG_PLUGINS": "single_device_only"}
    slow_probe = {"ACCELPLUG_PLUGINS": "slow_probe", "ACCELPLUG_PLUGIN_TIMEOUT_S": "1"}
    extra = [
        ("slow import table", ["-m", "accelplug", "list"], child_env(site, {"ACCELPLUG_PLUGINS": "slow_import"})),
        ("launch defaults", ["-m", "accelplug", "launch", str(script)], child_env(site, single)),
        ("allowlist typo", ["-c", AVAILABLE + IMPORTED], child_env(site, {"ACCELPLUG_PLUGINS": "slow_imprt"})),
        ("trace", ["-c", AVAILABLE], child_env(site, {**single, "ACCELPLUG_TRACE_PLUGINS": "1"})),
        ("all at once", ["-c", TRAINER], child_env(site, {"ACCELPLUG_PLUGIN_TIMEOUT_S": "1"})),
        ("asks registry", ["-c", AVAILABLE], child_env(site, {"ACCELPLUG_PLUGINS": "asks_registry"})),
        *[
            (f"{command[0]} slow probe", ["-m", "accelplug", *command], child_env(site, slow_probe))
            for command in (
                ["config", "--accelerator", "slowprobe"],
                ["bench", "--quick", "--accelerators", "slowprobe"],
            )
        ],
        (
            "env",
            ["-m", "accelplug", "env", "--json"],
            child_env(site, {"ACCELPLUG_PLUGINS": "noisy_import,raising_probe"}),
        ),
    ]
    return run_all([*matrix_jobs(site), *extra])


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_the_run_ends_in_time_exits_0_reports_the_plugin_and_auto_picks_a_working_accelerator(
    runs: dict[str, Run], kind: str, command: str
) -> None:
    result = runs[f"{kind} | {command}"]
    assert verdict(KINDS[kind], command, result) == "ok", result.stderr[-3000:]


def test_a_hung_is_available_costs_the_bound_once_and_never_again(runs: dict[str, Run]) -> None:
    report = json.loads(runs["slow is_available | available()"].stdout.splitlines()[-1])
    assert 0.9 < report["first_s"] < 10  # the plugin sleeps 600 s; the bound is 1 s
    assert report["again_s"] < 0.5
    assert report["available"] == report["again"] == ["cpu"]


def test_list_json_stays_valid_when_a_plugin_prints_20_mb_at_import(runs: dict[str, Run]) -> None:
    result = runs["20 MB printed at import | list --json"]
    report = ListReport.model_validate_json(result.stdout)
    assert "noisy" in report.available
    assert "noise from print" in result.stderr and "noise written to fd 1" in result.stderr
    assert len(result.stderr) >= 20 * 2**20 - 64


def test_a_slow_import_is_listed_with_its_time(runs: dict[str, Run]) -> None:
    report = ListReport.model_validate_json(runs["2 s import | list --json"].stdout)
    slow = next(a for a in report.accelerators if a.name == "slowimport")
    assert slow.available and slow.load_seconds is not None and slow.load_seconds >= 2
    table = runs["slow import table"]
    assert table.returncode == 0, table.stderr
    assert "slow plugin: plugin 'slow_import' (accelplug-testplugin-slowimport 1.0.0) took 2." in table.stdout


def test_each_junk_device_count_is_reported_with_the_accelerator_and_the_value(runs: dict[str, Run]) -> None:
    report = ListReport.model_validate_json(runs["junk device_count | list --json"].stdout)
    errors = {f.error.split("'")[1] for f in report.failed_plugins if f.plugin == "junk_count"}
    assert errors == {"junkstr", "junknone", "junkneg"}
    unavailable = {a.name: a.reason for a in report.accelerators if not a.available}
    assert "misbehaved: junkneg.device_count() returned -1" in (unavailable["junkneg"] or "")


def test_a_misspelt_hook_is_named_with_the_hooks_that_exist(runs: dict[str, Run]) -> None:
    report = ListReport.model_validate_json(runs["misspelt hook name | list --json"].stdout)
    (failure,) = [f for f in report.failed_plugins if f.plugin == "misspelt_hook"]
    assert "register_accelerators, register_strategies, register_precisions" in failure.error
    assert "misspelt" not in [a.name for a in report.accelerators]


def test_auto_says_which_accelerator_it_skipped_and_why(runs: dict[str, Run]) -> None:
    why = runs["raising is_available | Trainer(auto)"].stdout.splitlines()[-1]
    assert "skipped because their plugin misbehaved: 'raisingprobe'" in why
    assert "the NPU driver is not loaded" in why


def test_a_default_trainer_uses_one_device_of_a_single_device_accelerator(runs: dict[str, Run]) -> None:
    result = runs["single-device-only, 2 devices | Trainer(auto)"]
    assert "PICKED toyaccel 1 single_device" in result.stdout


def test_launch_with_defaults_runs_one_process_on_a_single_device_accelerator(runs: dict[str, Run]) -> None:
    result = runs["launch defaults"]
    assert result.returncode == 0, result.stderr[-3000:]
    assert "LAUNCHED toyaccel 1 single_device 1" in result.stdout


def test_every_misbehaving_plugin_at_once_still_leaves_a_working_auto(runs: dict[str, Run]) -> None:
    result = runs["all at once"]
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.seconds < 60
    picked = next(line for line in result.stdout.splitlines() if line.startswith("PICKED"))
    assert picked.split()[1] in ("toyaccel", "slowimport")  # working ones; toyaccel ranks first
    for kind in KINDS.values():
        if kind.misbehaves:
            assert kind.entry_point in result.stderr


def test_an_allowlist_naming_no_installed_plugin_warns_with_a_close_match(runs: dict[str, Run]) -> None:
    result = runs["allowlist typo"]
    assert result.returncode == 0, result.stderr
    *_, available, imported = result.stdout.splitlines()
    assert json.loads(available)["available"] == ["cpu"]
    assert json.loads(imported) == []  # no plugin was imported: pluggy blocked every one not named
    assert "ACCELPLUG_PLUGINS names 'slow_imprt'" in result.stderr
    assert "Did you mean 'slow_import'?" in result.stderr
    assert "'exits_at_import'" in result.stderr  # the installed names are listed


def test_the_trace_switch_prints_hook_calls_and_answers(runs: dict[str, Run]) -> None:
    stderr = runs["trace"].stderr
    assert "accelplug trace: register_accelerators() called on plugin(s) single_device_only" in stderr
    assert "accelplug trace: register_accelerators() of single_device_only -> [[<class " in stderr
    assert "accelplug trace: toyaccel.is_available() -> True" in stderr
    assert "accelplug trace: toyaccel.device_count() -> 2" in stderr


def test_a_plugin_may_look_at_the_registry_while_it_is_loaded(runs: dict[str, Run]) -> None:
    result = runs["asks registry"]
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    assert report["available"] == ["cpu", "asker"]
    assert report["failures"] == []  # a hook that waited for the registry would have timed out, a failure


def test_env_json_stays_valid_and_reports_a_misbehaving_plugin(runs: dict[str, Run]) -> None:
    result = runs["env"]
    assert result.returncode == 0, result.stderr[-3000:]
    report = EnvReport.model_validate_json(result.stdout)
    raising = next(a for a in report.accelerators if a.name == "raisingprobe")
    assert not raising.available and "the NPU driver is not loaded" in (raising.reason or "")
    assert any(f.plugin == "raising_probe" for f in report.failed_plugins)


@pytest.mark.parametrize("command", ["config", "bench"])
def test_config_and_bench_ask_a_hanging_plugin_within_the_bound_and_say_so(runs: dict[str, Run], command: str) -> None:
    result = runs[f"{command} slow probe"]
    assert result.returncode == 2 and result.seconds < 30, (result.seconds, result.stderr[-3000:])
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("accelplug: error: accelerator='slowprobe' cannot be used on this machine")
    assert "slowprobe.is_available() did not return within 1" in error and "Traceback" not in result.stderr
