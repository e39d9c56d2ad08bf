"""Process-wide settings a run depends on: here the MPS CPU fallback, which torch reads only at import."""

from __future__ import annotations

from typing import Any

import pytest

from accelplug import Trainer


def test_mps_fallback_warns_when_torch_was_imported_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTORCH_ENABLE_MPS_FALLBACK", raising=False)
    with pytest.warns(UserWarning, match="mps_fallback=True has no effect"):
        Trainer(accelerator="cpu", mps_fallback=True)


def test_mps_fallback_keeps_a_value_the_user_set(monkeypatch: pytest.MonkeyPatch, recwarn: Any) -> None:
    monkeypatch.setenv("PYTORCH_ENABLE_MPS_FALLBACK", "0")
    Trainer(accelerator="cpu", mps_fallback=True)
    import os

    assert os.environ["PYTORCH_ENABLE_MPS_FALLBACK"] == "0"
    assert not [w for w in recwarn if "mps_fallback" in str(w.message)]
