"""Lightning's own example: a Transformer language model on WikiText-2, from ``lightning.pytorch.demos``.

Source:    Lightning-AI/pytorch-lightning at commit 7f0c3436cd3f6ad3753125672024fc415cbcb414
           (https://github.com/Lightning-AI/pytorch-lightning), examples/pytorch/basics/transformer.py
Licence:   Apache-2.0 (Copyright The Lightning AI team)
Written:   for this test after reading the source, not copied. Every call into Lightning is as the
           example makes it: ``import lightning as L``, ``from lightning.pytorch.demos import Transformer``,
           L.LightningModule, self.log(..., prog_bar=True) in the three steps, L.seed_everything(42),
           L.Trainer(gradient_clip_val=0.25, max_epochs=...), fit(model, train, val) and test(model, test).
Changes:   - WikiText2 downloads its text: replaced by the stand-in in _synthetic.py (same (input, target)
             token blocks and vocab_size; 64 tokens, 170 blocks); the 2000/2000 val/test split -> 20/20.
           - max_epochs 20 -> 1; added: the last line writes results.json for the runner.
Exercises: lightning.pytorch.demos.Transformer (a public demo model projects import), gradient clipping by
           norm, validation_step/test_step returning the loss, the default Trainer otherwise.
"""

import lightning as L
import torch
import torch.nn.functional as F
from _synthetic import WikiText2, report, weights_digest
from lightning.pytorch.demos import Transformer
from torch.utils.data import DataLoader, random_split


class LanguageModel(L.LightningModule):
    def __init__(self, vocab_size):
        super().__init__()
        self.model = Transformer(vocab_size=vocab_size)

    def training_step(self, batch, batch_idx):
        input, target = batch
        loss = F.nll_loss(self.model(input, target), target.view(-1))
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        input, target = batch
        loss = F.nll_loss(self.model(input, target), target.view(-1))
        self.log("val_loss", loss, prog_bar=True)
        return loss

    def test_step(self, batch, batch_idx):
        input, target = batch
        loss = F.nll_loss(self.model(input, target), target.view(-1))
        self.log("test_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    L.seed_everything(42)
    dataset = WikiText2()
    n = len(dataset)
    train_dataset, val_dataset, test_dataset = random_split(dataset, [n - 40, 20, 20])
    train_dataloader = DataLoader(train_dataset, batch_size=20, shuffle=True)
    val_dataloader = DataLoader(val_dataset, batch_size=20, shuffle=False)
    test_dataloader = DataLoader(test_dataset, batch_size=20, shuffle=False)

    model = LanguageModel(vocab_size=dataset.vocab_size)
    trainer = L.Trainer(gradient_clip_val=0.25, max_epochs=1)
    trainer.fit(model, train_dataloader, val_dataloader)
    results = trainer.test(model, test_dataloader)
    report(test=results[0], weights=weights_digest(model), global_step=trainer.global_step)


if __name__ == "__main__":
    main()
