"""accelplug-xpu: Intel GPUs through PyTorch's upstream ``torch.xpu`` backend."""

from .accelerator import XPUAccelerator, choose_distributed_backend

__all__ = ["XPUAccelerator", "choose_distributed_backend"]
