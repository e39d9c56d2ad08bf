"""One intra-op thread for the Trainer tests.

The models here are tiny: extra threads only add work, and on a busy 2-core machine OpenMP threads
that spin waiting for a core turn a 0.2 ms step into 90 ms. Each test gets the previous setting back.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch


@pytest.fixture(autouse=True)
def single_thread() -> Iterator[None]:
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
