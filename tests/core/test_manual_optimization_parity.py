"""Manual optimization calls as Lightning 2.6 answers them, the same module run under both frameworks.

``toggle_optimizer`` freezes only the parameters of the run's *other* optimizers (a layer that no optimizer
holds keeps its ``requires_grad``, so the loss still has a gradient through it), ``untoggle_optimizer`` gives
them back what they had, and ``manual_backward(loss, retain_graph=True)`` passes its extra arguments on to
``loss.backward``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}


def _loader() -> torch.utils.data.DataLoader[Any]:
    generator = torch.Generator().manual_seed(0)
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 4, generator=generator)), 4)


def _trainer(framework: Any, root: Path) -> Any:
    return framework.Trainer(
        max_epochs=1,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=str(root),
    )


def _two_optimizer_module(framework: Any) -> Any:
    """Two optimizers over two layers, a head that neither holds, one frozen weight in each layer."""

    class TwoOptimizers(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.automatic_optimization = False
            self.first = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 4))
            self.second = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 4))
            self.head = torch.nn.Linear(4, 1)  # in no optimizer
            self.first[1].weight.requires_grad_(False)
            self.second[1].weight.requires_grad_(False)
            self.seen: list[tuple[bool, ...]] = []

        def _flags(self) -> tuple[bool, ...]:
            return tuple(p.requires_grad for p in self.parameters())

        def training_step(self, batch: Any, batch_idx: int) -> None:
            (x,) = batch
            for opt in self.optimizers():
                self.toggle_optimizer(opt)
                self.seen.append(self._flags())
                loss = self.head(self.second(self.first(x))).pow(2).mean()
                opt.zero_grad()
                self.manual_backward(loss)
                opt.step()
                self.untoggle_optimizer(opt)
                self.seen.append(self._flags())

        def configure_optimizers(self) -> Any:
            return [
                torch.optim.SGD(self.first.parameters(), lr=0.1),
                torch.optim.SGD(self.second.parameters(), lr=0.1),
            ]

    return TwoOptimizers()


def test_toggling_freezes_only_the_other_optimizers_parameters_as_lightning_does(tmp_path: Path) -> None:
    seen = {}
    for name, framework in FRAMEWORKS.items():
        module = _two_optimizer_module(framework)
        before = module._flags()
        _trainer(framework, tmp_path / name).fit(module, _loader())
        seen[name] = module.seen
        assert module._flags() == before  # untoggled: every parameter as it started
    assert seen["accelplug"] == seen["lightning"]
    assert seen["accelplug"][0][-2:] == (True, True)  # the head, in no optimizer, still requires grad


def _backward_twice_module(framework: Any) -> Any:
    class BackwardTwice(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.automatic_optimization = False
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch: Any, batch_idx: int) -> None:
            (x,) = batch
            opt = self.optimizers()
            loss = self.layer(x.exp()).pow(2).mean()  # exp keeps its output for backward: a second pass needs it
            opt.zero_grad()
            self.manual_backward(loss, retain_graph=True)
            self.manual_backward(loss)  # through the same graph again: only possible if retain_graph reached it
            opt.step()

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return BackwardTwice()


def test_manual_backward_passes_retain_graph_on_to_loss_backward(tmp_path: Path) -> None:
    finals = {}
    for name, framework in FRAMEWORKS.items():
        module = _backward_twice_module(framework)
        _trainer(framework, tmp_path / name).fit(module, _loader())
        finals[name] = [p.detach().clone() for p in module.parameters()]
    for ours, theirs in zip(finals["accelplug"], finals["lightning"], strict=True):
        torch.testing.assert_close(ours, theirs)
