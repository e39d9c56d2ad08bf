"""How much BERT-base throughput moves on the lent H100, for the hand-written loop and accelplug's engine.

BERT-base at batch 64 is close to launch-bound on an H100 (hundreds of small kernels per step), so
host jitter on a shared machine moves its throughput a lot. This script times the hand-written loop
and accelplug's bench engine alternately in one process, ``--rounds`` rounds, for training and for
evaluation, so the spread of each is visible next to the other.

    source scripts/gpu/setup.sh && python3 scripts/gpu/bert_variance.py [--rounds 3] [--steps 30]
"""

from __future__ import annotations

import argparse
import time

import torch
from transformers import BertConfig, BertForSequenceClassification

from accelplug.bench import runner
from accelplug.bench.models import get_workload

DEVICE = torch.device("cuda")
BATCH = 64


def plain(steps: int, warmup: int = 10) -> dict[str, float]:
    """The hand-written loop: training then evaluation, samples per second for each."""
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(num_labels=2)).to(DEVICE)
    ids = torch.randint(0, 30522, (BATCH, 128), device=DEVICE)
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    labels = torch.randint(0, 2, (BATCH,), device=DEVICE)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    result = {}
    for phase in ("train", "eval"):
        model.train(phase == "train")
        for i in range(warmup + steps):
            if i == warmup:
                torch.cuda.synchronize()
                start = time.perf_counter()
            if phase == "train":
                optimizer.zero_grad(set_to_none=True)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = torch.nn.functional.cross_entropy(model(**inputs).logits, labels)
                loss.backward()
                optimizer.step()
            else:
                with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
                    _ = model(**inputs).logits
        torch.cuda.synchronize()
        result[phase] = BATCH * steps / (time.perf_counter() - start)
    return result


def ours(steps: int, warmup: int = 10) -> dict[str, float]:
    """accelplug's bench engine on the same model, batch and precision."""
    seconds = dict(runner._measure(get_workload("bert"), DEVICE, "bf16-mixed", warmup, steps, runner._Silent(), "bert"))
    return {phase: BATCH * steps / s for phase, s in seconds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    for _ in range(args.rounds):
        a, b = plain(args.steps), ours(args.steps)
        print(
            f"train samples/s hand-written {a['train']:7.0f} accelplug {b['train']:7.0f} | "
            f"eval hand-written {a['eval']:7.0f} accelplug {b['eval']:7.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
