"""The JSON shapes of ``accelplug list --json``, ``env --json`` and ``config show --json``.

They are pydantic models so the output is validated when it is produced and a consumer (a test, a
bug-report bot) can validate it with the same class: ``ListReport.model_validate_json(text)``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AcceleratorEnv",
    "AcceleratorInfo",
    "ClusterEnvReport",
    "ConfigReport",
    "DeviceInfo",
    "EnvReport",
    "FailedPlugin",
    "ListReport",
    "PlatformInfo",
    "PluginRecord",
    "SettingReport",
    "TorchInfo",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AcceleratorInfo(_Model):
    """One registered accelerator, as ``accelplug list`` shows it."""

    name: str
    description: str
    device_type: str
    plugin: str
    distribution: str | None
    version: str | None
    available: bool
    device_count: int = Field(ge=0)
    strategies: list[str]
    precisions: list[str]
    auto_priority: int
    reason: str | None = Field(description="why it is unavailable; null exactly when available")
    load_seconds: float | None = Field(
        None, description="seconds its plugin took to import and register (null for built-ins and run-time classes)"
    )
    probe_seconds: float = Field(0.0, description="seconds its availability and device queries took")


class FailedPlugin(_Model):
    """A plugin the registry skipped, and why."""

    plugin: str
    distribution: str | None
    version: str | None
    error: str


class ListReport(_Model):
    accelerators: list[AcceleratorInfo]
    available: list[str] = Field(description="available accelerator names, best first (the 'auto' order)")
    failed_plugins: list[FailedPlugin]


class PluginRecord(_Model):
    """A plugin that loaded, with the distribution that provided it."""

    plugin: str
    distribution: str | None
    version: str | None
    accelerators: list[str]


class DeviceInfo(_Model):
    index: int
    name: str
    total_memory_bytes: int | None


class AcceleratorEnv(_Model):
    name: str
    available: bool
    device_count: int
    reason: str | None
    devices: list[DeviceInfo]
    details: dict[str, str] = Field(default_factory=dict)


class TorchInfo(_Model):
    version: str
    cuda_build: str | None = Field(
        description="the CUDA runtime torch was built with and ships (torch.version.cuda), null for a CPU/MPS build"
    )
    hip_build: str | None
    mps_built: bool
    debug_build: bool
    cuda_initialized: bool = Field(description="must stay false: the report never initialises CUDA")
    cudnn: str | None = Field(None, description="cuDNN version torch loads, null without cuDNN")
    nccl: str | None = Field(None, description="NCCL (RCCL on ROCm) version torch was built with, null without it")
    num_threads: int | None = Field(None, description="torch's intra-op threads in this process")


class PlatformInfo(_Model):
    python: str
    python_implementation: str
    executable: str
    system: str
    release: str
    platform: str
    machine: str
    rosetta_translated: bool
    cpu_count: int | None
    memory_total_bytes: int | None
    os_name: str | None = Field(None, description="distribution and version: /etc/os-release, or macOS/Windows")
    libc: str | None = Field(None, description="the C library Python runs on, e.g. 'glibc 2.36'")
    cpu_model: str | None = Field(None, description="the CPU's marketing name")
    nvidia_driver: str | None = Field(None, description="NVIDIA kernel driver version, null when none is found")


class SettingReport(_Model):
    key: str
    value: str | int | bool
    source: str


class ConfigReport(_Model):
    path: str
    exists: bool
    settings: list[SettingReport]
    error: str | None = Field(description="why the configuration could not be read, null when it could")


class ClusterEnvReport(_Model):
    """Which scheduler or launcher started this process (a cluster environment), and what it says."""

    detected: str | None = Field(
        default=None, description="the cluster environment's name; null when none started this process"
    )
    description: str | None = None
    plugin: str | None = Field(default=None, description="the plugin that registered the detected environment")
    world_size: int | None = None
    global_rank: int | None = None
    local_rank: int | None = None
    node_rank: int | None = None
    main_address: str | None = Field(default=None, description="where the job's processes meet (rank 0's host)")
    main_port: int | None = None
    error: str | None = Field(
        default=None, description="a launcher variable that is wrong, as the environment reports it"
    )
    registered: list[str] = Field(default_factory=list, description="every cluster environment, in detection order")


class EnvReport(_Model):
    accelplug: str
    torch: TorchInfo
    platform: PlatformInfo
    accelerators: list[AcceleratorEnv]
    plugins: list[PluginRecord]
    failed_plugins: list[FailedPlugin]
    environment: dict[str, str]
    config: ConfigReport
    cluster_environment: ClusterEnvReport
    packages: dict[str, str | None] = Field(
        default_factory=dict, description="versions of packages that matter for a bug report, null when not installed"
    )
    warnings: list[str] = Field(default_factory=list, description="ACCELPLUG_* variables accelplug does not read")
