"""The core's device-neutral runtime calls reach a backend torch has registered, not only CUDA.

An out-of-tree backend is what this machine cannot have, so the backend's module is the one stand-in: a
child process renames torch's PrivateUse1 slot and registers a module through torch's own
``_register_device_module`` (how torch_npu or openreg plug in); everything above that is the real torch.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import torch
from tests.processes import child_env

from accelplug.hardware.runtime import copies_may_overlap, device_module, device_rng_state, synchronize
from accelplug.precision.mixed import FP16MixedPrecision


def test_the_cpu_needs_no_synchronising_and_keeps_its_generator_to_torch() -> None:
    synchronize(torch.device("cpu"))  # returns at once: nothing is queued on the CPU
    assert device_module("cpu") is torch.cpu
    assert device_rng_state("cpu") is None
    assert device_module("no_such_device_type") is None


def test_copies_overlap_on_devices_with_their_own_memory_only() -> None:
    assert [copies_may_overlap(torch.device(t)) for t in ("cpu", "mps", "cuda", "xpu")] == [False, False, True, True]


def test_float16_mixed_scales_its_loss_on_the_cpu_as_lightning_does() -> None:
    assert FP16MixedPrecision("cpu").scaler is not None


BACKEND = textwrap.dedent(
    """
    import types, torch
    calls = []
    module = types.ModuleType("fakedev")
    module.is_initialized = lambda: True
    module.is_available = lambda: True
    module.synchronize = lambda *a: calls.append("synchronize")
    module.get_rng_state = lambda *a: torch.tensor([7, 8], dtype=torch.uint8)
    module.set_rng_state = lambda state, *a: calls.append(("set", state.tolist()))
    torch.utils.rename_privateuse1_backend("fakedev")
    torch._register_device_module("fakedev", module)

    from accelplug import Accelerator
    from accelplug.hardware.runtime import synchronize

    class FakeDev(Accelerator):
        name = "fakedev"
        device_type = "fakedev"
        @classmethod
        def is_available(cls): return True
        @classmethod
        def device_count(cls): return 1

    synchronize(torch.device("fakedev", 0))
    accelerator = FakeDev()
    state = accelerator.get_rng_state()
    accelerator.set_rng_state(state)
    print(calls, state.tolist())
    """
)


def test_a_registered_backend_is_synchronised_and_its_generator_saved() -> None:
    result = subprocess.run(
        [sys.executable, "-c", BACKEND], env=child_env(), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "['synchronize', ('set', [7, 8])] [7, 8]"
