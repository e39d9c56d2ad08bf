"""``LambdaCallback``: a callback made of functions, one per hook, for a quick hook without a class.

Each argument is a hook of Lightning's ``Callback`` (called as ``fn(trainer, pl_module, ...)``); the ones given are
set on the instance, where the Trainer's dispatcher finds them, and the others stay the base's no-ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import MisconfigurationException
from .base import Callback

__all__ = ["LambdaCallback"]


class LambdaCallback(Callback):
    def __init__(
        self,
        setup: Callable[..., Any] | None = None,
        teardown: Callable[..., Any] | None = None,
        on_fit_start: Callable[..., Any] | None = None,
        on_fit_end: Callable[..., Any] | None = None,
        on_sanity_check_start: Callable[..., Any] | None = None,
        on_sanity_check_end: Callable[..., Any] | None = None,
        on_train_batch_start: Callable[..., Any] | None = None,
        on_train_batch_end: Callable[..., Any] | None = None,
        on_train_epoch_start: Callable[..., Any] | None = None,
        on_train_epoch_end: Callable[..., Any] | None = None,
        on_validation_epoch_start: Callable[..., Any] | None = None,
        on_validation_epoch_end: Callable[..., Any] | None = None,
        on_test_epoch_start: Callable[..., Any] | None = None,
        on_test_epoch_end: Callable[..., Any] | None = None,
        on_validation_batch_start: Callable[..., Any] | None = None,
        on_validation_batch_end: Callable[..., Any] | None = None,
        on_test_batch_start: Callable[..., Any] | None = None,
        on_test_batch_end: Callable[..., Any] | None = None,
        on_train_start: Callable[..., Any] | None = None,
        on_train_end: Callable[..., Any] | None = None,
        on_validation_start: Callable[..., Any] | None = None,
        on_validation_end: Callable[..., Any] | None = None,
        on_test_start: Callable[..., Any] | None = None,
        on_test_end: Callable[..., Any] | None = None,
        on_exception: Callable[..., Any] | None = None,
        on_save_checkpoint: Callable[..., Any] | None = None,
        on_load_checkpoint: Callable[..., Any] | None = None,
        on_before_backward: Callable[..., Any] | None = None,
        on_after_backward: Callable[..., Any] | None = None,
        on_before_optimizer_step: Callable[..., Any] | None = None,
        on_before_zero_grad: Callable[..., Any] | None = None,
        on_predict_start: Callable[..., Any] | None = None,
        on_predict_end: Callable[..., Any] | None = None,
        on_predict_batch_start: Callable[..., Any] | None = None,
        on_predict_batch_end: Callable[..., Any] | None = None,
        on_predict_epoch_start: Callable[..., Any] | None = None,
        on_predict_epoch_end: Callable[..., Any] | None = None,
    ) -> None:
        given = {name: fn for name, fn in locals().items() if name not in ("self", "__class__") and fn is not None}
        for name, fn in given.items():
            if not callable(fn):
                raise MisconfigurationException(
                    f"LambdaCallback({name}={fn!r}) is invalid: give a function, called as "
                    f"{name}(trainer, pl_module, ...)."
                )
            setattr(self, name, fn)
