"""``accelplug env``: the facts a maintainer asks for first, in Markdown that pastes into an issue.

Beside accelplug's own view (each accelerator with the cause and remedy when it is unavailable, the
plugins, the settings and where each comes from, the relevant variables) it carries what
``python -m torch.utils.collect_env`` and ``accelerate env`` show: the OS distribution and C
library, the CPU model, memory, the NVIDIA driver, the CUDA runtime, cuDNN and NCCL versions of this
torch, and the versions of the packages that change how training behaves.

Nothing here initialises a device runtime: NVIDIA GPUs are read through NVML and the driver version
from ``/proc/driver/nvidia/version``; cuDNN and NCCL report the versions of the libraries torch
loads, which needs no CUDA context. ``cuda_initialized`` is read last, so a report proves it stayed
untouched by everything above it.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from ..registry import AcceleratorRegistry
    from .reports import AcceleratorEnv, ClusterEnvReport, ConfigReport, DeviceInfo, EnvReport, TorchInfo

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
    "GROUP_RANK",
    "NODE_RANK",
    "TORCHELASTIC_RUN_ID",
    # what the cluster environments read (accelplug.environments): ranks and job ids, no credentials
    "SLURM_JOB_ID",
    "SLURM_JOB_NAME",
    "SLURM_STEP_ID",
    "SLURM_NTASKS",
    "SLURM_NTASKS_PER_NODE",
    "SLURM_PROCID",
    "SLURM_LOCALID",
    "SLURM_NODEID",
    "SLURM_NNODES",
    "SLURM_NODELIST",
    "SLURM_TASKS_PER_NODE",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "PMI_SIZE",
    "PMI_RANK",
    "MPI_LOCALRANKID",
    "LSB_JOBID",
    "JSM_NAMESPACE_SIZE",
    "JSM_NAMESPACE_RANK",
    "JSM_NAMESPACE_LOCAL_RANK",
)
#: Prefixes of variables reported whole (never credentials: only accelplug's and NCCL's own knobs).
RELEVANT_PREFIXES = ("ACCELPLUG_", "NCCL_")
#: Distributions whose version changes what a training script does, reported when installed.
RELEVANT_PACKAGES = (
    "numpy",
    "lightning",
    "pytorch-lightning",
    "accelerate",
    "transformers",
    "torchvision",
    "torchaudio",
    "torchmetrics",
    "triton",
    "pluggy",
    "pydantic",
    "pydantic-settings",
    "typer",
    "rich",
    "platformdirs",
    "scikit-learn",
    "matplotlib",
    "tensorboard",
    "nvidia-ml-py",
)
NVIDIA_DRIVER_FILE = Path("/proc/driver/nvidia/version")
_DRIVER_VERSION = re.compile(r"\b(\d{2,}\.\d+(?:\.\d+)*)\b")


def _memory_total() -> int | None:
    """Physical memory from ``sysconf`` (pages x page size), exactly what the kernel reports.

    Chosen over psutil: the standard library gives the same number on Linux and macOS (psutil
    reads the same kernel counter), and psutil would be a compiled dependency for one figure. Windows,
    which has no ``sysconf``, is not a platform accelplug supports; it reports "unknown".
    """
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return None


def _os_name() -> str | None:
    """The distribution and its version, as a person names it."""
    system = platform.system()
    if system == "Darwin":
        version = platform.mac_ver()[0]
        return f"macOS {version}" if version else "macOS"
    if system == "Windows":
        return f"Windows {platform.release()} ({platform.version()})"
    try:
        release = platform.freedesktop_os_release()
    except OSError:
        return None
    return release.get("PRETTY_NAME") or " ".join(filter(None, (release.get("NAME"), release.get("VERSION")))) or None


def _libc() -> str | None:
    name, version = platform.libc_ver()
    return f"{name} {version}" if name else None


def _cpu_model() -> str | None:
    from ..bench.host import cpu_model

    return cpu_model() or platform.processor() or None


def nvidia_driver_version(path: Path = NVIDIA_DRIVER_FILE) -> str | None:
    """The NVIDIA kernel driver's version, read from the file the driver writes (no NVML, no CUDA).

    Where that file does not exist (no driver, or not Linux), NVIDIA's own binding ``pynvml``
    (the ``nvidia-ml-py`` distribution) is asked when it is installed.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return _driver_from_pynvml()
    first = next((line for line in text.splitlines() if line.startswith("NVRM")), "")
    match = _DRIVER_VERSION.search(first.split("Module", 1)[-1])
    return match.group(1) if match else None


def _driver_from_pynvml() -> str | None:
    try:
        import pynvml  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # an NVML error of any kind means: no driver to report
        return None
    return version.decode() if isinstance(version, bytes) else str(version)


def _cudnn_version(torch: ModuleType) -> str | None:
    """cuDNN's version number as text (9.x counts major*10000, 8.x major*1000)."""
    try:
        if not torch.backends.cudnn.is_available():
            return None
        number = torch.backends.cudnn.version()
    except (RuntimeError, OSError, AttributeError):
        return None
    if not number:
        return None
    major, rest = divmod(int(number), 10000 if number >= 90000 else 1000)
    return f"{major}.{rest // 100}.{rest % 100}"


def _nccl_version(torch: ModuleType) -> str | None:
    if not (torch.version.cuda or torch.version.hip):
        return None  # a CPU or MPS build has no NCCL
    try:
        version = torch.cuda.nccl.version()
    except (RuntimeError, OSError, AttributeError, TypeError):
        return None
    if isinstance(version, tuple):
        return ".".join(str(part) for part in version[:3]) + "".join(f"-{p}" for p in version[3:])
    return str(version)


def _torch_info(torch: ModuleType) -> TorchInfo:
    from .reports import TorchInfo

    cudnn, nccl = _cudnn_version(torch), _nccl_version(torch)
    return TorchInfo(
        version=torch.__version__,
        cuda_build=torch.version.cuda,
        hip_build=torch.version.hip,
        mps_built=bool(torch.backends.mps.is_built()),
        debug_build=bool(torch.version.debug),
        cudnn=cudnn,
        nccl=nccl,
        num_threads=torch.get_num_threads(),
        cuda_initialized=bool(torch.cuda.is_initialized()),  # read after the queries above, on purpose
    )


def _package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in RELEVANT_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _cuda_devices() -> tuple[list[DeviceInfo], dict[str, str]]:
    from ..hardware import _nvml
    from .reports import DeviceInfo

    try:
        gpus = _nvml.visible_gpus()
    except _nvml.NvmlUnavailable as exc:
        return [], {"nvml": str(exc)}
    devices = [DeviceInfo(index=g.index, name=g.name, total_memory_bytes=g.total_memory) for g in gpus]
    return devices, {"physical_indices": ",".join(str(g.physical_index) for g in gpus)}


def _mps_devices() -> tuple[list[DeviceInfo], dict[str, str]]:
    import torch

    from ..bench.host import cpu_model
    from .reports import DeviceInfo

    recommended = int(torch.mps.recommended_max_memory())
    return [DeviceInfo(index=0, name=cpu_model() or "Apple GPU", total_memory_bytes=recommended)], {
        "memory": "recommended maximum working set (torch.mps.recommended_max_memory)"
    }


def _accelerator_env(cls: type[Accelerator]) -> AcceleratorEnv:
    from ..registry import get_registry
    from .reports import AcceleratorEnv

    status = get_registry().status(cls)  # checked, and bounded in time for a plugin's accelerator
    reason = status.reason
    devices: list[DeviceInfo] = []
    details: dict[str, str] = {}
    if cls.name == "cuda":
        devices, details = _cuda_devices()  # names even when CUDA is hidden, to explain why
    elif cls.name == "mps" and reason is None:
        devices, details = _mps_devices()
    elif reason is None:
        details = _capability_details(cls.device_type)
    count = status.device_count
    return AcceleratorEnv(
        name=cls.name, available=reason is None, device_count=count, reason=reason, devices=devices, details=details
    )


def _capability_details(device_type: str) -> dict[str, str]:
    """For an out-of-tree (PrivateUse1) device: each optional capability and the function that serves it, or
    why it is missing (:mod:`accelplug.hardware.capabilities`; read without starting the device's runtime)."""
    from ..hardware.capabilities import capabilities

    found = capabilities(device_type)
    if not found.is_privateuse1():
        return {}
    return {f"capability {c.name}": c.describe().split(": ", 1)[1] for c in found.report()}


def _config_report() -> ConfigReport:
    from ..config import config_path, explain_settings
    from ..errors import MisconfigurationException
    from .reports import ConfigReport, SettingReport

    path = config_path()
    try:
        settings, origins, config = explain_settings()
    except MisconfigurationException as exc:  # a bug report must still be produced
        return ConfigReport(path=str(path), exists=path.exists(), settings=[], error=str(exc))
    rows = [SettingReport(key=k, value=getattr(settings, k), source=str(origins[k])) for k in origins]
    return ConfigReport(path=str(config.path), exists=config.exists, settings=rows, error=None)


def _cluster_environment(registry: AcceleratorRegistry) -> ClusterEnvReport:
    """The detected cluster environment and its answers; a wrong launcher variable is reported, not raised."""
    from ..errors import MisconfigurationException
    from .reports import ClusterEnvReport

    registered = registry.environment_names()
    found = registry.detect_environment()
    if found is None:
        return ClusterEnvReport(detected=None, registered=registered)
    report = ClusterEnvReport(
        detected=found.name,
        description=found.description,
        plugin=registry.environment_source(found.name).plugin,
        registered=registered,
    )
    try:
        facts = found().facts()
    except MisconfigurationException as exc:
        return report.model_copy(update={"error": str(exc)})
    answers = ("world_size", "global_rank", "local_rank", "node_rank", "main_address", "main_port")
    return report.model_copy(update={name: getattr(facts, name) for name in answers})


def collect() -> EnvReport:
    """Gather the report; cheap, and safe to run before a process forks."""
    import torch

    from .. import __version__
    from ..accelerators.mps import is_rosetta_translated
    from ..envvars import check_unknown_variables
    from ..registry import get_registry
    from .list_cmd import collect as collect_list
    from .reports import EnvReport, PlatformInfo, PluginRecord

    registry = get_registry()
    cluster = _cluster_environment(registry)  # first, so a plugin's failing detect() is among the failures
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
    accelerators = [_accelerator_env(e.cls) for e in registry.entries()]
    platform_info = PlatformInfo(
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
        os_name=_os_name(),
        libc=_libc(),
        cpu_model=_cpu_model(),
        nvidia_driver=nvidia_driver_version(),
    )
    return EnvReport(
        accelplug=__version__,
        torch=_torch_info(torch),  # last: it checks that nothing above initialised CUDA
        platform=platform_info,
        accelerators=accelerators,
        plugins=plugins,
        failed_plugins=listed.failed_plugins,
        environment=environment,
        config=_config_report(),
        cluster_environment=cluster,
        packages=_package_versions(),
        warnings=check_unknown_variables(),
    )


def _gib(n: int | None) -> str:
    return "unknown" if n is None else f"{n / 2**30:.1f} GiB"


def _gpu_stack(report: EnvReport) -> str:
    t, p = report.torch, report.platform
    if not (t.cuda_build or t.hip_build or p.nvidia_driver):
        return "- CUDA: not in this torch build; NVIDIA driver: none found"
    runtime = f"CUDA runtime: {t.cuda_build}" if t.cuda_build else f"ROCm: {t.hip_build}" if t.hip_build else None
    parts = [
        runtime or "CUDA runtime: none (CPU build of torch)",
        f"cuDNN: {t.cudnn or 'none'}",
        f"NCCL: {t.nccl or 'none'}",
        f"NVIDIA driver: {p.nvidia_driver or 'none found'}",
    ]
    return "- " + ", ".join(parts)


def _cluster_lines(cluster: ClusterEnvReport) -> list[str]:
    if cluster.detected is None:
        lines = ["- none: no scheduler or launcher started this process (accelplug starts its own processes)"]
    else:
        lines = [f"- **{cluster.detected}** (plugin {cluster.plugin}): {cluster.description}"]
        if cluster.error:
            lines.append(f"- ERROR: {cluster.error}")
        else:
            lines.append(
                f"- this process: rank {cluster.global_rank} of {cluster.world_size}, local rank "
                f"{cluster.local_rank}, node {cluster.node_rank}; rendezvous {cluster.main_address}:{cluster.main_port}"
            )
    return [*lines, f"- asked in this order: {', '.join(cluster.registered)}"]


def to_markdown(report: EnvReport) -> str:
    """The report as Markdown: bullet facts first, then one line per accelerator, plugin, package, variable."""
    t, p = report.torch, report.platform
    threads = f", {t.num_threads} intra-op threads" if t.num_threads else ""
    kernel = ", ".join(filter(None, (f"{p.system} {p.release}", p.libc)))
    lines = [
        "## accelplug environment",
        "",
        f"- accelplug: {report.accelplug}",
        f"- torch: {t.version} (CUDA build: {t.cuda_build or 'no'}, ROCm build: {t.hip_build or 'no'}, "
        f"MPS built: {'yes' if t.mps_built else 'no'}, CUDA initialised: {'yes' if t.cuda_initialized else 'no'}"
        f"{threads})",
        _gpu_stack(report),
        f"- Python: {p.python} ({p.python_implementation}) at {p.executable}",
        f"- OS: {p.os_name or p.platform} ({kernel})",
        f"- machine: {p.machine}, Rosetta-translated: {'yes' if p.rosetta_translated else 'no'}",
        f"- CPU: {p.cpu_model or 'unknown model'}, {p.cpu_count} logical CPUs, memory: {_gib(p.memory_total_bytes)}",
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
    lines += ["", "### Cluster environment", "", *_cluster_lines(report.cluster_environment)]
    lines += ["", "### Plugins", ""]
    for plugin in report.plugins:
        dist = f"{plugin.distribution} {plugin.version or ''}".strip() if plugin.distribution else "no distribution"
        lines.append(f"- {plugin.plugin} ({dist}): {', '.join(plugin.accelerators) or 'no accelerators'}")
    for failed in report.failed_plugins:
        lines.append(f"- FAILED {failed.plugin} ({failed.distribution or 'no distribution'}): {failed.error}")
    lines += ["", "### Packages", ""]
    lines += [f"- {name}: {version}" for name, version in report.packages.items() if version]
    missing = [name for name, version in report.packages.items() if not version]
    if missing:
        lines.append(f"- not installed: {', '.join(missing)}")
    lines += ["", "### Environment variables", ""]
    lines += [f"- `{k}={v}`" for k, v in report.environment.items()] or ["- none set"]
    if report.warnings:
        lines += ["", "### Warnings", ""]
        lines += [f"- {warning}" for warning in report.warnings]
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
    """An environment report to paste into a bug report.

    Markdown by default (--json for machines): versions, OS, CPU, memory, GPU driver and libraries,
    each accelerator with the cause when it is unavailable, plugins, packages, variables, settings.
    """
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
