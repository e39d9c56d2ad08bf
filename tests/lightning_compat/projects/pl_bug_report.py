"""Lightning's own bug-report template: the BoringModel every Lightning issue starts from.

Source:    Lightning-AI/pytorch-lightning at commit 7f0c3436cd3f6ad3753125672024fc415cbcb414
           (https://github.com/Lightning-AI/pytorch-lightning), examples/pytorch/bug_report/bug_report_model.py
Licence:   Apache-2.0 (Copyright The Lightning AI team)
Written:   for this test after reading the source, not copied. Every call into Lightning is as the
           template makes it: ``from lightning.pytorch import LightningModule, Trainer``, training_step
           returning {"loss": loss}, self.log in the three steps, configure_optimizers returning one SGD,
           Trainer(default_root_dir=os.getcwd(), limit_train_batches=1, limit_val_batches=1,
           limit_test_batches=1, num_sanity_val_steps=0, max_epochs=1, enable_model_summary=False),
           fit(model, train_dataloaders=..., val_dataloaders=...) and test(model, dataloaders=...).
Changes:   none but the added last line, which writes results.json for the runner (the template's data is
           random already; it sets no seed, so the runner compares what it produces, not its values).
Exercises: a step returning a dict, the limit_* arguments, the files Lightning writes by default.
"""

import os

import torch
from _synthetic import report
from lightning.pytorch import LightningModule, Trainer
from torch.utils.data import DataLoader, Dataset


class RandomDataset(Dataset):
    def __init__(self, size, length):
        self.len = length
        self.data = torch.randn(length, size)

    def __getitem__(self, index):
        return self.data[index]

    def __len__(self):
        return self.len


class BoringModel(LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(32, 2)

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch, batch_idx):
        loss = self(batch).sum()
        self.log("train_loss", loss)
        return {"loss": loss}

    def validation_step(self, batch, batch_idx):
        self.log("valid_loss", self(batch).sum())

    def test_step(self, batch, batch_idx):
        self.log("test_loss", self(batch).sum())

    def configure_optimizers(self):
        return torch.optim.SGD(self.layer.parameters(), lr=0.1)


def run():
    train_data = DataLoader(RandomDataset(32, 64), batch_size=2)
    val_data = DataLoader(RandomDataset(32, 64), batch_size=2)
    test_data = DataLoader(RandomDataset(32, 64), batch_size=2)

    model = BoringModel()
    trainer = Trainer(
        default_root_dir=os.getcwd(),
        limit_train_batches=1,
        limit_val_batches=1,
        limit_test_batches=1,
        num_sanity_val_steps=0,
        max_epochs=1,
        enable_model_summary=False,
    )
    trainer.fit(model, train_dataloaders=train_data, val_dataloaders=val_data)
    trainer.test(model, dataloaders=test_data)
    report(global_step=trainer.global_step, epoch=trainer.current_epoch, metrics=sorted(trainer.callback_metrics))


if __name__ == "__main__":
    run()
