"""Modules written the way public Lightning 2.x code is written, with ``import accelplug as L``.

Each is the shape of a common real module: an autoencoder with ``save_hyperparameters`` and
``test_step``; a classifier logging torchmetrics objects with ``ReduceLROnPlateau`` watching one; a GAN
with manual optimization and two optimizers; a module with its own data (``prepare_data``/``setup``/
``*_dataloader``); a ``LightningDataModule``; a DQN-style module streaming from an ``IterableDataset``
and reading ``self.global_step``. ``framework`` is the module namespace (accelplug, or lightning for
the parity tests), so the same class bodies run under both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, IterableDataset, TensorDataset, random_split


def low_rank_data(n: int = 256, seed: int = 0) -> TensorDataset:
    """16-dim points on a 3-dim subspace: an autoencoder with a 4-dim code can reconstruct them."""
    generator = torch.Generator().manual_seed(seed)
    basis = torch.randn(3, 16, generator=generator)
    return TensorDataset(torch.randn(n, 3, generator=generator) @ basis / 4)


def blobs(n: int = 300, seed: int = 0) -> TensorDataset:
    """Three Gaussian blobs in 2-D, one per class."""
    generator = torch.Generator().manual_seed(seed)
    labels = torch.arange(n) % 3
    centres = torch.tensor([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    return TensorDataset(centres[labels] + 0.6 * torch.randn(n, 2, generator=generator), labels)


def build(framework: Any) -> dict[str, type]:
    """The module classes on ``framework``'s base classes."""
    L = framework  # reads like the scripts it imitates

    class LitAutoEncoder(L.LightningModule):
        def __init__(self, code_dim: int = 4, lr: float = 1e-2) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, self.hparams.code_dim))
            self.decoder = nn.Sequential(nn.Linear(self.hparams.code_dim, 32), nn.ReLU(), nn.Linear(32, 16))
            self.hook_calls: list[str] = []

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.decoder(self.encoder(x))  # type: ignore[no-any-return]

        def _loss(self, batch: Any) -> torch.Tensor:
            (x,) = batch
            return F.mse_loss(self(x), x)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            loss = self._loss(batch)
            self.log("train_loss", loss)
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            self.log("val_loss", self._loss(batch), prog_bar=True)

        def test_step(self, batch: Any, batch_idx: int) -> None:
            self.log("test_loss", self._loss(batch))

        def configure_optimizers(self) -> Any:
            return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)

        def on_train_start(self) -> None:
            self.hook_calls.append("on_train_start")

        def on_train_epoch_end(self) -> None:
            self.hook_calls.append(f"on_train_epoch_end:{self.current_epoch}")

        def on_validation_epoch_end(self) -> None:
            self.hook_calls.append("on_validation_epoch_end")

        def on_test_epoch_end(self) -> None:
            self.hook_calls.append("on_test_epoch_end")

        def on_fit_end(self) -> None:
            self.hook_calls.append("on_fit_end")

    class LitClassifier(L.LightningModule):
        def __init__(self, lr: float = 0.2) -> None:
            super().__init__()
            self.save_hyperparameters()
            import torchmetrics

            self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 3))
            self.train_acc = torchmetrics.classification.MulticlassAccuracy(num_classes=3, average="micro")
            self.val_acc = torchmetrics.classification.MulticlassAccuracy(num_classes=3, average="micro")

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.net(x)  # type: ignore[no-any-return]

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            logits = self(x)
            loss = F.cross_entropy(logits, y)
            self.train_acc(logits, y)
            self.log("train_acc", self.train_acc, on_step=True, on_epoch=True, prog_bar=True)
            self.log("train_loss", loss)
            self.log("batch_index", float(batch_idx), on_step=False, on_epoch=True)
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            x, y = batch
            logits = self(x)
            self.val_acc.update(logits, y)
            self.log("val_acc", self.val_acc)
            self.log("val_loss", F.cross_entropy(logits, y))

        def configure_optimizers(self) -> Any:
            optimizer = torch.optim.SGD(self.parameters(), lr=self.hparams.lr)
            scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=0)
            return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "monitor": "val_acc"}}

    class GAN(L.LightningModule):
        def __init__(self, latent_dim: int = 2, lr: float = 5e-3) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.automatic_optimization = False
            self.generator = nn.Sequential(nn.Linear(latent_dim, 16), nn.ReLU(), nn.Linear(16, 1))
            self.discriminator = nn.Sequential(nn.Linear(1, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
            self.frozen_during_generator_step: list[bool] = []

        def forward(self, z: torch.Tensor) -> torch.Tensor:
            return self.generator(z)  # type: ignore[no-any-return]

        def training_step(self, batch: Any) -> None:
            (real,) = batch
            opt_g, opt_d = self.optimizers()
            z = torch.randn(real.size(0), self.hparams.latent_dim, device=self.device)
            ones = torch.ones(real.size(0), 1, device=self.device)

            self.toggle_optimizer(opt_g)
            self.frozen_during_generator_step.append(all(not p.requires_grad for p in self.discriminator.parameters()))
            g_loss = F.binary_cross_entropy_with_logits(self.discriminator(self(z)), ones)
            self.manual_backward(g_loss)
            opt_g.step()
            opt_g.zero_grad()
            self.untoggle_optimizer(opt_g)

            self.toggle_optimizer(opt_d)
            real_loss = F.binary_cross_entropy_with_logits(self.discriminator(real), ones)
            fake_loss = F.binary_cross_entropy_with_logits(self.discriminator(self(z).detach()), ones * 0)
            d_loss = (real_loss + fake_loss) / 2
            self.manual_backward(d_loss)
            opt_d.step()
            opt_d.zero_grad()
            self.untoggle_optimizer(opt_d)
            self.log_dict({"g_loss": g_loss, "d_loss": d_loss}, prog_bar=True)

        def configure_optimizers(self) -> Any:
            lr = self.hparams.lr
            opt_g = torch.optim.Adam(self.generator.parameters(), lr=lr, betas=(0.5, 0.999))
            opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=lr, betas=(0.5, 0.999))
            return [opt_g, opt_d], []

    class OwnDataModel(L.LightningModule):
        """Downloads (writes) its data in prepare_data, splits it in setup, serves its own loaders."""

        def __init__(self, data_dir: str) -> None:
            super().__init__()
            self.data_dir = Path(data_dir)
            self.layer = nn.Linear(3, 1)
            self.stages: list[str] = []

        def prepare_data(self) -> None:
            target = self.data_dir / "data.pt"
            if not target.exists():
                generator = torch.Generator().manual_seed(0)
                x = torch.randn(200, 3, generator=generator)
                torch.save({"x": x, "y": x @ torch.tensor([[1.0], [2.0], [-1.0]])}, target)

        def setup(self, stage: str) -> None:
            self.stages.append(stage)
            data = torch.load(self.data_dir / "data.pt", weights_only=True)
            dataset = TensorDataset(data["x"], data["y"])
            self.train_set, self.val_set = random_split(dataset, [160, 40], torch.Generator().manual_seed(0))

        def train_dataloader(self) -> Any:
            return DataLoader(self.train_set, batch_size=16, shuffle=True)

        def val_dataloader(self) -> Any:
            return DataLoader(self.val_set, batch_size=40)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            loss = F.mse_loss(self.layer(x), y)
            self.log("train_loss", loss)
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            x, y = batch
            self.log("val_loss", F.mse_loss(self.layer(x), y))

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    class RegressionDataModule(L.LightningDataModule):
        def __init__(self, batch_size: int = 16) -> None:
            super().__init__()
            self.batch_size = batch_size
            self.calls: list[str] = []

        def prepare_data(self) -> None:
            self.calls.append("prepare_data")

        def setup(self, stage: str) -> None:
            self.calls.append(f"setup:{getattr(stage, 'value', stage)}")
            generator = torch.Generator().manual_seed(1)
            x = torch.randn(240, 3, generator=generator)
            y = x @ torch.tensor([[1.0], [2.0], [-1.0]])
            self.train_set = TensorDataset(x[:160], y[:160])
            self.val_set = TensorDataset(x[160:200], y[160:200])
            self.test_set = TensorDataset(x[200:], y[200:])

        def train_dataloader(self) -> Any:
            return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True)

        def val_dataloader(self) -> Any:
            return DataLoader(self.val_set, batch_size=self.batch_size)

        def test_dataloader(self) -> Any:
            return DataLoader(self.test_set, batch_size=self.batch_size)

        def teardown(self, stage: str) -> None:
            self.calls.append(f"teardown:{getattr(stage, 'value', stage)}")

        def state_dict(self) -> dict[str, Any]:
            return {"batch_size": self.batch_size}

    class LinearOnDataModule(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.Linear(3, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            loss = F.mse_loss(self.layer(x), y)
            self.log("train_loss", loss)
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            x, y = batch
            self.log("val_loss", F.mse_loss(self.layer(x), y))

        def test_step(self, batch: Any, batch_idx: int) -> None:
            x, y = batch
            self.log("test_loss", F.mse_loss(self.layer(x), y))

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    class ReplayStream(IterableDataset[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]):
        """Experience sampled from a buffer the agent fills as it acts (a DQN's replay memory)."""

        def __init__(self, agent: Any, samples: int) -> None:
            self.agent = agent
            self.samples = samples

        def __iter__(self) -> Any:
            for _ in range(self.samples):
                yield self.agent.act_once()

    class BanditDQN(L.LightningModule):
        """Learns Q(state, action) = reward on a contextual bandit, exploring with a decaying epsilon."""

        def __init__(self, lr: float = 0.05, eps_decay_steps: int = 40) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.q = nn.Linear(4, 2)
            self.weights = torch.tensor([[1.0, -1.0], [0.5, 2.0], [-1.0, 0.0], [0.0, 1.0]])
            self.generator = torch.Generator().manual_seed(0)
            self.epsilons: list[float] = []
            self.skipped = 0

        def epsilon(self) -> float:
            return max(0.05, 1.0 - self.global_step / self.hparams.eps_decay_steps)

        def act_once(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            state = torch.randn(4, generator=self.generator)
            if float(torch.rand((), generator=self.generator)) < self.epsilon():
                action = int(torch.randint(0, 2, (), generator=self.generator))
            else:
                with torch.no_grad():
                    action = int(self.q(state).argmax())
            reward = (state @ self.weights)[action]
            return state, torch.tensor(action), reward

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor | None:
            self.epsilons.append(self.epsilon())
            if batch_idx % 5 == 4:
                self.skipped += 1
                return None  # a batch the agent decides not to learn from
            states, actions, rewards = batch
            predicted = self.q(states).gather(1, actions.unsqueeze(1)).squeeze(1)
            loss = F.mse_loss(predicted, rewards)
            self.log("td_loss", loss, prog_bar=True)
            return loss

        def train_dataloader(self) -> Any:
            return DataLoader(ReplayStream(self, 320), batch_size=16)

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.q.parameters(), lr=self.hparams.lr)

    return {
        "LitAutoEncoder": LitAutoEncoder,
        "LitClassifier": LitClassifier,
        "GAN": GAN,
        "OwnDataModel": OwnDataModel,
        "RegressionDataModule": RegressionDataModule,
        "LinearOnDataModule": LinearOnDataModule,
        "BanditDQN": BanditDQN,
    }
