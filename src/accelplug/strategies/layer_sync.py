"""Lightning's layer-sync plugins: what becomes of a model's layers when it is spread over processes.

``plugins=[TorchSyncBatchNorm()]`` is ``sync_batchnorm=True``: BatchNorm layers become ``SyncBatchNorm``, so
the statistics are computed over the global batch. A :class:`LayerSync` subclass's ``apply`` is called on
the module under a distributed strategy, before the module is wrapped (one process: nothing to sync).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch

__all__ = ["LayerSync", "TorchSyncBatchNorm"]


class LayerSync(ABC):
    """Rewrites layers that need the other processes (``apply``) and undoes it (``revert``)."""

    @abstractmethod
    def apply(self, model: torch.nn.Module) -> torch.nn.Module:
        """The model with its layers synchronised across processes."""

    @abstractmethod
    def revert(self, model: torch.nn.Module) -> torch.nn.Module:
        """The model as it was before :meth:`apply`."""


class TorchSyncBatchNorm(LayerSync):
    """Every BatchNorm layer as torch's ``SyncBatchNorm`` (no effect on one device)."""

    def apply(self, model: torch.nn.Module) -> torch.nn.Module:
        return torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)  # type: ignore[no-untyped-call,no-any-return]

    def revert(self, model: torch.nn.Module) -> torch.nn.Module:
        """Each ``SyncBatchNorm`` back as a plain BatchNorm sharing its parameters and running statistics."""
        converted = model
        if isinstance(model, torch.nn.SyncBatchNorm):
            converted = _AnyDimBatchNorm(
                model.num_features, model.eps, model.momentum, model.affine, model.track_running_stats
            )
            if model.affine:
                converted.weight, converted.bias = model.weight, model.bias
            converted.running_mean = model.running_mean
            converted.running_var = model.running_var
            converted.num_batches_tracked = model.num_batches_tracked
            if hasattr(model, "qconfig"):
                converted.qconfig = model.qconfig
        for name, child in model.named_children():
            converted.add_module(name, self.revert(child))
        return converted


class _AnyDimBatchNorm(torch.nn.modules.batchnorm._BatchNorm):
    """A BatchNorm for any input rank: ``SyncBatchNorm`` does not remember whether it was 1d, 2d or 3d."""

    def _check_input_dim(self, input: torch.Tensor) -> None:
        return None
