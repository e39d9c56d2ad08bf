"""The exception hierarchy and its messages."""

from __future__ import annotations

from accelplug.errors import AcceleratorUnavailableError, MisconfigurationException, closest_match, did_you_mean


def test_misconfiguration_is_a_value_error() -> None:
    assert issubclass(MisconfigurationException, ValueError)


def test_unavailable_error_is_a_misconfiguration_with_accelerator_and_reason() -> None:
    error = AcceleratorUnavailableError("mps", "not a Mac", ["cuda", "cpu"])
    assert isinstance(error, MisconfigurationException)
    assert (error.accelerator, error.reason, error.available) == ("mps", "not a Mac", ["cuda", "cpu"])
    assert "accelerator='mps'" in str(error) and "not a Mac" in str(error) and "'cuda', 'cpu'" in str(error)


def test_closest_match_is_case_insensitive_and_keeps_the_choice_spelling() -> None:
    assert closest_match("MSP", ["cpu", "mps"]) == "mps"


def test_did_you_mean_is_empty_without_a_close_match() -> None:
    assert did_you_mean("zzz", ["cpu", "mps"]) == ""
    assert did_you_mean(3, ["cpu"]) == ""
