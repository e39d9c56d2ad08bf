"""The ``fake_xpu`` fixture: a ``FakeXPU`` in place of ``torch.xpu`` for one test."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from fake_xpu import FakeXPU


@pytest.fixture
def fake_xpu(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeXPU]:
    """``fake_xpu(count=2, compiled=True)`` puts a ``FakeXPU`` in place of ``torch.xpu`` for one test."""

    def install(count: int = 2, *, compiled: bool = True) -> FakeXPU:
        fake = FakeXPU(count, compiled=compiled)
        monkeypatch.setattr(torch, "xpu", fake)
        return fake

    return install
