"""What a ``training_step`` returned, what to tell the user when backward cannot use it, and what manual
optimization refuses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from ...errors import MisconfigurationException

__all__ = ["check_manual_output", "explain_backward", "loss_of", "refuse_skipping"]


def loss_of(output: Any) -> torch.Tensor | None:
    """The loss in a ``training_step`` output; None (skip this batch) when it returned None."""
    if isinstance(output, torch.Tensor):
        return output
    if output is None:
        return None
    if not isinstance(output, Mapping):
        raise MisconfigurationException(
            f"training_step returned a {type(output).__name__}: in automatic optimization it must return a Tensor, a "
            "dict, or None (the loss tensor itself, a dict with the loss under 'loss', or None to skip the batch)."
        )
    loss = output.get("loss")
    if isinstance(loss, torch.Tensor):
        return loss
    if "loss" in output:
        raise MisconfigurationException(
            f"training_step returned a dict whose 'loss' is a {type(loss).__name__}: it must be the loss tensor, "
            "computed from the module's parameters."
        )
    raise MisconfigurationException(
        f"training_step returned a dict with keys {sorted(map(str, output))}: in automatic optimization the 'loss' "
        "key needs to be present, holding the loss tensor (or return None to skip the batch)."
    )


def refuse_skipping(world_size: int) -> None:
    """``training_step`` returned None: under automatic optimization with several processes this raises (Lightning's
    ``RuntimeError``), since the other processes would wait for this one's gradients."""
    if world_size > 1:
        raise RuntimeError(
            f"Skipping the `training_step` by returning None on one of {world_size} processes is not supported: "
            "the other processes would wait for its gradients. Return a loss on every process (to skip a batch's "
            "update, a loss that gives zero gradients, such as `loss * 0`)."
        )


def check_manual_output(output: Any) -> None:
    """Manual optimization: what ``training_step`` may return (Lightning refuses anything else)."""
    if output is not None and not isinstance(output, (torch.Tensor, Mapping)):
        raise MisconfigurationException(
            f"training_step returned a {type(output).__name__}: with manual optimization it must return a Tensor or "
            "have no return (a dict of values is also taken); the optimizers step inside it."
        )


def explain_backward(loss: torch.Tensor, step: int, exc: RuntimeError) -> Exception:
    if loss.dim() != 0:
        return MisconfigurationException(
            f"training_step returned a loss of shape {tuple(loss.shape)} at step {step}; backward needs a scalar. "
            "Reduce it first, e.g. loss.mean()."
        )
    if not loss.requires_grad:
        return MisconfigurationException(
            f"training_step returned a loss that does not require grad at step {step} (computed under "
            "torch.no_grad(), detached, or from no trainable parameter), so there is nothing to backpropagate."
        )
    return exc
