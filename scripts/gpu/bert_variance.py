"""Why BERT-base figures disagree between runs on the lent H100: the hand-written loop disagrees with itself.

BERT-base at batch 64 is close to launch-bound on an H100 (hundreds of small kernels per step), so
host jitter on a shared machine moves its throughput a lot. This script times the hand-written eval
loop and accelplug's bench engine alternately in one process, three rounds, so the spread of each is
visible next to the other.  Run: ``source scripts/gpu/setup.sh && python3 scripts/gpu/bert_variance.py``
"""

from __future__ import annotations

import time

import torch
from transformers import BertConfig, BertForSequenceClassification

from accelplug.bench import runner
from accelplug.bench.models import get_workload

DEVICE = torch.device("cuda")


def plain() -> float:
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(num_labels=2)).to(DEVICE).eval()
    ids = torch.randint(0, 30522, (64, 128), device=DEVICE)
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    for i in range(40):
        if i == 10:
            torch.cuda.synchronize()
            start = time.perf_counter()
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
            _ = model(**inputs).logits
    torch.cuda.synchronize()
    return 64 * 30 / (time.perf_counter() - start)


def ours() -> float:
    seconds = dict(runner._measure(get_workload("bert"), DEVICE, "bf16-mixed", 10, 30, runner._Silent(), "bert"))
    return 64 * 30 / seconds["eval"]


if __name__ == "__main__":
    for _ in range(3):
        print(f"eval samples/s  hand-written {plain():8.0f}   accelplug bench {ours():8.0f}", flush=True)
