"""The CPU and CUDA accelerators: availability, counts and reasons, without initialising CUDA."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

import accelplug.accelerators.cuda as cuda_module
from accelplug.accelerators import CPUAccelerator, CUDAAccelerator
from accelplug.hardware import _nvml
from accelplug.hardware.cuda_visible import resolve_visible_devices

HAS_GPU = torch.cuda.is_available() if torch.version.cuda else False


@pytest.fixture(autouse=True)
def fresh_cuda_probe() -> None:
    cuda_module._probe_cached.cache_clear()


def test_cpu_is_always_available() -> None:
    assert CPUAccelerator.is_available() and CPUAccelerator.unavailable_reason() is None


def test_cpu_auto_means_one_process() -> None:
    assert CPUAccelerator.parse_devices("auto") == [0]


def test_cpu_device_count_is_the_usable_cores() -> None:
    assert CPUAccelerator.device_count() >= 1


def test_cpu_devices_all_map_to_the_host_device() -> None:
    assert {CPUAccelerator.get_device(i) for i in range(3)} == {torch.device("cpu")}


def test_cpu_supports_ddp_over_gloo() -> None:
    assert CPUAccelerator.supported_strategies() == ("single_device", "ddp")
    assert CPUAccelerator.distributed_backend == "gloo"


def test_cpu_reports_peak_memory_and_lightnings_load_figures() -> None:
    stats = CPUAccelerator().get_device_stats(torch.device("cpu"))
    assert stats["max_rss_bytes"] > 1e6
    pytest.importorskip("psutil", reason="the load figures are read through psutil, not installed here")
    assert {"cpu_percent", "cpu_vm_percent", "cpu_swap_percent"} <= set(stats)  # Lightning's names
    assert 0 < stats["cpu_vm_percent"] <= 100


def test_cuda_reason_names_a_torch_without_cuda(mocker) -> None:  # type: ignore[no-untyped-def]
    mocker.patch.object(torch.version, "cuda", None)
    mocker.patch.object(torch.version, "hip", None)
    assert CUDAAccelerator.is_available() is False
    assert "built without CUDA support" in (CUDAAccelerator.unavailable_reason() or "")


def test_cuda_reason_names_a_missing_driver(mocker) -> None:  # type: ignore[no-untyped-def]
    mocker.patch.object(torch.version, "cuda", "12.8")
    mocker.patch.object(_nvml, "_load", side_effect=_nvml.NvmlUnavailable("libnvidia-ml.so.1 could not be loaded"))
    mocker.patch.object(cuda_module.os.path, "exists", return_value=False)
    assert CUDAAccelerator.device_count() == 0
    assert "libnvidia-ml.so.1" in (CUDAAccelerator.unavailable_reason() or "")


def test_cuda_reason_names_cuda_visible_devices_hiding_every_gpu(mocker, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    mocker.patch.object(torch.version, "cuda", "12.8")
    mocker.patch.object(_nvml, "visible_gpus", return_value=[])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert "CUDA_VISIBLE_DEVICES=''" in (CUDAAccelerator.unavailable_reason() or "")


def test_cuda_counts_what_nvml_reports(mocker) -> None:  # type: ignore[no-untyped-def]
    mocker.patch.object(torch.version, "cuda", "12.8")
    gpus = [_nvml.GpuInfo(i, i, "H100", f"GPU-{i}", 80 << 30) for i in range(2)]
    mocker.patch.object(_nvml, "visible_gpus", return_value=gpus)
    assert CUDAAccelerator.device_count() == 2
    assert CUDAAccelerator.parse_devices("auto") == [0, 1]
    assert CUDAAccelerator.unavailable_reason() is None


PHYSICAL_UUIDS = ["GPU-aaaa-1111", "GPU-bbbb-2222", "GPU-cccc-3333"]


@pytest.mark.parametrize(
    ("visible", "expected"),
    [
        (None, [0, 1, 2]),
        ("", []),
        ("2,0", [2, 0]),
        ("1,7,2", [1]),  # the runtime stops at the first invalid entry
        ("-1", []),
        ("GPU-bbbb", [1]),
        # Until issue 11 these read as [2, 0] and [0]; the CUDA runtime on an H100 sees no GPU for
        # a UUID without its GPU- prefix, nor for a GPU named twice.
        ("cccc,0", []),
        ("0,0", []),
    ],
)
def test_cuda_visible_devices_is_applied_like_the_cuda_runtime(visible: str | None, expected: list[int]) -> None:
    assert list(resolve_visible_devices(visible, PHYSICAL_UUIDS).physical or ()) == expected


def test_nvml_missing_raises_nvml_unavailable(mocker) -> None:  # type: ignore[no-untyped-def]
    mocker.patch("ctypes.CDLL", side_effect=OSError("not found"))
    with pytest.raises(_nvml.NvmlUnavailable, match="libnvidia-ml"):
        _nvml.visible_gpus()


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU")
def test_cuda_count_matches_torch_without_initialising_cuda() -> None:
    """In a fresh process: an earlier test of this one may have initialised CUDA already."""
    counted = subprocess.run(
        [
            sys.executable,
            "-c",
            "import torch; from accelplug.accelerators.cuda import CUDAAccelerator; "
            "print(CUDAAccelerator.device_count(), torch.cuda.is_initialized())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    count, initialised = counted.stdout.split()
    assert initialised == "False"
    out = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.cuda.device_count())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(count) == int(out.stdout)


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU")
def test_cuda_setup_device_makes_it_current_and_reports_memory() -> None:
    accelerator = CUDAAccelerator()
    device = CUDAAccelerator.get_device(CUDAAccelerator.device_count() - 1)
    accelerator.setup_device(device)
    assert torch.cuda.current_device() == device.index
    x = torch.ones(1024, 1024, device=device)
    assert accelerator.get_device_stats(device)["allocated_bytes.all.current"] >= x.numel() * 4
    accelerator.teardown()


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU")
def test_cuda_respects_cuda_visible_devices_in_a_child() -> None:
    code = (
        "from accelplug.accelerators import CUDAAccelerator as C; import torch\n"
        "print(C.device_count(), torch.cuda.is_initialized())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, "CUDA_VISIBLE_DEVICES": "0"},
    )
    assert out.stdout.split() == ["1", "False"]
