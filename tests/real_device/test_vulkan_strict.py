"""Under ``TORCHVULKAN_STRICT=1``: what a normal training step falls back to the CPU for, and that accelplug's
Trainer adds nothing to it (docs/plugins/real-device.md lists the operations)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Scenario = Callable[..., dict[str, Any]]


def strict(scenario: Scenario) -> dict[str, Any]:
    return scenario("strict")  # run with TORCHVULKAN_STRICT=1


def test_a_float32_and_a_float16_mixed_step_run_entirely_on_the_device(scenario: Scenario) -> None:
    run = strict(scenario)
    assert (run["raw/32-true"], run["raw/16-mixed"]) == ([], [])


def test_bfloat16_falls_back_to_the_cpu_on_lavapipe(scenario: Scenario) -> None:
    """lavapipe has no VK_KHR_shader_bfloat16: every bfloat16 kernel runs on the CPU (why bf16 is refused)."""
    lacking = strict(scenario)["raw/bf16 weights"]
    assert "torchvulkan [WARNING]: A BFloat16 matmul can't run on the Vulkan device. Falling back to CPU." in lacking


def test_the_trainer_adds_no_fallback_to_the_step(scenario: Scenario) -> None:
    """A fit with validation, logging, the progress display, checkpoints, device statistics and gradient clipping."""
    run = strict(scenario)
    assert run["trainer/32-true"] == run["raw/32-true"]
    assert run["trainer/16-mixed"] == run["raw/16-mixed"]


def test_a_fallback_inside_the_trainer_would_be_seen(scenario: Scenario) -> None:
    """The control: one bfloat16 copy in the step shows through the Trainer."""
    copy = "torchvulkan [WARNING]: Vulkan device does not support source or destination dtype. Falling back to CPU"
    assert strict(scenario)["trainer/control"] == [f"{copy} for copy."]
