"""The benchmark workloads: a model, its batch shape, and how a batch is fed to it.

Weights are random (built from configurations, never downloaded) because throughput does not depend
on their values, and a benchmark must run on a machine without network. torchvision and transformers
are optional (``pip install 'accelplug[bench]'``); the tiny CNN needs only torch so ``--quick`` works
everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ..errors import MisconfigurationException, did_you_mean

__all__ = ["DEFAULT_MODELS", "QUICK_MODELS", "WORKLOADS", "Workload", "get_workload"]


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


def _needs(package: str, workload: str) -> None:
    import importlib.util

    if importlib.util.find_spec(package) is None:
        raise MisconfigurationException(
            f"model {workload!r} needs {package}, which is not installed here. Install the benchmark extra: "
            "pip install 'accelplug[bench]' (torchvision, transformers, matplotlib), or run "
            "`accelplug bench --quick`, which needs nothing extra."
        )


def _images(size: int) -> Callable[[int, torch.device], torch.Tensor]:
    def make(batch_size: int, device: torch.device) -> torch.Tensor:
        return torch.randn(batch_size, 3, size, size, device=device)

    return make


def _call(model: nn.Module, inputs: Any) -> torch.Tensor:
    out: torch.Tensor = model(inputs)
    return out


def _resnet50() -> nn.Module:
    _needs("torchvision", "resnet50")
    from torchvision.models import resnet50

    model: nn.Module = resnet50(weights=None)
    return model


def _vgg16() -> nn.Module:
    _needs("torchvision", "vgg16")
    from torchvision.models import vgg16

    model: nn.Module = vgg16(weights=None)
    return model


BERT_SEQ_LEN = 128


def _bert() -> nn.Module:
    _needs("transformers", "bert")
    from transformers import BertConfig, BertForSequenceClassification

    model: nn.Module = BertForSequenceClassification(BertConfig(num_labels=2))  # BERT-base sizes
    return model


def _bert_inputs(batch_size: int, device: torch.device) -> dict[str, torch.Tensor]:
    vocab_size = 30522  # BertConfig's default, the bert-base-uncased vocabulary
    ids = torch.randint(0, vocab_size, (batch_size, BERT_SEQ_LEN), device=device)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def _bert_forward(model: nn.Module, inputs: Any) -> torch.Tensor:
    logits: torch.Tensor = model(**inputs).logits
    return logits


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


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("resnet50", "ResNet50", 128, "images", True, _resnet50, _images(224), 1000, _call),
        Workload("bert", "BERT-base", 64, "sequences", False, _bert, _bert_inputs, 2, _bert_forward),
        Workload("vgg16", "VGG16", 64, "images", True, _vgg16, _images(224), 1000, _call),
        Workload("tinycnn", "tiny CNN", 64, "images", True, _tiny_cnn, _images(32), 10, _call),
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
