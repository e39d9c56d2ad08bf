"""The LSTM language model of Lightning's demos (``lightning.pytorch.demos.lstm``), trained on WikiText-2.

The model is PyTorch's word-language-model example: an embedding, a stacked LSTM and a linear decoder to the
vocabulary, with dropout between them. :class:`SequenceSampler` cuts the token stream into ``batch_size``
parallel streams, so consecutive batches continue each other and the hidden state can be carried over.
"""

from __future__ import annotations

from collections.abc import Iterator, Sized
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.data import DataLoader, Sampler

from ..core.module import LightningModule
from .transformer import WikiText2

__all__ = ["LightningLSTM", "SequenceSampler", "SimpleLSTM"]


class SimpleLSTM(nn.Module):
    """Embedding -> dropout -> ``nlayers`` LSTM layers (batch first) -> dropout -> decoder; ``forward`` returns
    log-probabilities over the vocabulary, one row per token, and the new hidden state."""

    def __init__(
        self, vocab_size: int = 33278, ninp: int = 512, nhid: int = 512, nlayers: int = 4, dropout: float = 0.2
    ) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocab_size, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout, batch_first=True)
        self.decoder = nn.Linear(nhid, vocab_size)
        self.nlayers = nlayers
        self.nhid = nhid
        self.init_weights()

    def init_weights(self) -> None:
        """Embedding and decoder weights uniform in [-0.1, 0.1], decoder bias zero."""
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, input: Tensor, hidden: tuple[Tensor, Tensor]) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        output, new_hidden = self.rnn(self.drop(self.encoder(input)), hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.vocab_size)
        return F.log_softmax(decoded, dim=1), new_hidden

    def init_hidden(self, batch_size: int) -> tuple[Tensor, Tensor]:
        """Zero hidden and cell states for ``batch_size`` streams, on the parameters' device and dtype."""
        weight = next(self.parameters())
        shape = (self.nlayers, batch_size, self.nhid)
        return weight.new_zeros(shape), weight.new_zeros(shape)


class SequenceSampler(Sampler[list[int]]):
    """Batches of ``batch_size`` indices, one from each of ``batch_size`` equal chunks of the dataset: batch ``i``
    holds item ``i`` of every chunk, so each position of a batch reads its chunk in order."""

    def __init__(self, dataset: Sized, batch_size: int) -> None:
        super().__init__()
        self.dataset = dataset
        self.batch_size = batch_size
        self.chunk_size = len(self.dataset) // self.batch_size

    def __iter__(self) -> Iterator[list[int]]:
        usable = len(self.dataset) - len(self.dataset) % self.batch_size
        for offset in range(self.chunk_size):
            yield list(range(offset, usable, self.chunk_size))

    def __len__(self) -> int:
        return self.chunk_size


class LightningLSTM(LightningModule):
    """:class:`SimpleLSTM` trained on :class:`WikiText2` (20 streams), the hidden state carried from batch to batch
    (detached) and reset at each epoch's end; logs ``train_loss``; SGD at lr 20."""

    def __init__(self, vocab_size: int = 33278) -> None:
        super().__init__()
        self.model = SimpleLSTM(vocab_size=vocab_size)
        self.hidden: tuple[Tensor, Tensor] | None = None

    def on_train_epoch_end(self) -> None:
        self.hidden = None

    def training_step(self, batch: tuple[Tensor, Tensor], batch_idx: int) -> Any:
        inputs, target = batch
        if self.hidden is None:
            self.hidden = self.model.init_hidden(inputs.size(0))
        hidden = (self.hidden[0].detach(), self.hidden[1].detach())
        output, self.hidden = self.model(inputs, hidden)
        loss = F.nll_loss(output, target.view(-1))
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def prepare_data(self) -> None:
        WikiText2(download=True)

    def train_dataloader(self) -> Any:
        dataset = WikiText2()
        return DataLoader(dataset, batch_sampler=SequenceSampler(dataset, batch_size=20))

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=20.0)
