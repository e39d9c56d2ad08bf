"""A ``KeyboardInterrupt`` raised inside a Trainer call (by a callback, the module, or Ctrl-C outside ``fit``'s own
signal guard) ends the call as Lightning's Trainer ends it: ``on_exception`` for the callbacks, the datamodule and the
strategy, the teardown, ``trainer.interrupted``, then ``SystemExit(1)``; the SIGINT handler is the one from before.

Lightning's test suite raises such an interrupt in one test and expects ``SystemExit``: a ``KeyboardInterrupt``
escaping instead stopped the whole pytest session there.
"""

from __future__ import annotations

import importlib
import signal
from typing import Any

import pytest

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}
QUIET = {"logger": False, "enable_progress_bar": False, "enable_model_summary": False, "enable_checkpointing": False}


def _interrupted_fit(framework: Any, stage: str) -> tuple[Any, list[BaseException], SystemExit]:
    """A fit whose callback raises KeyboardInterrupt at ``stage``; the trainer, what on_exception saw, the exit."""
    package = "accelplug" if framework is accelplug else "lightning.pytorch"
    boring = importlib.import_module(f"{package}.demos.boring_classes")
    seen: list[BaseException] = []

    class Interrupt(framework.Callback):  # type: ignore[name-defined,misc]
        def on_train_batch_start(self, *args: Any) -> None:
            if stage == "batch":
                raise KeyboardInterrupt

        def on_fit_start(self, *args: Any) -> None:
            if stage == "fit_start":
                raise KeyboardInterrupt

        def on_exception(self, trainer: Any, module: Any, exception: BaseException) -> None:
            seen.append(exception)

    trainer = framework.Trainer(callbacks=[Interrupt()], max_steps=2, **QUIET)
    with quiet_lightning(framework), pytest.raises(SystemExit) as caught:
        trainer.fit(boring.BoringModel())
    return trainer, seen, caught.value


@pytest.mark.parametrize("stage", ["batch", "fit_start"])
@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_a_keyboard_interrupt_in_fit_exits_with_status_1_after_on_exception(name: str, stage: str) -> None:
    trainer, seen, exit_ = _interrupted_fit(FRAMEWORKS[name], stage)
    assert exit_.code == 1
    assert trainer.interrupted
    assert [type(e) for e in seen] == [KeyboardInterrupt]


def test_the_strategy_hears_of_the_interrupt_and_sigint_is_left_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    heard: list[BaseException] = []
    monkeypatch.setattr(accelplug.strategies.base.Strategy, "on_exception", lambda self, exc: heard.append(exc))
    before = signal.getsignal(signal.SIGINT)
    _interrupted_fit(accelplug, "batch")
    assert [type(e) for e in heard] == [KeyboardInterrupt]
    assert signal.getsignal(signal.SIGINT) is before


def test_the_graceful_shutdown_is_announced(capsys: pytest.CaptureFixture[str]) -> None:
    _interrupted_fit(accelplug, "batch")
    assert "Detected KeyboardInterrupt, attempting graceful shutdown" in capsys.readouterr().err
