"""A torchvision model by name (Lightning's ``get_torchvision_model``), for examples that fine-tune one."""

from __future__ import annotations

from typing import Any

from torch import nn

__all__ = ["get_torchvision_model"]


def get_torchvision_model(model_name: str, **kwargs: Any) -> nn.Module:
    """``torchvision.models``' model ``model_name`` (``"resnet18"``...) built with ``kwargs`` (``weights=...``);
    ``ModuleNotFoundError`` where torchvision is not installed."""
    try:
        from torchvision import models
    except ImportError:
        raise ModuleNotFoundError(
            f"get_torchvision_model({model_name!r}) needs torchvision, which is not installed: pip install torchvision"
        ) from None
    get_model = getattr(models, "get_model", None)  # torchvision >= 0.14
    model: nn.Module = (
        get_model(model_name, **kwargs) if get_model is not None else getattr(models, model_name)(**kwargs)
    )
    return model
