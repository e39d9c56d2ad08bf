"""Sharded training (FSDP2): a small transformer whose parameters, gradients and optimizer state are split
over the processes. The same script runs on 2 CPU processes (gloo), on GPUs, or on one device.

    accelplug launch --cpu --devices 2 examples/fsdp_example.py
    accelplug launch --devices 2 examples/fsdp_example.py --precision bf16-mixed     # two GPUs, nccl
    python examples/fsdp_example.py                                                   # one device, no launcher
    accelplug launch --cpu --devices 2 examples/fsdp_example.py --state-dict-type sharded --save ck/last.ckpt
    python examples/fsdp_example.py --resume ck/last.ckpt --max-steps 12              # resumed on one process

``Block`` is the shard unit (``auto_wrap_policy={Block}``): its parameters are gathered just before it
runs and freed after. ``--save`` writes a checkpoint (full on rank 0, or sharded by every rank);
``--resume`` continues from one, on any number of processes. Rank 0 prints one JSON line with the
per-step losses, the world size and the peak memory.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from accelplug import Trainer
from accelplug.strategies import FSDPStrategy


class Block(torch.nn.Module):
    """A pre-norm transformer block (attention + MLP)."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(width)
        self.attention = torch.nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm2 = torch.nn.LayerNorm(width)
        hidden = 4 * width
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class TinyTransformer(torch.nn.Module):
    """Embedding, ``depth`` blocks in an ``nn.ModuleList``, a head: next-token prediction on random tokens."""

    def __init__(self, vocab: int = 64, width: int = 32, depth: int = 2, heads: int = 2, lr: float = 3e-3) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.blocks = torch.nn.ModuleList(Block(width, heads) for _ in range(depth))
        self.norm = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, vocab)
        self.lr = lr
        self.losses: list[torch.Tensor] = []

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits of every position, as (batch * sequence, vocab)."""
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x).flatten(0, 1))

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        tokens, targets = batch
        loss = torch.nn.functional.cross_entropy(self(tokens).float(), targets.flatten())
        self.losses.append(loss.detach())
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        tokens, targets = batch
        return torch.nn.functional.cross_entropy(self(tokens).float(), targets.flatten())

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


def token_data(samples: int, seq: int, vocab: int = 64) -> TensorDataset:
    """Random tokens whose target is the next token of a fixed permutation (learnable, deterministic)."""
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, vocab, (samples, seq), generator=generator)
    permutation = torch.randperm(vocab, generator=generator)
    return TensorDataset(tokens, permutation[tokens])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accelerator", default="auto")
    parser.add_argument("--devices", default="auto")
    parser.add_argument("--strategy", default="fsdp", choices=["fsdp", "single_device", "ddp"])
    parser.add_argument("--precision", default="32-true")
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=8, help="per process")
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--state-dict-type", default="full", choices=["full", "sharded"])
    parser.add_argument("--activation-checkpointing", action="store_true")
    parser.add_argument("--cpu-offload", action="store_true")
    parser.add_argument("--sharding-strategy", default="FULL_SHARD")
    parser.add_argument("--device-mesh", default=None, help="REPLICAS,SHARDS: hybrid sharding over a 2-D mesh")
    parser.add_argument("--gradient-clip-val", type=float, default=None)
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--save", default=None, help="save a checkpoint here after training")
    parser.add_argument("--resume", default=None, help="continue from this checkpoint")
    parser.add_argument("--root-dir", default=None)
    return parser


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = build_parser().parse_args(argv)
    strategy: Any = args.strategy
    if args.strategy == "fsdp":
        strategy = FSDPStrategy(
            auto_wrap_policy={Block},
            activation_checkpointing_policy={Block} if args.activation_checkpointing else None,
            cpu_offload=args.cpu_offload,
            state_dict_type=args.state_dict_type,
            sharding_strategy=args.sharding_strategy,
            device_mesh=tuple(int(n) for n in args.device_mesh.split(",")) if args.device_mesh else None,
        )
    devices: int | str = int(args.devices) if args.devices.isdigit() else args.devices
    trainer = Trainer(
        accelerator=args.accelerator,
        devices=devices,
        strategy=strategy,
        precision=args.precision,
        max_steps=args.max_steps,
        gradient_clip_val=args.gradient_clip_val,
        accumulate_grad_batches=args.accumulate,
        compile=args.compile,
        default_root_dir=args.root_dir,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        logger=False,
        num_sanity_val_steps=0,
        seed=0,
        use_distributed_sampler=False,
    )
    torch.manual_seed(0)
    model = TinyTransformer(width=args.width, depth=args.depth)
    data = token_data(args.samples, args.seq)
    # Selecting the device does not initialise CUDA (and torch refuses to reset the statistics of an
    # allocator that does not exist yet); when nothing touched CUDA, the peak counts from fit already.
    if trainer.root_device.type == "cuda" and torch.cuda.is_initialized():
        torch.cuda.reset_peak_memory_stats(trainer.root_device)
    # Each process takes every world_size-th sample in order, so the loss curve equals one device's whatever the
    # number of processes (the Trainer's own sharding shuffles a training loader, as Lightning's does).
    in_order = DistributedSampler(data, num_replicas=trainer.world_size, rank=trainer.global_rank, shuffle=False)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=in_order)
    trainer.fit(model, loader, ckpt_path=args.resume)
    if args.save:
        trainer.save_checkpoint(args.save)
    report = {
        "strategy": trainer.strategy.name,
        "world_size": trainer.world_size,
        "global_step": trainer.global_step,
        # Each rank's mean over its own shard of the batch; averaged across ranks it is the global loss.
        "losses": [float(trainer.strategy.reduce_mean(loss)) for loss in model.losses],
        "peak_memory_mb": (
            torch.cuda.max_memory_allocated(trainer.root_device) / 2**20 if trainer.root_device.type == "cuda" else None
        ),
    }
    if trainer.is_global_zero:
        print("RESULT " + json.dumps(report), flush=True)
    return report


if __name__ == "__main__":
    main()
