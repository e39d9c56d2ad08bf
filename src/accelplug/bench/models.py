"""The benchmark workloads: a model, its batch shape, and how a batch is fed to it.

Weights are random (built from configurations, never downloaded) because throughput does not depend
on their values, and a benchmark must run on a machine without network. torchvision and transformers
are optional (``pip install 'accelplug[bench]'``); each workload names the packages it needs, so the
command can refuse a missing one before anything is measured. The tiny CNN and the tiny BERT-like
encoder need only torch, so ``--quick`` (and ``--models tinybert``) work everywhere.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ..errors import MisconfigurationException, did_you_mean

__all__ = [
    "DEFAULT_MODELS",
    "QUICK_MODELS",
    "WORKLOADS",
    "Workload",
    "check_installed",
    "get_workload",
    "missing_packages",
]

#: Where each optional package comes from, for the message that asks to install it.
INSTALL_HINT = "pip install 'accelplug[bench]'"


@dataclass(frozen=True)
class Workload:
    """One row of the benchmark: what to build and what a batch looks like."""

    name: str
    title: str
    batch_size: int
    unit: str  # what one sample is, for "images/s" or "sequences/s"
    is_cnn: bool  # CNNs use channels_last on GPUs, where it is the fast memory layout
    build: Callable[[], nn.Module]
    make_inputs: Callable[[int, torch.device], Any]
    num_classes: int
    forward: Callable[[nn.Module, Any], torch.Tensor]  # returns logits
    requires: tuple[str, ...] = ()  # importable packages the model is built from


def _images(size: int) -> Callable[[int, torch.device], torch.Tensor]:
    def make(batch_size: int, device: torch.device) -> torch.Tensor:
        return torch.randn(batch_size, 3, size, size, device=device)

    return make


def _call(model: nn.Module, inputs: Any) -> torch.Tensor:
    out: torch.Tensor = model(inputs)
    return out


def _resnet50() -> nn.Module:
    from torchvision.models import resnet50

    model: nn.Module = resnet50(weights=None)
    return model


def _vgg16() -> nn.Module:
    from torchvision.models import vgg16

    model: nn.Module = vgg16(weights=None)
    return model


BERT_SEQ_LEN = 128
BERT_VOCAB = 30522  # BertConfig's default, the bert-base-uncased vocabulary


def _bert() -> nn.Module:
    from transformers import BertConfig, BertForSequenceClassification

    model: nn.Module = BertForSequenceClassification(BertConfig(num_labels=2))  # BERT-base sizes
    return model


def _token_inputs(batch_size: int, device: torch.device) -> dict[str, torch.Tensor]:
    ids = torch.randint(0, BERT_VOCAB, (batch_size, BERT_SEQ_LEN), device=device)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def _bert_forward(model: nn.Module, inputs: Any) -> torch.Tensor:
    logits: torch.Tensor = model(**inputs).logits
    return logits


def _tiny_mlp() -> nn.Module:
    """64 -> 256 -> 256 -> 10 (the tiny MLP of the peers' per-step measurements): matrix products only, the
    workload a young backend or a software device (Vulkan on Mesa's lavapipe) runs in well under a second."""
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


def _features(width: int) -> Callable[[int, torch.device], torch.Tensor]:
    def make(batch_size: int, device: torch.device) -> torch.Tensor:
        return torch.randn(batch_size, width, device=device)

    return make


def _tiny_cnn() -> nn.Module:
    """Four conv blocks on 32x32 images: real convolutions and a backward pass, done in milliseconds."""

    def block(cin: int, cout: int) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

    return nn.Sequential(
        *block(3, 32),
        *block(32, 32),
        nn.MaxPool2d(2),
        *block(32, 64),
        *block(64, 64),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 8 * 8, 128),
        nn.ReLU(inplace=True),
        nn.Linear(128, 10),
    )


class TinyBert(nn.Module):
    """BERT's shape at a small size, from torch alone: token and position embeddings, LayerNorm, a
    post-norm GELU transformer encoder, a tanh pooler on the first token and a classifier.

    It stands in for BERT-base where transformers is not installed, so the per-step cost of the
    loops around a transformer (many small kernels, embedding gradients, an optimizer over ~4 M
    parameters) can be compared anywhere. It takes BERT's inputs (``input_ids``, ``attention_mask``).
    """

    def __init__(self, vocab: int = BERT_VOCAB, hidden: int = 128, layers: int = 2, heads: int = 2) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(BERT_SEQ_LEN, hidden)
        self.norm = nn.LayerNorm(hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, 4 * hidden, dropout=0.1, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.pooler = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, 2)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        hidden = self.norm(self.tokens(input_ids) + self.positions(positions))
        hidden = self.encoder(hidden, src_key_padding_mask=attention_mask == 0)
        pooled: torch.Tensor = torch.tanh(self.pooler(hidden[:, 0]))
        logits: torch.Tensor = self.classifier(pooled)
        return logits


def _tiny_bert_forward(model: nn.Module, inputs: Any) -> torch.Tensor:
    logits: torch.Tensor = model(**inputs)
    return logits


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("resnet50", "ResNet50", 128, "images", True, _resnet50, _images(224), 1000, _call, ("torchvision",)),
        Workload(
            "bert", "BERT-base", 64, "sequences", False, _bert, _token_inputs, 2, _bert_forward, ("transformers",)
        ),
        Workload("vgg16", "VGG16", 64, "images", True, _vgg16, _images(224), 1000, _call, ("torchvision",)),
        Workload("tinycnn", "tiny CNN", 64, "images", True, _tiny_cnn, _images(32), 10, _call),
        Workload("tinymlp", "tiny MLP", 64, "samples", False, _tiny_mlp, _features(64), 10, _call),
        Workload("tinybert", "tiny BERT", 32, "sequences", False, TinyBert, _token_inputs, 2, _tiny_bert_forward),
    )
}
DEFAULT_MODELS = ("resnet50", "bert", "vgg16")
QUICK_MODELS = ("tinycnn",)


def get_workload(name: str) -> Workload:
    key = name.strip().lower()
    if key not in WORKLOADS:
        raise MisconfigurationException(
            f"model {name!r} is not a benchmark model. Choose from: {', '.join(WORKLOADS)}."
            f"{did_you_mean(key, WORKLOADS)}"
        )
    return WORKLOADS[key]


def missing_packages(models: Iterable[str]) -> dict[str, list[str]]:
    """{package: [models needing it]} for the packages these models need that cannot be imported here."""
    missing: dict[str, list[str]] = {}
    for name in models:
        for package in get_workload(name).requires:
            if importlib.util.find_spec(package) is None:
                missing.setdefault(package, []).append(get_workload(name).name)
    return missing


def check_installed(models: Iterable[str]) -> None:
    """Refuse, before anything is measured, models whose packages are missing; the message says what to install."""
    missing = missing_packages(models)
    if not missing:
        return
    needs = ", ".join(
        f"{' and '.join(users)} need{'s' if len(users) == 1 else ''} {package}" for package, users in missing.items()
    )
    raise MisconfigurationException(
        f"{needs}, not installed here. Install the benchmark extra: {INSTALL_HINT} "
        f"(or pip install {' '.join(missing)}), or run `accelplug bench --quick`, which needs nothing extra."
    )
