"""The encoder-decoder language model of Lightning's demos (``lightning.pytorch.demos.Transformer``).

Built so that a project switching its import gets the same model: the same submodules created in the same
order (so one seed gives the same initial weights), the same forward pass, the same output shape
(``(batch * seq_len, vocab_size)`` log-probabilities). That includes a quirk of Lightning's positional
encoding: every token gets the encoding of position ``seq_len`` (one row of the table), not its own position.
It is kept, because changing it would change every result a migrated project compares against.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["PositionalEncoding", "Transformer"]


def _causal_mask(size: int, device: torch.device) -> Tensor:
    """``-inf`` above the diagonal, 0 elsewhere: a position attends to itself and the ones before it."""
    return torch.full((size, size), float("-inf"), device=device).triu(diagonal=1)


class PositionalEncoding(nn.Module):
    """Sine/cosine position table (built on first use, on the input's device), added to the embeddings, then
    dropout."""

    def __init__(self, dim: int, dropout: float = 0.1, max_len: int = 5000) -> None:
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        self.dim = dim
        self.max_len = max_len
        self.pe: Tensor | None = None

    def _table(self, device: torch.device) -> Tensor:
        position = torch.arange(self.max_len, dtype=torch.float, device=device).unsqueeze(1)
        frequency = torch.exp(torch.arange(0, self.dim, 2, device=device).float() * (-math.log(10000.0) / self.dim))
        table = torch.zeros(self.max_len, self.dim, device=device)
        table[:, 0::2] = torch.sin(position * frequency)
        table[:, 1::2] = torch.cos(position * frequency)
        return table.unsqueeze(0)

    def forward(self, x: Tensor) -> Tensor:
        if self.pe is None:
            self.pe = self._table(x.device)
        shifted: Tensor = self.dropout(x + self.pe[:, x.size(1)])  # row seq_len for every token, as Lightning's
        return shifted


class Transformer(nn.Module):
    """``nn.Transformer`` between a token embedding and a linear decoder to the vocabulary (batch first)."""

    def __init__(
        self,
        vocab_size: int = 33278,
        ninp: int = 200,
        nhead: int = 2,
        nhid: int = 200,
        nlayers: int = 2,
        dropout: float = 0.2,
    ) -> None:
        super().__init__()
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.embedding = nn.Embedding(vocab_size, ninp)
        self.transformer = nn.Transformer(
            d_model=ninp,
            nhead=nhead,
            num_encoder_layers=nlayers,
            num_decoder_layers=nlayers,
            dim_feedforward=nhid,
            dropout=dropout,
            batch_first=True,
        )
        self.decoder = nn.Linear(ninp, vocab_size)
        self.ninp = ninp
        self.vocab_size = vocab_size
        self.src_mask: Tensor | None = None

    def generate_square_subsequent_mask(self, size: int) -> Tensor:
        """The causal mask for ``size`` positions (on the CPU; ``forward`` moves it)."""
        return _causal_mask(size, torch.device("cpu"))

    def forward(self, inputs: Tensor, target: Tensor, mask: Tensor | None = None) -> Tensor:
        length = inputs.shape[1]
        if self.src_mask is None or self.src_mask.size(0) != length:
            self.src_mask = _causal_mask(length, inputs.device)
        if mask is None:
            mask = _causal_mask(length, inputs.device)
        scale = math.sqrt(self.ninp)
        source = self.pos_encoder(self.embedding(inputs) * scale)
        shifted = self.pos_encoder(self.embedding(target) * scale)
        output = self.decoder(self.transformer(source, shifted, tgt_mask=mask))
        return F.log_softmax(output, dim=-1).view(-1, self.vocab_size)
