"""An LLM-scale anchor (issue 31): a Llama-style decoder trained with FSDP2 + compile + activation checkpointing.

    python benchmarks/llm_fsdp.py --out "$OUT"                                 # 2 GPUs (one torchrun job)
    python benchmarks/llm_fsdp.py --device cpu --quick --out /tmp/llm          # checks the script with gloo

The model (written here): token embedding, ``--layers`` pre-norm blocks of RMSNorm -> grouped-query attention
with rotary position embeddings (``F.scaled_dot_product_attention``, causal) -> RMSNorm -> SwiGLU MLP, a final
RMSNorm and an untied output projection. Default size: width 2048, 16 layers, 32 query heads and 8 key/value
heads (head size 64), MLP hidden 8192, vocabulary 32000: 1.10B parameters. Sequence 2048, ``--batch`` 4 per
GPU, AdamW, random tokens (a fixed set of batches cycled, so the loss falls and two runs can be compared).

Loops, run in the same processes in ``--rounds`` interleaved rounds with the order rotated:

- ``raw``: a hand-written loop the way torchtitan builds its own: the model made on the meta device; per
  block activation checkpointing (``checkpoint_wrapper``), ``torch.compile(block, fullgraph=True)`` and
  ``fully_shard``, then ``fully_shard`` of the root, ``to_empty`` on the GPU and initialisation of the shards;
  bf16 parameters and fp32 gradient reduction (``MixedPrecisionPolicy``);
- ``trainer``: accelplug's ``Trainer(strategy=FSDPStrategy(auto_wrap_policy={Block},
  activation_checkpointing_policy={Block}), precision="bf16-mixed", compile=True)``, the model made in
  ``trainer.init_module(empty_init=True)``;
- ``trainer-composable``: the same with activation checkpointing by torch's composable (hook-based)
  ``checkpoint``, what the strategy did under ``compile`` before issue 31 (the strategy now puts
  ``torch.utils.checkpoint`` inside the compiled forward);
- ``trainer-fp8``: the same as ``trainer`` with ``plugins=[Float8Precision()]`` (torchao's float8 training of
  the blocks' Linear layers, tensor-wise scales; needs torchao and a Hopper GPU) instead of ``precision=``.

Reported per loop: tokens/s per GPU (median over rounds, each round listed), MFU = model FLOPs per token x
tokens/s per GPU / the GPU's dense bf16 peak (``--peak-tflops``, default 989: the H100/H200 SXM datasheet
figure), with model FLOPs per token = 6 x (parameters outside the embedding) + 12 x layers x width x sequence
(the attention scores and their weighted sum, forward and backward; recomputation by activation
checkpointing not counted), peak memory per GPU, and the per-step losses of the last round.
Writes ``llm_fsdp.json`` and ``llm_fsdp.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


# ---- the model ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Shape:
    width: int = 2048
    layers: int = 16
    heads: int = 32
    kv_heads: int = 8
    hidden: int = 8192
    vocab: int = 32000
    seq: int = 2048
    rope_theta: float = 500000.0

    @property
    def head_dim(self) -> int:
        return self.width // self.heads


class RMSNorm(torch.nn.Module):
    def __init__(self, width: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.empty(width))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        torch.nn.init.ones_(self.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        normed = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return normed.type_as(x) * self.weight


def rotary_tables(shape: Shape, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of each position's angles, (seq, head_dim / 2), in float32."""
    half = shape.head_dim // 2
    frequencies = 1.0 / (shape.rope_theta ** (torch.arange(0, half, device=device, dtype=torch.float32) / half))
    angles = torch.outer(torch.arange(shape.seq, device=device, dtype=torch.float32), frequencies)
    return angles.cos(), angles.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary embedding of (batch, heads, seq, head_dim), the two halves of each head as the pair's parts."""
    first, second = x.float().chunk(2, dim=-1)
    rotated = torch.cat((first * cos - second * sin, first * sin + second * cos), dim=-1)
    return rotated.type_as(x)


class Attention(torch.nn.Module):
    def __init__(self, shape: Shape) -> None:
        super().__init__()
        self.shape = shape
        self.wq = torch.nn.Linear(shape.width, shape.heads * shape.head_dim, bias=False)
        self.wk = torch.nn.Linear(shape.width, shape.kv_heads * shape.head_dim, bias=False)
        self.wv = torch.nn.Linear(shape.width, shape.kv_heads * shape.head_dim, bias=False)
        self.wo = torch.nn.Linear(shape.heads * shape.head_dim, shape.width, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        s = self.shape
        batch, seq, _ = x.shape
        q = self.wq(x).view(batch, seq, s.heads, s.head_dim).transpose(1, 2)
        k = self.wk(x).view(batch, seq, s.kv_heads, s.head_dim).transpose(1, 2)
        v = self.wv(x).view(batch, seq, s.kv_heads, s.head_dim).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        repeat = s.heads // s.kv_heads  # grouped-query attention: each key/value head serves `repeat` query heads
        k, v = k.repeat_interleave(repeat, dim=1), v.repeat_interleave(repeat, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(out.transpose(1, 2).reshape(batch, seq, s.width))


class SwiGLU(torch.nn.Module):
    def __init__(self, shape: Shape) -> None:
        super().__init__()
        self.w1 = torch.nn.Linear(shape.width, shape.hidden, bias=False)
        self.w3 = torch.nn.Linear(shape.width, shape.hidden, bias=False)
        self.w2 = torch.nn.Linear(shape.hidden, shape.width, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(torch.nn.Module):
    def __init__(self, shape: Shape) -> None:
        super().__init__()
        self.attention_norm = RMSNorm(shape.width)
        self.attention = Attention(shape)
        self.mlp_norm = RMSNorm(shape.width)
        self.mlp = SwiGLU(shape)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.attention_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Decoder(torch.nn.Module):
    def __init__(self, shape: Shape) -> None:
        super().__init__()
        self.shape = shape
        self.embedding = torch.nn.Embedding(shape.vocab, shape.width)
        self.layers = torch.nn.ModuleList(Block(shape) for _ in range(shape.layers))
        self.norm = RMSNorm(shape.width)
        self.output = torch.nn.Linear(shape.width, shape.vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        cos, sin = rotary_tables(self.shape, tokens.device)
        x = self.embedding(tokens)
        for block in self.layers:
            x = block(x, cos, sin)
        return self.output(self.norm(x))


def loss_of(model: torch.nn.Module, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    logits = model(tokens)
    return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())


def flops_per_token(shape: Shape, parameters: int) -> float:
    """Model FLOPs of one trained token: 6 per non-embedding parameter, plus attention's 12 x layers x width x seq."""
    return 6.0 * (parameters - shape.vocab * shape.width) + 12.0 * shape.layers * shape.width * shape.seq


class DecoderModule(torch.nn.Module):
    """The decoder in Lightning's protocol (accelplug's Trainer)."""

    def __init__(self, shape: Shape, lr: float) -> None:
        super().__init__()
        self.model = Decoder(shape)
        self.lr = lr
        self.losses: list[torch.Tensor] = []

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.model(tokens)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        tokens, targets = batch
        loss = loss_of(self, tokens, targets)
        self.losses.append(loss.detach())
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return _adamw(self.parameters(), self.lr)


def _adamw(parameters: Any, lr: float) -> torch.optim.Optimizer:
    return torch.optim.AdamW(parameters, lr=lr, betas=(0.9, 0.95), weight_decay=0.1, foreach=True)


# ---- the loops ---------------------------------------------------------------------------------------
def _initialise(model: torch.nn.Module) -> None:
    """Each module's own ``reset_parameters`` on its (sharded) tensors, as torchtitan's ``init_weights``."""
    with torch.no_grad():
        for module in model.modules():
            reset = getattr(module, "reset_parameters", None)
            if callable(reset):
                reset()


def raw_loop(shape: Shape, data: Any, device: torch.device, lr: float) -> tuple[torch.nn.Module, list[float]]:
    import torch.distributed as dist
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    cuda = device.type == "cuda"
    with torch.device("meta"):
        model = Decoder(shape)
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if cuda else None
    options: dict[str, Any] = {"mesh": mesh, "mp_policy": policy or MixedPrecisionPolicy()}
    for index, block in enumerate(model.layers):
        wrapped = checkpoint_wrapper(block, preserve_rng_state=False)
        compiled = torch.compile(wrapped, fullgraph=True)
        fully_shard(compiled, **options)
        model.layers.register_module(str(index), compiled)
    fully_shard(model, **options)
    model.to_empty(device=device)
    torch.manual_seed(0)
    _initialise(model)
    optimizer = _adamw(model.parameters(), lr)
    losses: list[torch.Tensor] = []
    for tokens, targets in data:
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(model, tokens, targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return model, [float(v) for v in torch.stack(losses).cpu()]


def trainer_loop(
    shape: Shape, data: Any, device: torch.device, lr: float, *, fp8: bool = False, composable: bool = False
) -> tuple[torch.nn.Module, list[float]]:
    from accelplug import Trainer
    from accelplug.strategies import FSDPStrategy

    strategy_class: Any = FSDPStrategy
    if composable:  # what the strategy did before issue 31 under compile too: torch's hook-based checkpoint

        class ComposableAC(FSDPStrategy):
            @staticmethod
            def _checkpoint_activations(module: torch.nn.Module, compiling: bool) -> None:
                FSDPStrategy._checkpoint_activations(module, False)

        strategy_class = ComposableAC

    cuda = device.type == "cuda"
    precision: dict[str, Any] = {"precision": "bf16-mixed" if cuda else "32-true"}
    if fp8:
        from accelplug.plugins.precision import Float8Precision

        precision = {"plugins": [Float8Precision()]}
    trainer = Trainer(
        accelerator=device.type, devices=int(os.environ.get("LOCAL_WORLD_SIZE", "1")),
        strategy=strategy_class(auto_wrap_policy={Block}, activation_checkpointing_policy={Block}),
        compile=True, max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, num_sanity_val_steps=0, use_distributed_sampler=False, **precision,
    )  # fmt: skip
    torch.manual_seed(0)
    with trainer.init_module(empty_init=True):
        module = DecoderModule(shape, lr)
    trainer.fit(module, data)
    return module, [float(v) for v in torch.stack(module.losses).cpu()]


# ---- one process of the job ----------------------------------------------------------------------------
def child(args: argparse.Namespace) -> None:
    import torch.distributed as dist

    sys.path.insert(0, str(HERE.parent))
    from workloads import TimedBatches

    local, rank = int(os.environ.get("LOCAL_RANK", "0")), int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    cuda = args.device == "cuda"
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
        torch.set_float32_matmul_precision("high")
    dist.init_process_group("nccl" if cuda else "gloo", device_id=device if cuda else None)
    shape = Shape(width=64, layers=2, heads=4, kv_heads=2, hidden=128, vocab=256, seq=32) if args.quick else Shape()
    batch = 2 if args.quick else args.batch
    generator = torch.Generator().manual_seed(1000 + rank)
    distinct = [torch.randint(0, shape.vocab, (batch, shape.seq + 1), generator=generator) for _ in range(4)]
    steps = args.warmup + args.steps + 1
    batches = [(d[:, :-1].to(device), d[:, 1:].to(device)) for d in (distinct[i % 4] for i in range(steps))]
    parameters = sum(p.numel() for p in Decoder(shape).parameters()) if args.quick else _count(shape)
    loops = [name for name in args.loops.split(",") if name]
    result: dict[str, Any] = {"rank": rank, "world": world, "parameters": parameters, "loops": {}}
    for loop in loops:
        result["loops"][loop] = {"tokens_per_s": [], "peak_memory_gib": [], "losses": None, "first_steps_s": []}
    for round_index in range(args.rounds):
        shift = round_index % len(loops)
        for loop in loops[shift:] + loops[:shift]:
            data = TimedBatches(batches, device, warmup=args.warmup)
            if cuda:
                torch.cuda.reset_peak_memory_stats(device)
            started = time.perf_counter()
            error = None
            try:
                if loop == "raw":
                    model, losses = raw_loop(shape, data, device, args.lr)
                else:
                    fp8, composable = loop == "trainer-fp8", loop == "trainer-composable"
                    model, losses = trainer_loop(shape, data, device, args.lr, fp8=fp8, composable=composable)
            except Exception as exc:  # one loop failing (fp8 without torchao) leaves the others' figures
                import traceback

                error = f"{type(exc).__name__}: {exc}"[:600]
                traceback.print_exc()
            entry = result["loops"][loop]
            if error is not None:
                entry["error"] = error
            else:
                entry["tokens_per_s"].append(data.timed_steps * batch * shape.seq / data.seconds)
                entry["peak_memory_gib"].append(torch.cuda.max_memory_allocated(device) / 2**30 if cuda else 0.0)
                entry["losses"] = [round(v, 4) for v in losses]
                entry["first_steps_s"].append(round(time.perf_counter() - started - data.seconds, 1))
                del model
            Path(args.result_dir, f"rank{rank}.json").write_text(json.dumps(result))  # kept if the job is cut short
            torch._dynamo.reset()  # every loop compiles from scratch (inductor's on-disk cache still serves)
            gc.collect()
            if cuda:
                torch.cuda.empty_cache()
            dist.barrier()
    dist.destroy_process_group()
    Path(args.result_dir, f"rank{rank}.json").write_text(json.dumps(result))


def _count(shape: Shape) -> int:
    with torch.device("meta"):
        return sum(p.numel() for p in Decoder(shape).parameters())


# ---- the orchestrator ------------------------------------------------------------------------------------
def markdown(report: dict[str, Any]) -> str:
    meta = report["meta"]
    lines = [
        f"Measured {meta['date']} on {meta['gpus']} x {meta['device_name']}, torch {meta['torch']}, "
        f"command `{meta['command']}`.",
        "",
        f"{meta['parameters'] / 1e9:.2f}B parameters, sequence {meta['seq']}, batch {meta['batch']} per GPU, "
        f"{meta['steps']} timed steps a run, {meta['rounds']} interleaved rounds; model FLOPs per token "
        f"{meta['flops_per_token'] / 1e9:.2f} G; MFU over {meta['peak_tflops']:g} TFLOP/s dense bf16 per GPU.",
        "",
        "| loop | tokens/s per GPU: median (each round) | to hand-written | MFU | peak memory/GPU (GiB) "
        "| first steps + set-up (s) |",
        "|---|---|---|---|---|---|",
    ]
    raw = report["loops"].get("raw", {}).get("rounds")
    for name, entry in report["loops"].items():
        if entry.get("error"):
            lines.append(f"| {name} | failed: {entry['error'][:200]} | | | | |")
            continue
        rounds = entry["rounds"]
        each = ", ".join(f"{v:.0f}" for v in rounds)
        ratio = "1"
        if raw and name != "raw" and len(raw) == len(rounds):
            values = [v / r for v, r in zip(rounds, raw, strict=True)]
            ratio = f"{statistics.median(values):.3f} ({min(values):.3f}–{max(values):.3f})"
        peak = f"{entry['peak_memory_gib']:.1f}"
        first = ", ".join(f"{v:.0f}" for v in entry["first_steps_s"])
        speed = f"{entry['tokens_per_s']:.0f} ({each})"
        lines.append(f"| {name} | {speed} | {ratio} | {100 * entry['mfu']:.1f}% | {peak} | {first} |")
    losses = {n: e.get("losses") for n, e in report["loops"].items() if e.get("losses")}
    if len(losses) > 1:
        lines += ["", "Losses of the last round, rank 0, step by step:", ""]
        lines += [f"- {name}: {', '.join(f'{v:.3f}' for v in values)}" for name, values in losses.items()]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--loops", default="raw,trainer,trainer-fp8")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=4)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--peak-tflops", type=float, default=989.0)
    parser.add_argument("--timeout-s", type=float, default=560)
    parser.add_argument("--out", default=os.environ.get("OUT") or "llm_out")
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--result-dir", default=".")
    args = parser.parse_args()
    if args.child:
        child(args)
        return 0
    os.environ.update(NO_MULTICAST)
    results = Path(tempfile.mkdtemp(prefix="llm_fsdp_"))
    passed = sys.argv[1:]  # the child ignores --out
    port = str(29500 + (os.getpid() + int(time.time())) % 1000)
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(args.gpus)]
    command += ["--master-port", port, str(HERE), *passed, "--child", "--result-dir", str(results)]
    env = dict(os.environ, **NO_MULTICAST)
    env.setdefault("ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    started = time.monotonic()
    try:
        done = subprocess.run(command, env=env, timeout=args.timeout_s, cwd=REPO, capture_output=True, text=True)
        code, stderr = done.returncode, done.stderr
    except subprocess.TimeoutExpired as exc:
        code, stderr = 124, (exc.stderr.decode() if isinstance(exc.stderr, bytes) else str(exc.stderr or ""))
    per_rank = [json.loads(p.read_text()) for p in sorted(results.glob("rank*.json"))]
    shape = Shape(width=64, layers=2, heads=4, kv_heads=2, hidden=128, vocab=256, seq=32) if args.quick else Shape()
    parameters = per_rank[0]["parameters"] if per_rank else _count(shape)
    per_token = flops_per_token(shape, parameters)
    report: dict[str, Any] = {
        "meta": {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "torch": torch.__version__,
            "device_name": torch.cuda.get_device_name(0) if args.device == "cuda" else "CPU (gloo)",
            "gpus": args.gpus,
            "parameters": parameters,
            "seq": shape.seq,
            "batch": 2 if args.quick else args.batch,
            "steps": args.steps,
            "rounds": args.rounds,
            "flops_per_token": per_token,
            "peak_tflops": args.peak_tflops,
            "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
            "returncode": code,
            "seconds": round(time.monotonic() - started, 1),
        },
        "loops": {},
        "stderr_tail": stderr[-4000:] if code else "",
    }
    for loop in [name for name in args.loops.split(",") if name]:
        entries = [r["loops"][loop] for r in per_rank]
        errors = [e["error"] for e in entries if e.get("error")]
        if errors or not entries or not entries[0]["tokens_per_s"]:
            report["loops"][loop] = {"error": errors[0] if errors else "no result (see stderr_tail)"}
            continue
        rounds = [statistics.mean(v) for v in zip(*(e["tokens_per_s"] for e in entries), strict=False)]
        median = statistics.median(rounds)
        report["loops"][loop] = {
            "rounds": rounds,
            "tokens_per_s": median,
            "mfu": median * per_token / (args.peak_tflops * 1e12),
            "peak_memory_gib": max(max(e["peak_memory_gib"]) for e in entries),
            "first_steps_s": entries[0]["first_steps_s"],
            "losses": entries[0]["losses"],
        }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "llm_fsdp.json").write_text(json.dumps(report, indent=1))
    (out / "llm_fsdp.md").write_text(markdown(report))
    print(markdown(report))
    if code:
        print(stderr[-4000:])
    return 0 if code == 0 and not any("error" in e for e in report["loops"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
