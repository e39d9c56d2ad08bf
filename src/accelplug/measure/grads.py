"""Gradient norms to log: ``self.log_dict(grad_norm(self, norm_type=2))`` in ``on_before_optimizer_step``."""

from __future__ import annotations

import torch

from ..errors import MisconfigurationException

__all__ = ["grad_norm"]


def grad_norm(
    module: torch.nn.Module, norm_type: float | int | str, group_separator: str = "/"
) -> dict[str, torch.Tensor]:
    """The p-norm of each parameter's gradient, keyed ``grad_{p}_norm{sep}{name}``, and of all of them as one
    vector (``grad_{p}_norm_total``); parameters without a gradient are left out, and no gradient at all gives
    an empty dict. ``norm_type`` may be ``"inf"``. Lightning's keys, so dashboards keep their panels."""
    try:
        p = float(norm_type)
    except (TypeError, ValueError):
        p = float("nan")
    if not p > 0:  # also refuses nan
        raise MisconfigurationException(
            f"grad_norm(norm_type={norm_type!r}): `norm_type` must be a positive number or 'inf' (the infinity norm)."
        )
    norms = {
        f"grad_{p}_norm{group_separator}{name}": parameter.grad.detach().norm(p)
        for name, parameter in module.named_parameters()
        if parameter.grad is not None
    }
    if norms:
        norms[f"grad_{p}_norm_total"] = (
            torch.stack([n.to(torch.float64) for n in norms.values()]).norm(p).to(next(iter(norms.values())).dtype)
        )
    return norms
