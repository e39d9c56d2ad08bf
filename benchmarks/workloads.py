"""The models, data and training loops the GPU benchmarks compare: one definition, four ways to train it.

Shared by ``trainer_gpu.py`` (one GPU) and ``multi_gpu.py`` (several). Every loop trains the same
model on the same batches, already on the device (no data loader cost), and is timed the same way:
:class:`TimedBatches` records the moment the ``warmup``-th batch is taken and the moment the last
one is (after a device synchronisation), so setup, warm-up and teardown are outside the clock and
the window covers the same number of steps for every loop, whichever fetches a batch ahead.

The four loops:

- ``raw``: a hand-written PyTorch loop (zero_grad, forward under autocast, backward, step);
- ``accelplug``: ``accelplug.Trainer.fit`` on a module in Lightning's protocol;
- ``lightning``: ``lightning.Trainer.fit`` on the same module as a ``LightningModule``;
- ``accelerate``: ``Accelerator(mixed_precision=...)``, ``prepare``, ``backward``, the same loop.

``--quick`` sizes (used to check the scripts on a CPU) shrink every model and batch; the figures
they give mean nothing.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

# ---- timing ----------------------------------------------------------------------------------------


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class TimedBatches:
    """Pre-made batches; the clock runs from taking batch ``warmup`` to taking the last one."""

    def __init__(self, batches: list[Any], device: torch.device, warmup: int) -> None:
        if warmup < 2 or len(batches) < warmup + 2:
            # warmup >= 2: a loop that fetches one batch ahead (Lightning, accelplug) takes batch k before it runs
            # step k-1, so the first (compiling) step must lie before batch ``warmup`` for every loop.
            raise ValueError(f"need warmup >= 2 and at least warmup + 2 batches, got {warmup} and {len(batches)}")
        self.batches, self.device, self.warmup = batches, device, warmup
        self.started = self.finished = 0.0

    def __len__(self) -> int:
        return len(self.batches)

    def __iter__(self) -> Iterator[Any]:
        last = len(self.batches) - 1
        for index, batch in enumerate(self.batches):
            if index == self.warmup:
                synchronize(self.device)
                self.started = time.perf_counter()
            elif index == last:
                synchronize(self.device)
                self.finished = time.perf_counter()
            yield batch

    @property
    def timed_steps(self) -> int:
        return len(self.batches) - 1 - self.warmup

    @property
    def seconds(self) -> float:
        if self.finished <= self.started:
            raise RuntimeError("the loop did not consume every batch: the timing window is empty")
        return self.finished - self.started


class Batches:
    """A plain iterable of batches (a Trainer reads a bare ``list`` as several dataloaders, as Lightning does)."""

    def __init__(self, batches: list[Any]) -> None:
        self.batches = batches

    def __len__(self) -> int:
        return len(self.batches)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.batches)


# ---- workloads -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """One model and its batches: ``build()`` gives the model, ``batch(device)`` one (inputs, labels)."""

    name: str
    title: str
    batch_size: int
    unit: str  # what the throughput counts ("img/s", "seq/s") or "ms/step"
    build: Callable[[], torch.nn.Module]
    batch: Callable[[torch.device], tuple[Any, torch.Tensor]]
    optimizer: Callable[[Any], torch.optim.Optimizer]
    channels_last: bool = False


def _sgd(params: Any) -> torch.optim.Optimizer:
    return torch.optim.SGD(params, lr=0.01, momentum=0.9)


def _adamw(params: Any) -> torch.optim.Optimizer:
    return torch.optim.AdamW(params, lr=1e-5)


def _mlp() -> torch.nn.Module:
    layers = [torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(256, 10))


def _torchvision(name: str, quick: bool) -> Callable[[], torch.nn.Module]:
    def build() -> torch.nn.Module:
        import torchvision

        return getattr(torchvision.models, name)(weights=None, num_classes=10 if quick else 1000)  # type: ignore[no-any-return]

    return build


def _bert(quick: bool) -> Callable[[], torch.nn.Module]:
    def build() -> torch.nn.Module:
        from transformers import BertConfig, BertForSequenceClassification

        if quick:
            config = BertConfig(
                hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128, num_labels=2
            )
        else:
            config = BertConfig(num_labels=2)  # BERT-base: 12 layers, hidden 768
        return BertForSequenceClassification(config)

    return build


def _cnn(name: str, title: str, batch: int, quick: bool, images: Callable[[int], Any]) -> Workload:
    build = _torchvision(name, quick)
    return Workload(name, f"{title} bs{batch}", batch, "img/s", build, images(batch), _sgd, channels_last=True)


def workloads(quick: bool) -> dict[str, Workload]:
    """The benchmark's models at full size (GPU) or ``quick`` size (a CPU check of the scripts)."""
    image = 32 if quick else 224
    seq = 16 if quick else 128
    cnn_batch = {"resnet50": 4 if quick else 128, "vgg16": 4 if quick else 64}
    bert_batch = 4 if quick else 64
    classes = 10 if quick else 1000

    def images(batch: int) -> Callable[[torch.device], tuple[Any, torch.Tensor]]:
        def make(device: torch.device) -> tuple[Any, torch.Tensor]:
            x = torch.randn(batch, 3, image, image, device=device).contiguous(memory_format=torch.channels_last)
            return x, torch.randint(0, classes, (batch,), device=device)

        return make

    def tokens(device: torch.device) -> tuple[Any, torch.Tensor]:
        ids = torch.randint(0, 30522, (bert_batch, seq), device=device)
        labels = torch.randint(0, 2, (bert_batch,), device=device)
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}, labels

    def mlp_batch(device: torch.device) -> tuple[Any, torch.Tensor]:
        return torch.randn(64, 64, device=device), torch.randint(0, 10, (64,), device=device)

    return {
        "mlp": Workload("mlp", "tiny MLP 64→256→256→10 bs64", 64, "ms/step", _mlp, mlp_batch, _sgd),
        "resnet50": _cnn("resnet50", "ResNet50", cnn_batch["resnet50"], quick, images),
        "bert": Workload(
            "bert", f"BERT-base bs{bert_batch} seq{seq}", bert_batch, "seq/s", _bert(quick), tokens, _adamw
        ),
        "vgg16": _cnn("vgg16", "VGG16", cnn_batch["vgg16"], quick, images),
    }


def logits_of(model: torch.nn.Module, inputs: Any) -> torch.Tensor:
    out = model(**inputs) if isinstance(inputs, dict) else model(inputs)
    return out.logits if hasattr(out, "logits") else out  # type: ignore[no-any-return]


def make_model(workload: Workload, device: torch.device | None = None) -> torch.nn.Module:
    torch.manual_seed(0)
    model = workload.build()
    if workload.channels_last:
        model = model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
    return model.to(device) if device is not None else model


def make_batches(workload: Workload, device: torch.device, count: int, distinct: int = 4) -> list[Any]:
    """``count`` batches on ``device``, cycling through ``distinct`` different ones (memory stays small)."""
    torch.manual_seed(1)
    made = [workload.batch(device) for _ in range(min(distinct, count))]
    return [made[i % len(made)] for i in range(count)]


# ---- the loops -------------------------------------------------------------------------------------


@dataclass
class LoopConfig:
    device: torch.device
    precision: str  # "bf16-mixed" or "32-true"
    compile: Any = False  # False, True, a mode name
    strategy: str = "auto"  # for the Trainers: "auto", "ddp", ...


def processes_per_node() -> int:
    """Processes the launcher started on this machine (the devices a Trainer must ask for under it)."""
    import os

    return int(os.environ.get("LOCAL_WORLD_SIZE", "1"))


def _autocast(config: LoopConfig) -> Any:
    import contextlib

    if config.precision == "bf16-mixed":
        return torch.autocast(config.device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _compile_kwargs(value: Any) -> dict[str, Any] | None:
    if value is False or value is None:
        return None
    if value is True or value == "default":
        return {}
    return {"mode": value}


def raw_loop(
    workload: Workload, data: TimedBatches, config: LoopConfig, *, compile_inside_ddp: bool = False
) -> dict[str, Any]:
    """The hand-written loop; compiled the usual way, ``torch.compile(model, ...)`` (the same forward graph the
    Trainer compiles: its module's ``forward`` only calls the model). Under DDP in the order torch's DDP
    tutorial gives, ``torch.compile(DDP(model))``; ``compile_inside_ddp`` (the ``raw-inner`` loop) wraps the
    compiled model instead, ``DDP(torch.compile(model))``, the order this benchmark used before issue 31."""
    model = make_model(workload, config.device)
    kwargs = _compile_kwargs(config.compile)
    ddp = config.strategy == "ddp"
    if kwargs is not None and (compile_inside_ddp or not ddp):
        model = torch.compile(model, **kwargs)  # type: ignore[assignment]
    if ddp:
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[config.device] if config.device.type == "cuda" else None
        )
        if kwargs is not None and not compile_inside_ddp:
            model = torch.compile(model, **kwargs)  # type: ignore[assignment]
    optimizer = workload.optimizer(model.parameters())
    first_step = None
    for index, (inputs, labels) in enumerate(data):
        started = time.perf_counter() if index == 0 else 0.0
        optimizer.zero_grad(set_to_none=True)
        with _autocast(config):
            loss = F.cross_entropy(logits_of(model, inputs), labels)
        loss.backward()
        optimizer.step()
        if index == 0:
            synchronize(config.device)
            first_step = time.perf_counter() - started
    return {"first_step_s": first_step}


class ProtocolModule(torch.nn.Module):
    """The same model in Lightning's protocol on a plain ``nn.Module``: ``training_step`` calls ``self(...)``."""

    def __init__(self, workload: Workload) -> None:
        super().__init__()
        self.workload = workload
        self.model = make_model(workload)

    def forward(self, inputs: Any) -> torch.Tensor:
        return logits_of(self.model, inputs)

    def training_step(self, batch: tuple[Any, torch.Tensor], batch_idx: int) -> torch.Tensor:
        inputs, labels = batch
        return F.cross_entropy(self(inputs), labels)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return self.workload.optimizer(self.model.parameters())


def accelplug_loop(workload: Workload, data: TimedBatches, config: LoopConfig) -> dict[str, Any]:
    from accelplug import Trainer

    trainer = Trainer(
        accelerator=config.device.type,
        devices=processes_per_node() if config.strategy == "ddp" else 1,
        strategy=config.strategy,
        precision=config.precision,
        max_epochs=1,
        compile=config.compile,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        use_distributed_sampler=False,  # each process has its own pre-made batches
    )
    trainer.fit(ProtocolModule(workload), data)
    return {"first_step_s": trainer.state.compile_seconds}


def lightning_loop(workload: Workload, data: TimedBatches, config: LoopConfig) -> dict[str, Any]:
    import lightning as L

    class LitModule(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.model = make_model(workload)

        def forward(self, inputs: Any) -> torch.Tensor:
            return logits_of(self.model, inputs)

        def training_step(self, batch: tuple[Any, torch.Tensor], batch_idx: int) -> torch.Tensor:
            inputs, labels = batch
            return F.cross_entropy(self(inputs), labels)

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return workload.optimizer(self.model.parameters())

    trainer = L.Trainer(
        accelerator="gpu" if config.device.type == "cuda" else "cpu",
        devices=processes_per_node() if config.strategy == "ddp" else 1,
        strategy=config.strategy,
        precision=config.precision,  # type: ignore[arg-type]
        max_epochs=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        benchmark=config.device.type == "cuda",
        use_distributed_sampler=False,
    )
    trainer.fit(LitModule(), data)  # type: ignore[arg-type]
    return {}


def accelerate_loop(workload: Workload, data: TimedBatches, config: LoopConfig) -> dict[str, Any]:
    from accelerate import Accelerator

    accelerator = Accelerator(
        mixed_precision="bf16" if config.precision == "bf16-mixed" else "no", cpu=config.device.type == "cpu"
    )
    model = make_model(workload)
    optimizer = workload.optimizer(model.parameters())
    model, optimizer = accelerator.prepare(model, optimizer)
    for inputs, labels in data:
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(logits_of(model, inputs), labels)  # autocast applied by accelerate
        accelerator.backward(loss)
        optimizer.step()
    return {}


def raw_inner_loop(workload: Workload, data: TimedBatches, config: LoopConfig) -> dict[str, Any]:
    return raw_loop(workload, data, config, compile_inside_ddp=True)


LOOPS: dict[str, Callable[[Workload, TimedBatches, LoopConfig], dict[str, Any]]] = {
    "raw": raw_loop,
    "raw-inner": raw_inner_loop,
    "accelplug": accelplug_loop,
    "lightning": lightning_loop,
    "accelerate": accelerate_loop,
}


def measure(
    loop: str, workload: Workload, config: LoopConfig, steps: int, warmup: int, batches: list[Any] | None = None
) -> dict[str, Any]:
    """Run one loop once; throughput (or ms/step for the MLP), first-step seconds, peak memory."""
    data = TimedBatches(batches or make_batches(workload, config.device, steps + warmup + 1), config.device, warmup)
    if config.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(config.device)
    extra = LOOPS[loop](workload, data, config)
    seconds = data.seconds
    result: dict[str, Any] = {
        "steps": data.timed_steps,
        "seconds": seconds,
        "ms_per_step": 1000 * seconds / data.timed_steps,
        "throughput": workload.batch_size * data.timed_steps / seconds,
        "peak_memory_mib": torch.cuda.max_memory_allocated(config.device) / 2**20
        if config.device.type == "cuda"
        else None,
        **extra,
    }
    result["value"] = result["ms_per_step"] if workload.unit == "ms/step" else result["throughput"]
    release(config.device)
    return result


def release(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
