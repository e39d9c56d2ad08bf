"""Lightning's documentation on the Tuner: batch-size scaling and the learning-rate finder, as a script.

Source:    Lightning-AI/pytorch-lightning at commit 7f0c3436cd3f6ad3753125672024fc415cbcb414
           (https://github.com/Lightning-AI/pytorch-lightning), docs/source-pytorch/advanced/training_tricks.rst,
           sections "Batch Size Finder", "Using Lightning's built-in LR finder" and "Customizing Learning Rate
           Finder" (published at https://lightning.ai/docs/pytorch/stable/advanced/training_tricks.html)
Licence:   Apache-2.0 (Copyright The Lightning AI team)
Written:   for this test after reading the page, not copied: the page gives fragments (``LitModel(...)``,
           ``Trainer(...)``); this file fills them with a small regression model and its data, and keeps
           every call into Lightning the page shows: ``from lightning.pytorch.tuner import Tuner``,
           ``Tuner(trainer)``, ``tuner.scale_batch_size(model, mode="power")`` with the module's
           ``batch_size`` read by its train_dataloader, ``lr_finder = tuner.lr_find(model)``,
           ``lr_finder.results``, ``lr_finder.plot(suggest=True)``, ``lr_finder.suggestion()``,
           ``model.hparams.lr = new_lr``, ``trainer.fit(model)``, and the FineTuneLearningRateFinder
           subclass of ``LearningRateFinder`` run by a second Trainer with milestones.
Changes:   - the figure is saved to lr_finder.png instead of ``fig.show()``; sizes small (256 samples,
             max_epochs 2); the milestones (5, 10) -> (1,); added: the last line writes results.json.
Exercises: lightning.pytorch.tuner.Tuner, lightning.pytorch.callbacks.LearningRateFinder, hparams updated
           in place, a module providing its own train_dataloader.
"""

import lightning as L
import matplotlib
import torch
from _synthetic import report, weights_digest
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.callbacks import LearningRateFinder
from lightning.pytorch.tuner import Tuner
from torch.utils.data import DataLoader, TensorDataset

matplotlib.use("Agg")


def regression_data(n: int = 1024) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(n, 8, generator=generator)
    return TensorDataset(x, x @ torch.linspace(-1, 1, 8).unsqueeze(1) + 0.1 * torch.randn(n, 1, generator=generator))


train_dataset = regression_data()


class LitModel(LightningModule):
    def __init__(self, lr: float = 1e-3, batch_size: int = 16):
        super().__init__()
        self.save_hyperparameters()
        self.batch_size = batch_size
        self.model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.log("train_loss", loss)
        return loss

    def train_dataloader(self):
        return DataLoader(train_dataset, batch_size=self.batch_size, shuffle=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


class FineTuneLearningRateFinder(LearningRateFinder):
    def __init__(self, milestones, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.milestones = milestones

    def on_fit_start(self, *args, **kwargs):
        return

    def on_train_epoch_start(self, trainer, pl_module):
        if trainer.current_epoch in self.milestones or trainer.current_epoch == 0:
            self.lr_find(trainer, pl_module)


def main():
    L.seed_everything(7)
    model = LitModel()
    trainer = Trainer(max_epochs=2, enable_progress_bar=False)
    tuner = Tuner(trainer)

    lr_finder = tuner.lr_find(model)
    print(lr_finder.results)
    fig = lr_finder.plot(suggest=True)
    fig.savefig("lr_finder.png")
    new_lr = lr_finder.suggestion()
    model.hparams.lr = new_lr

    # grow the batch size by doubling it (the module's train_dataloader reads self.batch_size); with no
    # memory limit on the CPU it stops at the length of the data set
    tuner.scale_batch_size(model, mode="power")
    trainer.fit(model)

    callback_trainer = Trainer(
        max_epochs=2, enable_progress_bar=False, callbacks=[FineTuneLearningRateFinder(milestones=(1,))]
    )
    callback_trainer.fit(LitModel(batch_size=32))

    report(
        batch_size=model.batch_size,
        suggested_lr=new_lr,
        lr_points=len(lr_finder.results["lr"]),
        train_loss=trainer.callback_metrics["train_loss"],
        weights=weights_digest(model),
    )


if __name__ == "__main__":
    main()
