"""accelplug-torch-accelerator: run on whatever device ``torch.accelerator`` reports."""

from .accelerator import FORCE_ENV, TorchAcceleratorBridge, torch_accelerator_type

__all__ = ["FORCE_ENV", "TorchAcceleratorBridge", "torch_accelerator_type"]
