"""``weights_only=None`` means torch's own default, for the Trainer, Fabric and the checkpoint writers alike."""

from __future__ import annotations

import pytest

from accelplug.checkpoint.file import resolve_weights_only


@pytest.mark.parametrize("given", [True, False])
def test_an_explicit_choice_is_kept_whatever_torch_is_told(given: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    assert resolve_weights_only(given) is given


def test_none_loads_weights_only_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    assert resolve_weights_only(None) is True


@pytest.mark.parametrize("value", ["1", "true", "YES", "y"])
def test_none_follows_torchs_switch_for_old_checkpoints(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", value)
    assert resolve_weights_only(None) is False
