"""Stand-ins for the Lightning names that Lightning's *test harness* needs and accelplug does not have.

Lightning's ``conftest.py`` files and ``helpers/`` import private Lightning helpers (``_destroy_dist_connection``
after every test, ``_runif_reasons`` for every ``@RunIf``, ``_SignalConnector._valid_signals()``...). They are
not the behaviour under test, yet without them every test would error in its fixtures. The tool gives the harness
these small equivalents of its own (written here from what the harness needs, not copied). A stand-in is used
only where accelplug lacks the name, and each use is recorded, so the report lists them.

Two kinds:

* :data:`HARNESS`: only for the harness files (``conftest.py``, ``helpers/``, the packages' ``__init__``);
* facts about this machine (``_TORCH_GREATER_EQUAL_2_4``, ``_IS_WINDOWS``, ``_RICH_AVAILABLE``...), which test
  files read in ``skipif`` conditions at import time: :func:`fact` computes them the same way for any file, so a
  test is skipped under accelplug exactly when its condition says so, not run because a placeholder is truthy.
"""

from __future__ import annotations

import importlib.util
import operator
import os
import re
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

import torch
from packaging.version import Version


def _module_found(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("localhost", 0))
        return int(sock.getsockname()[1])


def _destroy_process_group() -> None:
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


def _process_group_exists() -> bool:
    return bool(torch.distributed.is_available() and torch.distributed.is_initialized())


class _NoSuchThread:
    """A class no thread is an instance of (the harness joins child-process observer threads; accelplug has none)."""


class _SignalsStandIn:
    """The harness asks which signals it may save and restore around each test."""

    @staticmethod
    def _valid_signals() -> set[signal.Signals]:
        return set(signal.valid_signals())


class _NoXLA:
    """An accelerator class that is never available (the harness asks before its thread checks)."""

    @staticmethod
    def is_available() -> bool:
        return _module_found("torch_xla")


def _cuda_count() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _mps_available() -> bool:
    return bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())


def _version_at_least(installed: str, wanted: str) -> bool:
    return Version(Version(installed).base_version) >= Version(wanted)


def _runif_reasons(**conditions: Any) -> tuple[list[str], dict[str, bool]]:
    """Why a ``@RunIf(...)`` test cannot run on this machine, and the marker keywords the conftest filters on.

    The conditions are Lightning's ``RunIf`` keywords; each is checked against this machine (GPUs, platform,
    installed packages, environment switches), independently of the framework under test, so both runs skip
    the same tests.
    """
    reasons: list[str] = []
    marks: dict[str, bool] = {}
    gpus = int(conditions.pop("min_cuda_gpus", 0) or 0)
    if gpus:
        marks["min_cuda_gpus"] = True
        if _cuda_count() < gpus:
            reasons.append(f"GPUs>={gpus}")
    torch_version = torch.__version__.split("+")[0]
    if conditions.get("min_torch") and not _version_at_least(torch_version, conditions.pop("min_torch")):
        reasons.append("min_torch")
    if conditions.get("max_torch") and _version_at_least(torch_version, conditions.pop("max_torch")):
        reasons.append("max_torch")
    python = ".".join(map(str, sys.version_info[:3]))
    if conditions.get("min_python") and not _version_at_least(python, conditions.pop("min_python")):
        reasons.append("min_python")
    if conditions.pop("bf16_cuda", False) and not (torch.cuda.is_available() and torch.cuda.is_bf16_supported()):
        reasons.append("CUDA device bf16")
    if conditions.pop("skip_windows", False) and sys.platform == "win32":
        reasons.append("Windows")
    if conditions.pop("linux_only", False) and sys.platform != "linux":
        reasons.append("only linux")
    if conditions.pop("tpu", False):
        marks["tpu"] = True
        if not _module_found("torch_xla"):
            reasons.append("TPU")
    mps = conditions.pop("mps", None)
    if mps is True and not _mps_available():
        reasons.append("MPS")
    if mps is False and _mps_available():
        reasons.append("not MPS")
    if conditions.pop("standalone", False):
        marks["standalone"] = True
        if os.environ.get("PL_RUN_STANDALONE_TESTS", "0") != "1":
            reasons.append("Standalone execution")
    if conditions.pop("dynamo", False):
        from torch._dynamo.eval_frame import is_dynamo_supported

        if not is_dynamo_supported():
            reasons.append("torch.dynamo")
    packages = {
        "deepspeed": "deepspeed",
        "rich": "rich",
        "omegaconf": "omegaconf",
        "psutil": "psutil",
        "sklearn": "sklearn",
        "onnx": "onnx",
        "onnxscript": "onnxscript",
        "tensorrt": "torch_tensorrt",
    }
    for keyword, module in packages.items():
        if conditions.pop(keyword, False) and not _module_found(module):
            reasons.append(keyword)
    if conditions:
        raise TypeError(f"RunIf stand-in: unknown conditions {sorted(conditions)}")
    return reasons, marks


#: (module, name) -> stand-in, for the harness files only.
HARNESS: dict[tuple[str, str], Any] = {
    ("lightning.fabric.plugins.environments.lightning", "find_free_network_port"): _free_port,
    ("lightning.fabric.strategies.launchers.subprocess_script", "_ChildProcessObserver"): _NoSuchThread,
    ("lightning.fabric.utilities.distributed", "_destroy_dist_connection"): _destroy_process_group,
    ("lightning.fabric.utilities.distributed", "_distributed_is_initialized"): _process_group_exists,
    ("lightning.pytorch.trainer.connectors.signal_connector", "_SignalConnector"): _SignalsStandIn,
    ("lightning.pytorch.accelerators", "XLAAccelerator"): _NoXLA,
    ("lightning.fabric.accelerators", "XLAAccelerator"): _NoXLA,
    ("lightning.pytorch.utilities.testing", "_runif_reasons"): _runif_reasons,
    ("lightning.fabric.utilities.testing", "_runif_reasons"): _runif_reasons,
}

_PACKAGE_FLAGS = {
    "TENSORBOARD": "tensorboard",
    "TENSORBOARDX": "tensorboardX",
    "XLA": "torch_xla",
    "DEEPSPEED": "deepspeed",
    "BITSANDBYTES": "bitsandbytes",
    "HYDRA": "hydra",
    "RICH": "rich",
    "OMEGACONF": "omegaconf",
    "PSUTIL": "psutil",
    "ONNX": "onnx",
    "ONNXSCRIPT": "onnxscript",
    "TORCH_TRT": "torch_tensorrt",
    "JSONARGPARSE_SIGNATURES": "jsonargparse",
    "SKLEARN": "sklearn",
    "TORCHVISION": "torchvision",
    "TRANSFORMER_ENGINE": "transformer_engine",
    "MLFLOW": "mlflow",
    "WANDB": "wandb",
    "COMET": "comet_ml",
    "NEPTUNE": "neptune",
}

_COMPARE = re.compile(
    r"^_(?P<package>[A-Z0-9_]+?)_(?P<op>GREATER_EQUAL|LESS_EQUAL|GREATER|LESS)_(?P<version>\d+(?:_\d+)*)$"
)
_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "GREATER_EQUAL": operator.ge,
    "LESS_EQUAL": operator.le,
    "GREATER": operator.gt,
    "LESS": operator.lt,
}


def _installed_version(package: str) -> str | None:
    if package == "PYTHON":
        return ".".join(map(str, sys.version_info[:3]))
    from importlib.metadata import PackageNotFoundError, version

    distribution = {"TORCH": "torch", "TORCHMETRICS": "torchmetrics", "XLA": "torch_xla"}.get(package, package.lower())
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def fact(name: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``name`` is a fact about this machine the tool can compute, else ``(False, None)``."""
    if name == "_IS_WINDOWS":
        return True, sys.platform == "win32"
    if name in ("_IS_INTERACTIVE",):
        return True, hasattr(sys, "ps1") or bool(sys.flags.interactive)
    matched = _COMPARE.match(name)
    if matched:
        installed = _installed_version(matched["package"])
        if installed is None:
            return True, False
        wanted = Version(matched["version"].replace("_", "."))
        compare = _OPERATORS[matched["op"]]
        return True, compare(Version(Version(installed).base_version), wanted)
    if name.startswith("_") and name.endswith("_AVAILABLE"):
        flag = name[1 : -len("_AVAILABLE")]
        module = _PACKAGE_FLAGS.get(flag)
        if module is not None:
            return True, _module_found(module)
    return False, None
