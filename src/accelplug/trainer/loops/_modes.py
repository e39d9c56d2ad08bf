"""Each submodule's train/eval mode, as the user left it: kept through evaluation, never forced by training.

Lightning 2.6 never calls ``.train()`` on the whole module: a submodule the user put in eval mode (a frozen
backbone, a Hugging Face model loaded in eval mode) stays so while training, and the fit says so once with a
``PossibleUserWarning``. Validation, testing and prediction put the module in eval mode (the
``on_{stage}_model_eval`` hook when the module overrides it) and afterwards give every submodule back the mode
it had (the ``on_{stage}_model_train`` hook instead, when overridden; prediction has no such hook).
"""

from __future__ import annotations

import torch

from ...distributed.rank_zero import rank_zero_warn
from ...errors import PossibleUserWarning

__all__ = ["ModuleModes", "eval_target", "warn_if_modules_in_eval_mode"]


class ModuleModes:
    """The ``training`` flag of every submodule of ``module`` (by name) when made; :meth:`restore` puts them back."""

    def __init__(self, module: torch.nn.Module) -> None:
        self.modes = {name: sub.training for name, sub in module.named_modules()}

    def restore(self, module: torch.nn.Module) -> None:
        # The flags themselves, as Lightning sets them: a submodule's own train() override is not called, and
        # one added since (its structure changed) keeps the mode it has.
        for name, sub in module.named_modules():
            mode = self.modes.get(name)
            if mode is not None:
                sub.training = mode


def eval_target(module: torch.nn.Module, wrapped: object) -> torch.nn.Module:
    """What an evaluation switches to eval mode: the strategy's wrapper (``trainer.model``, DDP's) where there is
    one, so that ``trainer.model.training`` is False during it too, as Lightning's default
    ``on_{stage}_model_eval`` (``trainer.model.eval()``) leaves it; else the module. Only the module's
    submodules get their modes back afterwards (the wrapper's own flag does not matter to its forward), as in
    Lightning."""
    return wrapped if isinstance(wrapped, torch.nn.Module) else module


def warn_if_modules_in_eval_mode(module: torch.nn.Module) -> None:
    """At the start of training: how many submodules are in eval mode, when any is (Lightning's warning)."""
    in_eval = [name for name, sub in module.named_modules() if not sub.training]
    if in_eval:
        shown = ", ".join(repr(name) for name in in_eval[:5]) + (", ..." if len(in_eval) > 5 else "")
        rank_zero_warn(
            f"Found {len(in_eval)} module(s) in eval mode at the start of training ({shown}). They train in eval "
            "mode (dropout off, batch-norm statistics frozen), as you left them; call .train() on them before "
            "fit() if that is not what you want.",
            category=PossibleUserWarning,
        )
