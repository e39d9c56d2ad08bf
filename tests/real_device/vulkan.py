"""Getting the real device ready: lavapipe from Debian, torchvulkan from the ``test`` extra, the bridge by pip.

torchvulkan (PyPI, MIT) renames torch's PrivateUse1 slot to ``vulkan`` and runs its kernels as Vulkan compute
shaders; Mesa's lavapipe is a Vulkan driver that runs on the CPU, so the device is real everywhere Debian's
``mesa-vulkan-drivers`` installs. A process holds one PrivateUse1 backend, so the device lives in child
processes only (``vulkan_child.py``), never in the test process.

``TESTS_VULKAN``: ``auto`` (default: install lavapipe with ``scripts/vulkan/install.sh`` when root with apt-get,
else skip with the reason), ``require`` (CI: what would skip fails instead) or ``off``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO / "scripts" / "vulkan" / "install.sh"
PLUGINS = REPO / "plugins"
#: The bridge to torch.accelerator, and an accelplug accelerator on the host CPU (for Lightning's side).
DISTRIBUTIONS = ("accelplug-torch-accelerator", "accelplug-example")
ICD = Path("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
MODE_ENV = "TESTS_VULKAN"
MODES = ("auto", "require", "off")


class VulkanUnavailable(Exception):
    """The real device cannot run here; the message says why."""


def mode() -> str:
    value = os.environ.get(MODE_ENV, "auto").strip().lower() or "auto"
    if value not in MODES:
        raise ValueError(f"{MODE_ENV}={value!r} is invalid: expected one of {', '.join(MODES)}")
    return value


@dataclass(frozen=True)
class Device:
    """What a child process needs to see the device: the ICD file and the folder the bridge is installed in."""

    icd: Path
    site: Path
    #: How lavapipe came to be here, for pytest's summary.
    installation: str

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The plugins' environment, with lavapipe as the only Vulkan driver."""
        return plugin_env(self.site, {"VK_ICD_FILENAMES": str(self.icd), **(extra or {})})


def _install_lavapipe(timeout: float = 600) -> str:
    if ICD.exists():
        return "lavapipe already installed"
    if mode() == "off":
        raise VulkanUnavailable(f"lavapipe is not installed ({ICD} is missing) and {MODE_ENV}=off")
    if not sys.platform.startswith("linux"):
        raise VulkanUnavailable("Mesa's lavapipe is installed from Debian's packages: Linux only")
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise VulkanUnavailable(
            f"lavapipe is not installed ({ICD} is missing); `sudo {INSTALL_SCRIPT.relative_to(REPO)}` installs it "
            "(needs root and apt-get)"
        )
    begin = time.perf_counter()
    result = subprocess.run(["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=timeout)
    output = (result.stdout + result.stderr).strip()
    if result.returncode != 0 or not ICD.exists():
        raise VulkanUnavailable(
            f"{INSTALL_SCRIPT.relative_to(REPO)} failed (exit {result.returncode}) after "
            f"{time.perf_counter() - begin:.0f} s: {output[-2000:]}"
        )
    return output.splitlines()[-1] if output else "lavapipe installed"


def _check_torchvulkan(icd: Path) -> None:
    probe = (
        "import torch, torchvulkan; assert torchvulkan.is_available(); print(torch.accelerator.current_accelerator())"
    )
    probe = probe.replace("; ", "\n")
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "VK_ICD_FILENAMES": str(icd)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0 or result.stdout.strip() != "vulkan":
        raise VulkanUnavailable(
            "torchvulkan does not give a vulkan device here (it comes with accelplug's `test` extra: "
            f"pip install -c constraints.txt -e '.[test]'): {(result.stdout + result.stderr).strip()[-1500:]}"
        )


def plugin_site(basetemp: Path) -> Path:
    """The plugins pip-installed into a site built once per test session and shared by its xdist workers
    (``tests/plugin_kit/sites.py``): the device's tests and the example plugin's Lightning run use the same one.
    Nothing may write into it."""
    from tests.plugin_kit.sites import shared_site

    return shared_site(basetemp, "real_device_plugins", [PLUGINS / name for name in DISTRIBUTIONS])


def plugin_env(site: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment with the installed plugins importable and autoloaded (the suite turns that off)."""
    env = {k: v for k, v in os.environ.items() if k != "ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD"}
    env.update(
        ACCELPLUG_PLUGINS=",".join(("torch_accelerator", "example")),
        PYTHONPATH=os.pathsep.join(filter(None, [str(site), str(REPO), env.get("PYTHONPATH")])),
        OMP_NUM_THREADS="1",
        TORCHVULKAN_PIPELINE_CACHE="0",  # nothing written under the home folder
    )
    env.update(extra or {})
    return env


def prepare(basetemp: Path) -> Device:
    """lavapipe installed (when missing and possible), torchvulkan checked, the plugins pip-installed (the session's
    :func:`plugin_site`, ``basetemp`` being pytest's)."""
    if mode() == "off":
        raise VulkanUnavailable(f"{MODE_ENV}=off")
    installation = _install_lavapipe()
    _check_torchvulkan(ICD)
    return Device(icd=ICD, site=plugin_site(basetemp), installation=installation)
