"""``CUDA_VISIBLE_DEVICES`` is applied exactly as the CUDA runtime applies it.

The GPUs are faked at the one boundary accelplug consults, the NVML C library: ``_nvml._load`` returns
an object with NVML's functions, which fill the ctypes arguments the way libnvidia-ml does. Everything
above it -- reading the library's answers, parsing the variable, counting in ``CUDAAccelerator`` -- is
the real code. The expectations are the runtime's own counts measured on an H100 (issue 11) and every
case of PyTorch's ``test/test_cuda_nvml_based_avail.py``. ``scripts/gpu/cuda_visible_devices.py``
checks the same values against the runtime on a real GPU.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import accelplug.accelerators.cuda as cuda_module
from accelplug.accelerators import CUDAAccelerator
from accelplug.hardware import _nvml
from accelplug.hardware.cuda_visible import resolve_visible_devices

H100 = ["GPU-9942190a-aa31-4ff1-4aa9-c388d80f85f1"]
#: The eight UUIDs of PyTorch's test_partial_uuid_resolver.
EIGHT = [
    "GPU-9942190a-aa31-4ff1-4aa9-c388d80f85f1",
    "GPU-9e8d35e3-a134-0fdd-0e01-23811fdbd293",
    "GPU-e429a63e-c61c-4795-b757-5132caeb8e70",
    "GPU-eee1dfbc-0a0f-6ad8-5ff6-dc942a8b9d98",
    "GPU-bbcd6503-5150-4e92-c266-97cc4390d04e",
    "GPU-472ea263-58d7-410d-cc82-f7fdece5bd28",
    "GPU-e56257c4-947f-6a5b-7ec9-0f45567ccf4e",
    "GPU-1c20e77d-1c1a-d9ed-fe37-18b8466a78ad",
]
TWO = EIGHT[:2]


class FakeNvml:
    """libnvidia-ml as ctypes sees it: functions that fill their pointer arguments and return 0."""

    def __init__(self, uuids: list[str]) -> None:
        self.uuids = uuids

    def nvmlInit_v2(self) -> int:
        return 0

    def nvmlShutdown(self) -> int:
        return 0

    def nvmlDeviceGetCount_v2(self, count: Any) -> int:
        count._obj.value = len(self.uuids)
        return 0

    def nvmlDeviceGetHandleByIndex_v2(self, index: ctypes.c_uint, handle: Any) -> int:
        handle._obj.value = index.value + 1
        return 0

    def nvmlDeviceGetName(self, handle: ctypes.c_void_p, buffer: Any, size: ctypes.c_uint) -> int:
        buffer.value = b"NVIDIA H100 80GB HBM3"
        return 0

    def nvmlDeviceGetUUID(self, handle: ctypes.c_void_p, buffer: Any, size: ctypes.c_uint) -> int:
        buffer.value = self.uuids[(handle.value or 0) - 1].encode()
        return 0

    def nvmlDeviceGetMemoryInfo(self, handle: ctypes.c_void_p, memory: Any) -> int:
        memory._obj.total = 80 << 30
        return 0


@pytest.fixture
def gpus(mocker: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``gpus(uuids, visible)``: this machine has these GPUs, and CUDA_VISIBLE_DEVICES is ``visible``."""
    cuda_module._probe_cached.cache_clear()
    mocker.patch.object(torch.version, "cuda", "12.8")
    mocker.patch.object(torch.cuda, "is_initialized", return_value=False)  # a GPU machine's cuda tests may have

    def install(uuids: list[str], visible: str | None) -> None:
        mocker.patch.object(_nvml, "_load", return_value=FakeNvml(uuids))
        if visible is None:
            monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        else:
            monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)

    yield install
    cuda_module._probe_cached.cache_clear()


U = H100[0]
#: (GPUs of the machine, CUDA_VISIBLE_DEVICES, the physical GPUs the runtime shows, in its order)
TABLE = [
    # the runtime's count on an H100, one fresh process per value (issue 11)
    pytest.param(H100, "0,0", [], id="h100: 0,0"),
    pytest.param(H100, f"{U},{U}", [], id="h100: the same GPU- uuid twice"),
    pytest.param(H100, "+0", [0], id="h100: +0"),
    pytest.param(H100, "0gpu", [0], id="h100: 0gpu"),
    pytest.param(H100, U.removeprefix("GPU-"), [], id="h100: a uuid without GPU-"),
    pytest.param(H100, "GPU-", [], id="h100: GPU-"),
    # and the plain cases
    pytest.param(H100, None, [0], id="h100: unset"),
    pytest.param(H100, "", [], id="h100: empty"),
    pytest.param(H100, "0", [0], id="h100: 0"),
    pytest.param(H100, "1", [], id="h100: 1 (no such GPU)"),
    pytest.param(H100, U[:12], [0], id="h100: an abbreviated uuid"),
    pytest.param(H100, "²", [], id="h100: a superscript two is no digit"),
    # measured on the lent H100 this round (scripts/gpu/cuda_visible_devices.py): the list ends at the
    # first GPU that does not exist, so a repeat after it does not hide GPU 0 (torch's parser says 0)
    pytest.param(H100, "0, 1, 2, 1", [0], id="h100: 0, 1, 2, 1 (a repeat after the end of the list)"),
    # PyTorch's test_env_var_parsing (indices resolved on its eight GPUs)
    pytest.param(EIGHT, "1gpu2,2ampere", [1, 2], id="torch: 1gpu2,2ampere"),
    pytest.param(EIGHT, "0, 1, 2, -1, 3", [0, 1, 2], id="torch: negatives end the list"),
    pytest.param(EIGHT, "0, 1, 2, 1", [], id="torch: a repeated ordinal"),
    pytest.param(EIGHT, "2, +3, -0, 5", [2, 3, 0, 5], id="torch: unary plus and minus"),
    pytest.param(EIGHT, "one,two,3,4", [], id="torch: words first"),
    pytest.param(EIGHT, "4,3,two,one", [4, 3], id="torch: words as a separator"),
    pytest.param(EIGHT, "GPU-9e8d35e3", [1], id="torch: GPU-9e8d35e3"),
    pytest.param(EIGHT, "GPU-123, 2", [], id="torch: GPU-123, 2"),
    # PyTorch's test_partial_uuid_resolver
    pytest.param(EIGHT, "GPU-e4,GPU-9e8d35e3", [2, 1], id="torch: two prefixes"),
    pytest.param(EIGHT, "GPU-9e8d35e3,GPU-1,GPU-47", [1, 7, 5], id="torch: three prefixes"),
    pytest.param(EIGHT, "GPU-123,GPU-9e8d35e3", [], id="torch: an invalid first uuid"),
    pytest.param(EIGHT, "GPU-9e8d35e3,GPU-123,GPU-47", [1], id="torch: an invalid uuid ends the list"),
    pytest.param(EIGHT, "GPU-9e8d35e3,GPU-e,GPU-47", [1], id="torch: an ambiguous uuid ends the list"),
    pytest.param(EIGHT, "GPU-9e8d35e3,GPU-47,GPU-9e8", [], id="torch: one GPU by two prefixes"),
    # PyTorch's test_ordinal_parse_visible_devices (two GPUs)
    pytest.param(TWO, "1, 0", [1, 0], id="torch: 1, 0"),
    pytest.param(TWO, "1, 5, 0", [1], id="torch: an index past the last GPU ends the list"),
]


@pytest.mark.parametrize(("uuids", "visible", "expected"), TABLE)
def test_cuda_visible_devices_is_applied_like_the_cuda_runtime(
    gpus: Any, uuids: list[str], visible: str | None, expected: list[int]
) -> None:
    gpus(uuids, visible)
    assert [g.physical_index for g in _nvml.visible_gpus()] == expected
    assert [g.uuid for g in _nvml.visible_gpus()] == [uuids[i] for i in expected]
    assert CUDAAccelerator.device_count() == len(expected)
    assert (CUDAAccelerator.unavailable_reason() is None) == bool(expected)
    assert not torch.cuda.is_initialized()


def test_the_reason_says_why_cuda_visible_devices_hides_every_gpu(gpus: Any) -> None:
    gpus(H100, "0,0")
    reason = CUDAAccelerator.unavailable_reason() or ""
    assert "CUDA_VISIBLE_DEVICES='0,0' hides every NVIDIA GPU" in reason
    assert "GPU 0 is named twice, and the CUDA runtime then shows no GPU at all" in reason


@pytest.mark.parametrize("visible", [f"MIG-{U.removeprefix('GPU-')}", "MIG-89c850dc", "MIG-GPU-9942190a/1/0"])
def test_mig_instances_are_counted_by_the_runtime_in_a_child_process(gpus: Any, visible: str, mocker: Any) -> None:
    gpus(H100, visible)
    child = mocker.patch.object(
        cuda_module.subprocess, "run", return_value=subprocess.CompletedProcess([], 0, stdout="1\n", stderr="")
    )
    assert CUDAAccelerator.device_count() == 1  # what the runtime answered on the H100
    (args,), kwargs = child.call_args
    assert "torch.cuda.device_count()" in args[-1]
    assert kwargs.get("env") is None and os.environ["CUDA_VISIBLE_DEVICES"] == visible  # the child inherits it
    assert not torch.cuda.is_initialized()


def test_a_child_that_cannot_count_is_reported(gpus: Any, mocker: Any) -> None:
    gpus(H100, "MIG-89c850dc")
    failure = subprocess.CalledProcessError(1, ["python"], output="", stderr="RuntimeError: CUDA driver too old\n")
    mocker.patch.object(cuda_module.subprocess, "run", side_effect=failure)
    assert CUDAAccelerator.device_count() == 0
    assert "CUDA driver too old" in (CUDAAccelerator.unavailable_reason() or "")


# ---- agreement with torch's own parser, where torch follows the runtime ---------------------------
_torch_cuda: Any = torch.cuda
_HAS_TORCH_PARSER = all(
    hasattr(_torch_cuda, name) for name in ("_parse_visible_devices", "_transform_uuid_to_ordinals")
)


def _torch_count(visible: str, uuids: list[str]) -> int:
    """What torch's NVML-based count says for these GPUs (its private parser, our fake GPU list)."""
    with mock.patch.dict(os.environ, {"CUDA_VISIBLE_DEVICES": visible}):
        parsed = _torch_cuda._parse_visible_devices()
    if not parsed:
        return 0
    if isinstance(parsed[0], str):
        return len(_torch_cuda._transform_uuid_to_ordinals(parsed, uuids))
    return next((i for i, v in enumerate(parsed) if v >= len(uuids)), len(parsed))


_ENTRY = st.one_of(
    st.from_regex(r"\A ?[+-]?[0-9]{1,2}[a-z]{0,2} ?\Z"),
    st.sampled_from(["GPU-9e8d35e3", "GPU-e", "GPU-47", "GPU-1c2", "GPU-123", "gpu", "", " "]),
)


@pytest.mark.skipif(not _HAS_TORCH_PARSER, reason="this torch has no _parse_visible_devices to compare with")
@settings(max_examples=400, deadline=None)
@given(st.lists(_ENTRY, min_size=1, max_size=5).map(",".join))
def test_the_count_agrees_with_torchs_parser_on_ascii_values(visible: str) -> None:
    # Two deliberate differences: a bare "GPU-" (not generated here), and a repeat that comes after the
    # entry ending the list, where torch's parser hides every GPU but the runtime (measured on an H100)
    # shows the GPUs before it.
    expected = _torch_count(visible, EIGHT)
    visibility = resolve_visible_devices(visible, EIGHT)
    physical = visibility.physical
    assert physical is not None
    repeat_after_the_end = expected == 0 and len(physical) > 0 and "ignored" in (visibility.note or "")
    assume(not repeat_after_the_end)
    assert len(physical) == expected


# ---- on a real GPU: every value against the runtime's own count ----------------------------------
def _has_nvidia_gpu() -> bool:
    try:
        return bool(_nvml.physical_gpus())  # NVML only: CUDA stays uninitialised in this process
    except _nvml.NvmlUnavailable:
        return False


@pytest.mark.cuda
@pytest.mark.slow
@pytest.mark.skipif(not _has_nvidia_gpu(), reason="needs an NVIDIA GPU")
def test_every_value_agrees_with_the_cuda_runtime_on_this_machine(tmp_path: Path) -> None:
    rows_file = tmp_path / "rows.json"
    script = Path(__file__).resolve().parents[2] / "scripts" / "gpu" / "cuda_visible_devices.py"
    result = subprocess.run(
        [sys.executable, str(script), "--json", str(rows_file)], capture_output=True, text=True, timeout=900
    )
    rows = json.loads(rows_file.read_text())["rows"]
    assert len(rows) >= 25, result.stdout + result.stderr
    assert [r for r in rows if not r["agrees"]] == [], result.stdout
    assert result.returncode == 0, result.stdout + result.stderr
