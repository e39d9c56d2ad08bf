"""``lightning.pytorch.overrides.distributed``'s path (imports only): the samplers that share a loader out over
processes without repeating a sample, which live with the other samplers (``accelplug.data.samplers``)."""

from __future__ import annotations

from ...data.samplers import UnrepeatedDistributedSampler, UnrepeatedDistributedSamplerWrapper

__all__ = ["UnrepeatedDistributedSampler", "UnrepeatedDistributedSamplerWrapper"]
