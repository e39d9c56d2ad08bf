"""The machine itself: which devices exist and are visible, and the device-neutral calls into their runtime.

:mod:`.devices` parses the ``devices`` argument, :mod:`.runtime` calls a device type's runtime (synchronise,
memory) for every device type torch knows, :mod:`.cuda_visible` reads ``CUDA_VISIBLE_DEVICES`` as CUDA does and
:mod:`._nvml` counts NVIDIA GPUs without initialising CUDA; :mod:`.memory` tells an out-of-memory error from
any other; :mod:`.capabilities` finds which parts of torch's device API an out-of-tree device implements (on
first use) and :mod:`.torch_backends` reports a torch back-end entry point that breaks ``import torch``.
Nothing here imports anything of accelplug above :mod:`accelplug.errors`.
"""
