"""The plugin distributions under ``plugins/`` install with pip and pass their own tests.

Each distribution is copied out of the source tree (so a build leaves nothing behind), installed by
pip into one ``--target`` folder, and used from child processes whose ``PYTHONPATH`` holds that
folder: accelplug finds the plugins through their ``accelplug`` entry points, exactly as after a
``pip install``. Nothing here imports a plugin by path. The registry reports come from children forked
from a server that imported torch once (``tests/warm_python.py``); ``accelplug list`` and each
distribution's own tests run as real processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.plugin_kit.sites import install_site
from tests.warm_python import WarmPython

REPO = Path(__file__).resolve().parents[2]
PLUGINS = REPO / "plugins"
DISTRIBUTIONS = {
    "accelplug-example": "example",
    "accelplug-xpu": "xpu",
    "accelplug-torch-accelerator": "torch_accelerator",
    "accelplug-xla": "xla",
}


@pytest.fixture(scope="session")
def plugin_copies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin source trees, copied without build leftovers."""
    root = tmp_path_factory.mktemp("plugin_sources")
    for name in DISTRIBUTIONS:
        shutil.copytree(
            PLUGINS / name,
            root / name,
            ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", ".pytest_cache"),
        )
    return root


@pytest.fixture(scope="session")
def installed_plugins(plugin_copies: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the plugin distributions, installed by pip (from wheels their own backends built)."""
    return install_site(tmp_path_factory.mktemp("plugins_site"), [plugin_copies / name for name in DISTRIBUTIONS])


def test_pip_installs_each_distribution_with_its_entry_point(installed_plugins: Path) -> None:
    for distribution, entry_point in DISTRIBUTIONS.items():
        dist_info = next(installed_plugins.glob(f"{distribution.replace('-', '_')}-*.dist-info"))
        entry_points = (dist_info / "entry_points.txt").read_text()
        assert "[accelplug]" in entry_points
        assert f"{entry_point} = " in entry_points


def _plugin_test_env(site: Path) -> dict[str, str]:
    """This environment with plugin autoloading on (the suite turns it off) and ``site`` importable."""
    env = {k: v for k, v in os.environ.items() if k != "ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return env


@pytest.mark.slow
@pytest.mark.parametrize("distribution", sorted(DISTRIBUTIONS))
def test_each_plugin_passes_its_own_tests_once_installed(
    distribution: str, installed_plugins: Path, plugin_copies: Path
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"],
        cwd=plugin_copies / distribution,
        env=_plugin_test_env(installed_plugins),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{distribution}'s tests failed:\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"
    assert " passed" in result.stdout
    assert "failed" not in result.stdout.splitlines()[-1]


_REGISTRY_REPORT = """
import json
from accelplug import get_registry
registry = get_registry()
print(json.dumps({
    "names": registry.names(),
    "available": registry.available(),
    "sources": {n: [registry.source(n).plugin, registry.source(n).distribution] for n in registry.names()},
    "failures": [str(f) for f in registry.failures()],
}))
"""


@pytest.fixture(scope="module")
def warm_python() -> Iterator[WarmPython]:
    """Children with torch already imported (``tests/warm_python.py``): accelplug, its registry and every plugin
    are imported fresh in each, from the site on its ``PYTHONPATH``, without paying torch's import each time."""
    python = WarmPython()
    yield python
    python.close()


def _registry_report(python: WarmPython, site: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    result = python.run(["-c", _REGISTRY_REPORT], env={**_plugin_test_env(site), **(env or {})}, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    report: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


def test_the_registry_finds_every_installed_plugin_through_its_entry_point(
    installed_plugins: Path, warm_python: WarmPython
) -> None:
    report = _registry_report(warm_python, installed_plugins)
    assert report["names"] == ["cpu", "cuda", "example", "mps", "torch_accelerator", "tpu", "xla", "xpu"]
    assert report["failures"] == []
    assert report["sources"] == {
        "cpu": ["builtin", "accelplug"],
        "cuda": ["builtin", "accelplug"],
        "mps": ["builtin", "accelplug"],
        "example": ["example", "accelplug-example"],
        "xpu": ["xpu", "accelplug-xpu"],
        "torch_accelerator": ["torch_accelerator", "accelplug-torch-accelerator"],
        "xla": ["xla", "accelplug-xla"],
        "tpu": ["xla", "accelplug-xla"],
    }


def test_the_example_is_available_but_auto_never_prefers_it_over_the_cpu(
    installed_plugins: Path, warm_python: WarmPython
) -> None:
    available = _registry_report(warm_python, installed_plugins)["available"]
    assert isinstance(available, list)
    assert available.index("cpu") < available.index("example")


def test_accelplug_plugins_loads_only_the_named_plugins(installed_plugins: Path, warm_python: WarmPython) -> None:
    report = _registry_report(warm_python, installed_plugins, {"ACCELPLUG_PLUGINS": "example,xpu"})
    assert report["names"] == ["cpu", "cuda", "example", "mps", "xpu"]


def test_disabling_autoload_keeps_only_the_builtins(installed_plugins: Path, warm_python: WarmPython) -> None:
    report = _registry_report(warm_python, installed_plugins, {"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert report["names"] == ["cpu", "cuda", "mps"]


def test_accelplug_list_shows_each_plugin_with_its_distribution_and_reason(installed_plugins: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "accelplug", "list", "--json"],
        env=_plugin_test_env(installed_plugins),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)["accelerators"]}
    for distribution, plugin in DISTRIBUTIONS.items():
        assert rows[plugin]["plugin"] == plugin
        assert rows[plugin]["distribution"] == distribution
    assert rows["example"]["available"] is True
    assert rows["example"]["device_count"] == 1
    if not rows["xpu"]["available"]:
        assert "XPU" in rows["xpu"]["reason"] or "Intel GPU" in rows["xpu"]["reason"]
    if not rows["torch_accelerator"]["available"]:
        assert "torch" in rows["torch_accelerator"]["reason"]
    for name in ("xla", "tpu"):  # torch_xla needs its own environment (docs/plugins/xla.md)
        assert rows[name]["available"] is False
        assert "torch_xla" in rows[name]["reason"]
