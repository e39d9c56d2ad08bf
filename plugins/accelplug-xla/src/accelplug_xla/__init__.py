"""accelplug-xla: XLA devices (TPUs; the host CPU with ``PJRT_DEVICE=CPU``) through torch_xla."""

from .accelerator import TPUAccelerator, XLAAccelerator
from .strategy import SingleXLAStrategy

__all__ = ["SingleXLAStrategy", "TPUAccelerator", "XLAAccelerator"]
