"""``accelplug list``: every accelerator with its source and availability, then failed plugins."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from accelplug.cli.reports import ListReport

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def test_list_json_validates_and_names_every_builtin(cli: RunCli) -> None:
    result = cli("list", "--json")
    assert result.returncode == 0, result.stderr
    report = ListReport.model_validate_json(result.stdout)
    by_name = {a.name: a for a in report.accelerators}
    assert set(by_name) >= {"cpu", "cuda", "mps"}
    cpu = by_name["cpu"]
    assert cpu.available and cpu.reason is None and cpu.device_count >= 1
    assert (cpu.plugin, cpu.distribution) == ("builtin", "accelplug")
    assert by_name["mps"].strategies == ["single_device"]
    for acc in report.accelerators:
        assert (acc.reason is None) == acc.available
    assert report.available[-1] == "cpu"
    assert report.failed_plugins == []


def test_list_table_shows_unavailable_reasons(cli: RunCli) -> None:
    result = cli("list")
    assert result.returncode == 0, result.stderr
    assert "Registered accelerators" in result.stdout
    report = ListReport.model_validate_json(cli("list", "--json").stdout)
    for acc in report.accelerators:
        if acc.reason:
            assert f"{acc.name} unavailable:" in result.stdout
    assert "Failed plugins: none" in result.stdout


def test_list_shows_plugin_distributions_and_failed_plugins(cli_process: RunCli, plugin_site: Path) -> None:
    """A process of its own: the plugins are found on its ``PYTHONPATH``, through their entry points."""
    env = {
        "ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "",
        "ACCELPLUG_PLUGINS": "broken_import,fakegpu",
        "PYTHONPATH": str(plugin_site),
    }
    result = cli_process("list", "--json", env=env)
    assert result.returncode == 0, result.stderr
    report = ListReport.model_validate_json(result.stdout)
    fakegpu = next(a for a in report.accelerators if a.name == "fakegpu")
    assert (fakegpu.plugin, fakegpu.distribution, fakegpu.version) == ("fakegpu", "accelplug-testplugin-good", "1.0.0")
    assert report.available[0] == "fakegpu"
    failed = {f.plugin: f for f in report.failed_plugins}
    assert "broken_import" in failed
    assert failed["broken_import"].distribution == "accelplug-testplugin-importerror"
    assert "import failed" in failed["broken_import"].error
    table = cli_process("list", env=env)
    assert "Plugins that failed to load" in table.stdout
    assert "broken_import" in table.stdout
