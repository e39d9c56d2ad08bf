"""UvA Deep Learning course, tutorial 6 (Transformers and multi-head attention): the sequence-reversal task.

Source:    phlippe/uvadlc_notebooks at commit 0da8037c7abc32f478ff6142acceb72dbcf088ee
           (https://github.com/phlippe/uvadlc_notebooks),
           docs/tutorial_notebooks/tutorial6/Transformers_and_MHAttention.ipynb: scaled_dot_product,
           MultiheadAttention, EncoderBlock, TransformerEncoder, PositionalEncoding, CosineWarmupScheduler,
           TransformerPredictor, ReverseDataset, ReversePredictor and train_reverse
Licence:   MIT (Copyright (c) 2020 Phillip Lippe)
Written:   for this test after reading the notebook, not copied. Every call into Lightning is as the
           notebook makes it: ``import pytorch_lightning as pl``, pl.seed_everything(42), save_hyperparameters
           read back through self.hparams, configure_optimizers returning
           ([optimizer], [{"scheduler": ..., "interval": "step"}]) with a custom _LRScheduler,
           self.log(f"{mode}_loss"/_acc"), Trainer(default_root_dir, callbacks=[ModelCheckpoint(
           save_weights_only=True, mode="max", monitor="val_acc")], accelerator, devices, max_epochs,
           gradient_clip_val=5), trainer.logger._default_hp_metric = None, trainer.max_epochs read before fit,
           trainer.test(model, loader, verbose=False)[0]["test_acc"].
Changes:   - the pretrained-checkpoint download cell and the plotting cells left out.
           - sizes: data sets of 50000/1000/10000 -> 1024/256/256 sequences, batch 128 -> 64,
             max_epochs 10 -> 2.
           - added: the last line writes results.json for the runner.
Exercises: the data is synthetic in the notebook itself (random digits, reversed), so nothing is stood in.
           A custom step-interval scheduler, gradient clipping, a monitored weights-only checkpoint, test()
           on two loaders with the metric keyed "test_acc" both times.
"""

import math
import os
from functools import partial

import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data as data
from _synthetic import report, weights_digest
from pytorch_lightning.callbacks import ModelCheckpoint

CHECKPOINT_PATH = "saved_models/tutorial6"
pl.seed_everything(42)
device = torch.device("cpu")


def scaled_dot_product(q, k, v, mask=None):
    logits = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        logits = logits.masked_fill(mask == 0, -9e15)
    attention = F.softmax(logits, dim=-1)
    return torch.matmul(attention, v), attention


class MultiheadAttention(nn.Module):
    def __init__(self, input_dim, embed_dim, num_heads):
        super().__init__()
        assert embed_dim % num_heads == 0, "Embedding dimension must be 0 modulo number of heads."
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.qkv_proj = nn.Linear(input_dim, 3 * embed_dim)  # the three projections stacked
        self.o_proj = nn.Linear(embed_dim, input_dim)
        for layer in (self.qkv_proj, self.o_proj):
            nn.init.xavier_uniform_(layer.weight)
            layer.bias.data.fill_(0)

    def forward(self, x, mask=None, return_attention=False):
        batch_size, seq_length, _ = x.size()
        qkv = self.qkv_proj(x).reshape(batch_size, seq_length, self.num_heads, 3 * self.head_dim).permute(0, 2, 1, 3)
        q, k, v = qkv.chunk(3, dim=-1)
        values, attention = scaled_dot_product(q, k, v, mask=mask)
        o = self.o_proj(values.permute(0, 2, 1, 3).reshape(batch_size, seq_length, self.embed_dim))
        return (o, attention) if return_attention else o


class EncoderBlock(nn.Module):
    def __init__(self, input_dim, num_heads, dim_feedforward, dropout=0.0):
        super().__init__()
        self.self_attn = MultiheadAttention(input_dim, input_dim, num_heads)
        self.linear_net = nn.Sequential(
            nn.Linear(input_dim, dim_feedforward),
            nn.Dropout(dropout),
            nn.ReLU(inplace=True),
            nn.Linear(dim_feedforward, input_dim),
        )
        self.norm1, self.norm2 = nn.LayerNorm(input_dim), nn.LayerNorm(input_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.dropout(self.self_attn(x, mask=mask)))
        return self.norm2(x + self.dropout(self.linear_net(x)))


class TransformerEncoder(nn.Module):
    def __init__(self, num_layers, **block_args):
        super().__init__()
        self.layers = nn.ModuleList([EncoderBlock(**block_args) for _ in range(num_layers)])

    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask=mask)
        return x


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000):
        super().__init__()
        position = torch.arange(max_len, dtype=torch.float).unsqueeze(1)
        frequencies = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * frequencies)
        pe[:, 1::2] = torch.cos(position * frequencies)
        self.register_buffer("pe", pe.unsqueeze(0), persistent=False)

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


class CosineWarmupScheduler(optim.lr_scheduler._LRScheduler):
    def __init__(self, optimizer, warmup, max_iters):
        self.warmup = warmup
        self.max_num_iters = max_iters
        super().__init__(optimizer)

    def get_lr(self):
        factor = self.get_lr_factor(epoch=self.last_epoch)
        return [base_lr * factor for base_lr in self.base_lrs]

    def get_lr_factor(self, epoch):
        factor = 0.5 * (1 + np.cos(np.pi * epoch / self.max_num_iters))
        if epoch <= self.warmup:
            factor *= epoch * 1.0 / self.warmup
        return factor


class TransformerPredictor(pl.LightningModule):
    def __init__(
        self,
        input_dim,
        model_dim,
        num_classes,
        num_heads,
        num_layers,
        lr,
        warmup,
        max_iters,
        dropout=0.0,
        input_dropout=0.0,
    ):
        super().__init__()
        self.save_hyperparameters()
        self._create_model()

    def _create_model(self):
        hp = self.hparams
        self.input_net = nn.Sequential(nn.Dropout(hp.input_dropout), nn.Linear(hp.input_dim, hp.model_dim))
        self.positional_encoding = PositionalEncoding(d_model=hp.model_dim)
        self.transformer = TransformerEncoder(
            num_layers=hp.num_layers,
            input_dim=hp.model_dim,
            dim_feedforward=2 * hp.model_dim,
            num_heads=hp.num_heads,
            dropout=hp.dropout,
        )
        self.output_net = nn.Sequential(
            nn.Linear(hp.model_dim, hp.model_dim),
            nn.LayerNorm(hp.model_dim),
            nn.ReLU(inplace=True),
            nn.Dropout(hp.dropout),
            nn.Linear(hp.model_dim, hp.num_classes),
        )

    def forward(self, x, mask=None, add_positional_encoding=True):
        x = self.input_net(x)
        if add_positional_encoding:
            x = self.positional_encoding(x)
        return self.output_net(self.transformer(x, mask=mask))

    def configure_optimizers(self):
        optimizer = optim.Adam(self.parameters(), lr=self.hparams.lr)
        lr_scheduler = CosineWarmupScheduler(optimizer, warmup=self.hparams.warmup, max_iters=self.hparams.max_iters)
        return [optimizer], [{"scheduler": lr_scheduler, "interval": "step"}]

    def training_step(self, batch, batch_idx):
        raise NotImplementedError

    def validation_step(self, batch, batch_idx):
        raise NotImplementedError

    def test_step(self, batch, batch_idx):
        raise NotImplementedError


class ReverseDataset(data.Dataset):
    def __init__(self, num_categories, seq_len, size):
        super().__init__()
        self.num_categories, self.seq_len, self.size = num_categories, seq_len, size
        self.data = torch.randint(self.num_categories, size=(self.size, self.seq_len))

    def __len__(self):
        return self.size

    def __getitem__(self, idx):
        inp_data = self.data[idx]
        return inp_data, torch.flip(inp_data, dims=(0,))


dataset = partial(ReverseDataset, 10, 16)
train_loader = data.DataLoader(dataset(1024), batch_size=64, shuffle=True, drop_last=True, pin_memory=True)
val_loader = data.DataLoader(dataset(256), batch_size=64)
test_loader = data.DataLoader(dataset(256), batch_size=64)


class ReversePredictor(TransformerPredictor):
    def _calculate_loss(self, batch, mode="train"):
        inp_data, labels = batch
        inp_data = F.one_hot(inp_data, num_classes=self.hparams.num_classes).float()
        preds = self.forward(inp_data, add_positional_encoding=True)
        loss = F.cross_entropy(preds.view(-1, preds.size(-1)), labels.view(-1))
        acc = (preds.argmax(dim=-1) == labels).float().mean()
        self.log(f"{mode}_loss", loss)
        self.log(f"{mode}_acc", acc)
        return loss, acc

    def training_step(self, batch, batch_idx):
        loss, _ = self._calculate_loss(batch, mode="train")
        return loss

    def validation_step(self, batch, batch_idx):
        self._calculate_loss(batch, mode="val")

    def test_step(self, batch, batch_idx):
        self._calculate_loss(batch, mode="test")


def train_reverse(**kwargs):
    root_dir = os.path.join(CHECKPOINT_PATH, "ReverseTask")
    os.makedirs(root_dir, exist_ok=True)
    trainer = pl.Trainer(
        default_root_dir=root_dir,
        callbacks=[ModelCheckpoint(save_weights_only=True, mode="max", monitor="val_acc")],
        accelerator="gpu" if str(device).startswith("cuda") else "cpu",
        devices=1,
        max_epochs=2,
        gradient_clip_val=5,
    )
    trainer.logger._default_hp_metric = None

    pretrained_filename = os.path.join(CHECKPOINT_PATH, "ReverseTask.ckpt")
    if os.path.isfile(pretrained_filename):
        print("Found pretrained model, loading...")
        model = ReversePredictor.load_from_checkpoint(pretrained_filename)
    else:
        model = ReversePredictor(max_iters=trainer.max_epochs * len(train_loader), **kwargs)
        trainer.fit(model, train_loader, val_loader)

    val_result = trainer.test(model, val_loader, verbose=False)
    test_result = trainer.test(model, test_loader, verbose=False)
    result = {"test_acc": test_result[0]["test_acc"], "val_acc": val_result[0]["test_acc"]}
    model = model.to(device)
    return model, result


if __name__ == "__main__":
    reverse_model, reverse_result = train_reverse(
        input_dim=train_loader.dataset.num_categories,
        model_dim=32,
        num_heads=1,
        num_classes=train_loader.dataset.num_categories,
        num_layers=1,
        dropout=0.0,
        lr=5e-4,
        warmup=50,
    )
    report(results=reverse_result, weights=weights_digest(reverse_model))
