"""XLAAccelerator and TPUAccelerator against accelplug's conformance suite, as this machine is.

Where torch_xla runs (its own environment, ``PJRT_DEVICE=CPU``), ``xla`` is available and the device
checks run on the XLA CPU device: setup and teardown, device stats, twenty SGD steps that must lower
the loss, and each precision it claims computing in its dtype. ``tpu`` is unavailable on a machine
without TPU chips, so its device checks skip with its own reason; so do ``xla``'s where torch_xla
is not installed (accelplug's main environment), while every class-level check runs everywhere.
"""

from __future__ import annotations

from accelplug_xla import TPUAccelerator, XLAAccelerator, runtime

from accelplug.testing import AcceleratorConformance


class TestXLAAcceleratorAsThisMachineIs(AcceleratorConformance):
    accelerator_class = XLAAccelerator
    plugin_module = "accelplug_xla.plugin"
    entry_point_name = "xla"

    def runtime_initialized(self) -> bool | None:
        """torch_xla's PJRT client, which ``torch.xla`` (there is none) cannot report."""
        return runtime.runtime_initialized()


class TestTPUAcceleratorAsThisMachineIs(AcceleratorConformance):
    accelerator_class = TPUAccelerator
    plugin_module = "accelplug_xla.plugin"
    entry_point_name = "xla"

    def runtime_initialized(self) -> bool | None:
        return runtime.runtime_initialized()
