"""Why is BERT-base slower under ``Trainer(compile=True)`` than in a hand-written compiled loop?

One process, one GPU: BERT-base bs64 seq128 (bf16 autocast, AdamW, data on the GPU), each loop
timed over ``--steps`` steps after ``--warmup``, in this order:

1. whether a freshly built ``BertForSequenceClassification`` is in training mode;
2. the hand-written compiled loop with the model left as built, then with ``model.train()`` (dropout
   on), then with ``model.eval()`` — so the cost of dropout is measured, not assumed;
3. the same through ``accelplug.Trainer(compile=True)`` (which puts the module in training mode, as
   every trainer does).

    source scripts/gpu/setup.sh && python3 scripts/gpu/bert_compile_check.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch.nn import functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))


def _bert() -> torch.nn.Module:
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    return BertForSequenceClassification(BertConfig(num_labels=2))


def _batch(device: torch.device) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    ids = torch.randint(0, 30522, (64, 128), device=device)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}, torch.randint(0, 2, (64,), device=device)


def hand_written(mode: str | None, steps: int, warmup: int) -> float:
    device = torch.device("cuda")
    model = _bert().to(device)
    if mode == "train":
        model.train()
    elif mode == "eval":
        model.eval()
    compiled = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    inputs, labels = _batch(device)
    for index in range(warmup + steps):
        if index == warmup:
            torch.cuda.synchronize()
            started = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(compiled(**inputs).logits, labels)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    return 64 * steps / (time.perf_counter() - started)


class _Module(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = _bert()

    def forward(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.model(**inputs).logits  # type: ignore[no-any-return]

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        inputs, labels = batch
        return F.cross_entropy(self(inputs), labels)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


class _Timer:
    def __init__(self, warmup: int, steps: int) -> None:
        self.warmup, self.steps, self.rate = warmup, steps, 0.0

    def on_train_batch_end(self, trainer: Any, module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        if batch_idx + 1 == self.warmup:
            torch.cuda.synchronize()
            self.started = time.perf_counter()
        elif batch_idx + 1 == self.warmup + self.steps:
            torch.cuda.synchronize()
            self.rate = 64 * self.steps / (time.perf_counter() - self.started)


def through_trainer(steps: int, warmup: int) -> float:
    from accelplug import Trainer

    batch = _batch(torch.device("cuda"))
    timer = _Timer(warmup, steps)
    trainer = Trainer(
        accelerator="cuda", devices=1, precision="bf16-mixed", compile=True, max_steps=warmup + steps,
        callbacks=[timer], logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, num_sanity_val_steps=0,
    )  # fmt: skip
    trainer.fit(_Module(), [batch] * (warmup + steps))
    return timer.rate


def alternating(rounds: int, steps: int, warmup: int) -> None:
    """Both loops in turns (the first of each pair alternating), medians: the comparison drift cannot bias."""
    import statistics

    rates: dict[str, list[float]] = {"hand-written": [], "Trainer": []}
    for index in range(rounds):
        order = ["hand-written", "Trainer"] if index % 2 == 0 else ["Trainer", "hand-written"]
        for loop in order:
            rate = hand_written("train", steps, warmup) if loop == "hand-written" else through_trainer(steps, warmup)
            rates[loop].append(rate)
            print(f"round {index}: {loop:12} {rate:8.1f} seq/s", flush=True)
    hand, ours = statistics.median(rates["hand-written"]), statistics.median(rates["Trainer"])
    pairs = [t / h for t, h in zip(rates["Trainer"], rates["hand-written"], strict=True)]
    print(
        f"medians: hand-written {hand:.1f}, Trainer {ours:.1f} seq/s; Trainer / hand-written {ours / hand:.3f} "
        f"(paired rounds {min(pairs):.3f}-{max(pairs):.3f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=0, help="instead: this many alternating rounds of both loops")
    args = parser.parse_args()
    if args.rounds:
        alternating(args.rounds, args.steps, args.warmup)
        return
    print(f"a freshly built BertForSequenceClassification is in training mode: {_bert().training}")
    for mode in (None, "train", "eval"):
        label = {None: "as built", "train": "model.train()", "eval": "model.eval()"}[mode]
        print(
            f"hand-written compiled, {label:14}: {hand_written(mode, args.steps, args.warmup):8.1f} seq/s", flush=True
        )
    print(f"Trainer(compile=True)               : {through_trainer(args.steps, args.warmup):8.1f} seq/s", flush=True)
    print(f"hand-written compiled, model.train() : {hand_written('train', args.steps, args.warmup):8.1f} seq/s (again)")


if __name__ == "__main__":
    main()
