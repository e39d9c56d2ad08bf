"""``ModelParallelStrategy``'s mesh sizes against the world it is set up in (one real gloo process)."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from accelplug.errors import MisconfigurationException
from accelplug.pytorch.accelerators import CPUAccelerator
from accelplug.pytorch.strategies import ModelParallelStrategy


@pytest.mark.parametrize(("data", "tensor"), [(2, 1), (1, 2), (2, "auto")])
def test_mesh_sizes_that_do_not_multiply_to_the_world_size_are_refused_as_lightnings_runtime_error(
    data: int, tensor: int | str
) -> None:
    """Lightning raises ``RuntimeError``; accelplug's error is both that and its configuration error."""
    strategy = ModelParallelStrategy(data_parallel_size=data, tensor_parallel_size=tensor)
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)  # type: ignore[attr-defined]
    try:
        with pytest.raises(RuntimeError, match=r"multiplied should equal the world size \(1\)") as raised:
            strategy.setup_environment(CPUAccelerator(), torch.device("cpu"))
    finally:
        dist.destroy_process_group()
    assert isinstance(raised.value, MisconfigurationException)
