"""``Float8Precision``: float8 training of the Linear layers through torchao, bf16-mixed for the rest.

torchao's float8 training (``torchao.float8.convert_to_float8_training``) swaps each chosen ``nn.Linear`` for its
``Float8Linear``, whose three matrix products per step (forward, and the two of backward) run in float8 with
scales computed on the fly; everything else trains as ``precision="bf16-mixed"`` does (float32 parameters,
autocast, and for FSDP bf16 parameters with fp32 gradient reduction). The conversion happens where the
strategy converts the module's precision, before FSDP shards it and before ``compile`` (the order torchao
asks for). The float8 matrix products need an NVIDIA GPU of compute capability 8.9 or newer (Ada, Hopper);
they are fast only compiled, so use it with ``Trainer(compile=True)``.

A layer is converted when it is an ``nn.Linear`` with both sizes divisible by 16 (what float8 kernels take)
and its qualified name does not end with a name in ``ignore_modules`` (by default the output projection,
``output`` or ``lm_head``, which is commonly kept in bf16 for accuracy). ``config`` is a torchao
``Float8LinearConfig`` (default: tensor-wise scales).
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from ...errors import MisconfigurationException
from .base import Precision

if TYPE_CHECKING:
    import torch

__all__ = ["Float8Precision"]

_DEFAULT_IGNORED = frozenset({"output", "lm_head"})


class Float8Precision(Precision):
    """Float8 Linear layers through torchao; ``Trainer(plugins=[Float8Precision()], compile=True)``."""

    device_type = "cuda"
    precision = "bf16-mixed"

    def __init__(self, config: Any = None, *, ignore_modules: set[str] | frozenset[str] | None = None) -> None:
        owner = type(self).__name__
        if ignore_modules is not None and not (
            isinstance(ignore_modules, (set, frozenset, list, tuple))
            and all(isinstance(m, str) for m in ignore_modules)
        ):
            raise MisconfigurationException(
                f"{owner}(ignore_modules={ignore_modules!r}) is invalid: expected a set of module names such as "
                "{'lm_head'} (a Linear whose qualified name ends with one stays in bf16), or None."
            )
        if importlib.util.find_spec("torchao") is None:
            raise MisconfigurationException(
                f"{owner} needs the 'torchao' package, which is not installed: pip install torchao (a release "
                "built for this torch; float8 training runs on NVIDIA GPUs of compute capability 8.9 or newer)."
            )
        if config is not None:
            from torchao.float8 import Float8LinearConfig

            if not isinstance(config, Float8LinearConfig):
                raise MisconfigurationException(
                    f"{owner}(config={config!r}) is invalid: expected torchao.float8.Float8LinearConfig or None."
                )
        self.config = config
        self.ignore_modules = frozenset(_DEFAULT_IGNORED if ignore_modules is None else ignore_modules)

    def _numerics_name(self) -> str:
        return "bf16-mixed"

    def converts(self, module: torch.nn.Module, name: str) -> bool:
        """Whether the layer ``name`` becomes a float8 layer (torchao's ``module_filter_fn``)."""
        import torch

        if not isinstance(module, torch.nn.Linear):
            return False
        if module.in_features % 16 or module.out_features % 16:
            return False
        last = name.rsplit(".", 1)[-1]
        return last not in self.ignore_modules and name not in self.ignore_modules

    def convert_module(self, module: torch.nn.Module) -> torch.nn.Module:
        """Swap the chosen Linear layers for torchao's ``Float8Linear``, then the bf16-mixed conversion."""
        import torch
        from torchao.float8 import Float8LinearConfig, convert_to_float8_training

        if torch.cuda.is_available() and torch.cuda.get_device_capability() < (8, 9):
            name = torch.cuda.get_device_name()
            raise MisconfigurationException(
                f"{type(self).__name__}: the float8 matrix products need compute capability 8.9 or newer (Ada, "
                f"Hopper); this GPU, {name}, has {torch.cuda.get_device_capability()}. Use precision='bf16-mixed'."
            )
        convert_to_float8_training(module, config=self.config or Float8LinearConfig(), module_filter_fn=self.converts)
        return self.numerics.convert_module(module)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(ignore_modules={sorted(self.ignore_modules)!r})"
