"""Entry-point discovery with real, separately pip-installed plugin distributions.

Each test reads what a child Python reports whose ``PYTHONPATH`` holds the distributions pip installed (see
the ``plugin_site`` fixture), so discovery goes through ``importlib.metadata`` exactly as in the field; tests
that read the same report with the same environment share one child (``_report``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPORT = """
import json, warnings
warnings.simplefilter("always")
from accelplug import get_registry
r = get_registry()
print(json.dumps({
    "names": r.names(),
    "available": r.available(),
    "failures": [{"plugin": f.plugin, "error": f.error, "distribution": f.distribution} for f in r.failures()],
    "cpu_source": r.source("cpu").plugin,
    "sources": {n: [r.source(n).plugin, r.source(n).distribution, r.source(n).version] for n in r.names()},
}))
"""


#: Reports already asked for, by plugin site and environment: seven tests read the same child's report, and
#: a child costs a torch import (seconds on the 2-core CI machine), so it runs once for all of them.
_REPORTS: dict[tuple[Path, tuple[tuple[str, str], ...]], tuple[dict, str]] = {}  # type: ignore[type-arg]


def _report(run_python, plugin_site: Path, **env: str) -> tuple[dict, str]:  # type: ignore[no-untyped-def, type-arg]
    key = (plugin_site, tuple(sorted(env.items())))
    if key not in _REPORTS:
        result = run_python(REPORT, pythonpath=plugin_site, env=env)
        assert result.returncode == 0, result.stderr
        _REPORTS[key] = json.loads(result.stdout), result.stderr
    report, stderr = _REPORTS[key]
    return json.loads(json.dumps(report)), stderr  # a copy: no test sees another's changes


def _failure(report: dict, plugin: str) -> dict:  # type: ignore[type-arg]
    matches = [f for f in report["failures"] if f["plugin"] == plugin]
    assert matches, f"{plugin} not among failures {report['failures']}"
    return matches[0]


def test_a_pip_installed_plugin_is_discovered_with_its_distribution(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    report, _ = _report(run_python, plugin_site)
    assert "fakegpu" in report["names"]
    assert report["sources"]["fakegpu"] == ["fakegpu", "accelplug-testplugin-good", "1.0.0"]


def test_auto_order_puts_the_plugin_above_the_cpu(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    report, _ = _report(run_python, plugin_site)
    assert report["available"] == ["fakegpu", "cpu"]


def test_a_plugin_that_fails_to_import_is_skipped_and_named(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    report, stderr = _report(run_python, plugin_site)
    failure = _failure(report, "broken_import")
    assert failure["distribution"] == "accelplug-testplugin-importerror"
    assert "ModuleNotFoundError" in failure["error"]
    assert "broken_import" in stderr and "accelplug-testplugin-importerror" in stderr


def test_a_plugin_whose_hook_raises_is_skipped_and_named(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    report, stderr = _report(run_python, plugin_site)
    failure = _failure(report, "broken_hook")
    assert "RuntimeError: driver exploded while probing" in failure["error"]
    assert "broken_hook" in stderr


def test_a_plugin_returning_a_non_accelerator_is_skipped_and_named(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    report, _ = _report(run_python, plugin_site)
    failure = _failure(report, "not_accelerator")
    assert "NotAnAccelerator is not an accelplug.Accelerator subclass" in failure["error"]
    assert "bogus" not in report["names"]


def test_a_plugin_clashing_with_a_builtin_never_replaces_it(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    report, _ = _report(run_python, plugin_site)
    failure = _failure(report, "clash_cpu")
    assert "'cpu'" in failure["error"] and "clashes" in failure["error"]
    assert report["cpu_source"] == "builtin"


def test_broken_plugins_leave_the_rest_of_the_registry_working(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    report, _ = _report(run_python, plugin_site)
    assert report["names"] == ["cpu", "cuda", "fakegpu", "mps"]
    assert len(report["failures"]) == 4


def test_disable_autoload_loads_builtins_only(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    report, stderr = _report(run_python, plugin_site, ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD="1")
    assert report["names"] == ["cpu", "cuda", "mps"]
    assert report["failures"] == []
    assert "skipped" not in stderr


def test_accelplug_plugins_loads_only_the_named_plugins(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    report, _ = _report(run_python, plugin_site, ACCELPLUG_PLUGINS="fakegpu")
    assert report["names"] == ["cpu", "cuda", "fakegpu", "mps"]
    assert report["failures"] == []


def test_auto_selects_the_plugin_accelerator(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    code = "from accelplug import Trainer\nt = Trainer()\nprint(t.accelerator.name, t.root_device)"
    result = run_python(code, pythonpath=plugin_site, env={"ACCELPLUG_PLUGINS": "fakegpu"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["fakegpu", "cpu"]


def test_accelplug_accelerator_env_makes_auto_choose_the_cpu(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    code = "from accelplug import Trainer\nt = Trainer()\nprint(t.accelerator.name)\nprint(t.selection.reason)"
    result = run_python(
        code, pythonpath=plugin_site, env={"ACCELPLUG_PLUGINS": "fakegpu", "ACCELPLUG_ACCELERATOR": "cpu"}
    )
    assert result.returncode == 0, result.stderr
    name, reason = result.stdout.splitlines()
    assert name == "cpu"
    assert "ACCELPLUG_ACCELERATOR='cpu'" in reason
