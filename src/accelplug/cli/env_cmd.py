"""``accelplug env``: the facts a maintainer asks for first, in Markdown that pastes into an issue.

Nothing here initialises a device runtime: NVIDIA GPUs are read through NVML and torch's CUDA state
is reported (``cuda_initialized``) so a report proves it stayed untouched.
"""

from __future__ import annotations

import os
import platform
import sys
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from .models import AcceleratorEnv, ConfigReport, DeviceInfo, EnvReport

#: Variables (exact names) that change what accelplug or torch does with devices.
RELEVANT_ENV = (
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "PYTORCH_ENABLE_MPS_FALLBACK",
    "PYTORCH_MPS_HIGH_WATERMARK_RATIO",
    "PYTORCH_CUDA_ALLOC_CONF",
    "TORCH_DEVICE_BACKEND_AUTOLOAD",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "MASTER_ADDR",
    "MASTER_PORT",
    "WORLD_SIZE",
    "RANK",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
)
#: Prefixes of variables reported whole (never credentials: only accelplug's and NCCL's own knobs).
RELEVANT_PREFIXES = ("ACCELPLUG_", "NCCL_")


def _memory_total() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return None  # Windows has no sysconf


def _cuda_devices() -> tuple[list[DeviceInfo], dict[str, str]]:
    from .. import _nvml
    from .models import DeviceInfo

    try:
        gpus = _nvml.visible_gpus()
    except _nvml.NvmlUnavailable as exc:
        return [], {"nvml": str(exc)}
    devices = [DeviceInfo(index=g.index, name=g.name, total_memory_bytes=g.total_memory) for g in gpus]
    return devices, {"physical_indices": ",".join(str(g.physical_index) for g in gpus)}


def _mps_devices() -> tuple[list[DeviceInfo], dict[str, str]]:
    import torch

    from ..bench.host import cpu_model
    from .models import DeviceInfo

    recommended = int(torch.mps.recommended_max_memory())
    return [DeviceInfo(index=0, name=cpu_model() or "Apple GPU", total_memory_bytes=recommended)], {
        "memory": "recommended maximum working set (torch.mps.recommended_max_memory)"
    }


def _accelerator_env(cls: type[Accelerator]) -> AcceleratorEnv:
    from ..registry import get_registry
    from .models import AcceleratorEnv

    status = get_registry().status(cls)  # checked, and bounded in time for a plugin's accelerator
    reason = status.reason
    devices: list[DeviceInfo] = []
    details: dict[str, str] = {}
    if cls.name == "cuda":
        devices, details = _cuda_devices()  # names even when CUDA is hidden, to explain why
    elif cls.name == "mps" and reason is None:
        devices, details = _mps_devices()
    count = status.device_count
    return AcceleratorEnv(
        name=cls.name, available=reason is None, device_count=count, reason=reason, devices=devices, details=details
    )


def _config_report() -> ConfigReport:
    from ..config import config_path, explain_settings
    from ..errors import MisconfigurationException
    from .models import ConfigReport, SettingReport

    path = config_path()
    try:
        settings, origins, config = explain_settings()
    except MisconfigurationException as exc:  # a bug report must still be produced
        return ConfigReport(path=str(path), exists=path.exists(), settings=[], error=str(exc))
    rows = [SettingReport(key=k, value=getattr(settings, k), source=str(origins[k])) for k in origins]
    return ConfigReport(path=str(config.path), exists=config.exists, settings=rows, error=None)


def collect() -> EnvReport:
    """Gather the report; cheap, and safe to run before a process forks."""
    import torch

    from .. import __version__
    from ..accelerators.mps import is_rosetta_translated
    from ..registry import get_registry
    from .list_cmd import collect as collect_list
    from .models import EnvReport, PlatformInfo, PluginRecord, TorchInfo

    registry = get_registry()
    listed = collect_list()
    by_plugin: dict[str, list[str]] = {}
    for entry in registry.entries():
        by_plugin.setdefault(entry.source.plugin, []).append(entry.cls.name)
    plugins = [
        PluginRecord(
            plugin=p.plugin, distribution=p.distribution, version=p.version, accelerators=by_plugin.get(p.plugin, [])
        )
        for p in registry.plugins()
    ]
    environment = {k: v for k, v in sorted(os.environ.items()) if k in RELEVANT_ENV or k.startswith(RELEVANT_PREFIXES)}
    return EnvReport(
        accelplug=__version__,
        torch=TorchInfo(
            version=torch.__version__,
            cuda_build=torch.version.cuda,
            hip_build=torch.version.hip,
            mps_built=bool(torch.backends.mps.is_built()),
            debug_build=bool(torch.version.debug),
            cuda_initialized=bool(torch.cuda.is_initialized()),  # type: ignore[no-untyped-call]
        ),
        platform=PlatformInfo(
            python=platform.python_version(),
            python_implementation=platform.python_implementation(),
            executable=sys.executable,
            system=platform.system(),
            release=platform.release(),
            platform=platform.platform(),
            machine=platform.machine(),
            rosetta_translated=is_rosetta_translated(),
            cpu_count=os.cpu_count(),
            memory_total_bytes=_memory_total(),
        ),
        accelerators=[_accelerator_env(e.cls) for e in registry.entries()],
        plugins=plugins,
        failed_plugins=listed.failed_plugins,
        environment=environment,
        config=_config_report(),
    )


def _gib(n: int | None) -> str:
    return "unknown" if n is None else f"{n / 2**30:.1f} GiB"


def to_markdown(report: EnvReport) -> str:
    """The report as Markdown: bullet facts first, then one line per accelerator, plugin, variable."""
    t, p = report.torch, report.platform
    lines = [
        "## accelplug environment",
        "",
        f"- accelplug: {report.accelplug}",
        f"- torch: {t.version} (CUDA build: {t.cuda_build or 'no'}, ROCm build: {t.hip_build or 'no'}, "
        f"MPS built: {'yes' if t.mps_built else 'no'}, CUDA initialised: {'yes' if t.cuda_initialized else 'no'})",
        f"- Python: {p.python} ({p.python_implementation}) at {p.executable}",
        f"- OS: {p.platform} ({p.system} {p.release})",
        f"- machine: {p.machine}, Rosetta-translated: {'yes' if p.rosetta_translated else 'no'}",
        f"- CPUs: {p.cpu_count}, memory: {_gib(p.memory_total_bytes)}",
        "",
        "### Accelerators",
        "",
    ]
    for acc in report.accelerators:
        state = f"available, {acc.device_count} device(s)" if acc.available else f"unavailable: {acc.reason}"
        lines.append(f"- **{acc.name}**: {state}")
        for dev in acc.devices:
            lines.append(f"  - {acc.name}:{dev.index} {dev.name}, {_gib(dev.total_memory_bytes)}")
        for key, value in acc.details.items():
            lines.append(f"  - {key}: {value}")
    lines += ["", "### Plugins", ""]
    for plugin in report.plugins:
        dist = f"{plugin.distribution} {plugin.version or ''}".strip() if plugin.distribution else "no distribution"
        lines.append(f"- {plugin.plugin} ({dist}): {', '.join(plugin.accelerators) or 'no accelerators'}")
    for failed in report.failed_plugins:
        lines.append(f"- FAILED {failed.plugin} ({failed.distribution or 'no distribution'}): {failed.error}")
    lines += ["", "### Environment variables", ""]
    lines += [f"- `{k}={v}`" for k, v in report.environment.items()] or ["- none set"]
    c = report.config
    lines += ["", "### Configuration", "", f"- config file: {c.path} ({'found' if c.exists else 'not found'})"]
    if c.error:
        lines.append(f"- ERROR: {c.error}")
    lines += [f"- {s.key} = {s.value!r} ({s.source})" for s in c.settings]
    return "\n".join(lines)


def env(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (the EnvReport model) instead of Markdown.")
    ] = False,
) -> None:
    """Print an environment report to paste into a bug report (Markdown; --json for machines)."""
    import warnings

    from ..errors import PluginLoadWarning
    from .stdout_guard import stdout_reserved

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)  # listed in the report instead
        with stdout_reserved() as write:  # what plugins print goes to stderr, never into the report
            report = collect()
            write((report.model_dump_json(indent=2) if as_json else to_markdown(report)) + "\n")


def register(app: typer.Typer) -> None:
    app.command("env")(env)
