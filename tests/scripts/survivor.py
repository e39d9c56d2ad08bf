"""A small fit that can be interrupted, hung or crashed on purpose (the fault tests start it for real).

    python survivor.py --root-dir R --max-steps 40                        # one process
    accelplug launch --cpu --devices 2 survivor.py --hang-rank 1 ...      # rank 1 sleeps at a step
    accelplug launch --cpu --devices 2 --max-restarts 1 survivor.py --crash-rank 1 --crash-step 7

It prints ``READY <pid>`` (one line per rank) once the given step is reached, and at the end
``DONE rank=R step=S`` with a digest of the final weights, so a test can compare two runs.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

from accelplug import Callback, Trainer
from accelplug.callbacks import ModelCheckpoint
from accelplug.checkpoint import file as checkpoint_io


def _say(text: str) -> None:
    os.write(1, f"{text}\n".encode())  # one write: lines of several ranks never interleave


class ReportStop(Callback):
    """Says at which step this rank stopped when fit ends by an exception (an interrupt included)."""

    def on_exception(self, trainer: Trainer, pl_module: torch.nn.Module, exception: BaseException) -> None:
        _say(f"STOPPED rank={trainer.global_rank} step={trainer.global_step} by={type(exception).__name__}")


def slow_down_interrupt_saves(trainer: Trainer) -> None:
    """The save a signal triggers writes half the file, says SAVING, then waits (a second signal lands here).

    The wait is ``SURVIVOR_SAVE_SLEEP_S`` seconds (default 60).
    """
    real_save = torch.save

    def save(obj: object, handle: io.BufferedWriter) -> None:
        if not trainer.interrupted:
            real_save(obj, handle)
            return
        buffer = io.BytesIO()
        real_save(obj, buffer)
        data = buffer.getvalue()
        handle.write(data[: len(data) // 2])
        handle.flush()
        _say("SAVING")
        time.sleep(float(os.environ.get("SURVIVOR_SAVE_SLEEP_S", "60")))
        handle.write(data[len(data) // 2 :])

    checkpoint_io.torch.save = save  # type: ignore[attr-defined]


class Net(torch.nn.Module):
    def __init__(self, args: argparse.Namespace, rank: int) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
        self.args = args
        self.rank = rank
        self.step = 0

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        args, step = self.args, self.trainer_step()
        if step == args.ready_step and self.rank == 0:
            _say(f"READY {os.getppid() if args.launched else os.getpid()}")
        restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
        if self.rank == args.hang_rank and step == args.hang_step:
            _say(f"HANGING rank={self.rank} at={time.time():.3f}")
            time.sleep(10**6)
        if self.rank == args.crash_rank and step == args.crash_step and restart == 0:
            _say(f"CRASHING rank={self.rank} at={time.time():.3f}")
            raise RuntimeError(f"rank {self.rank} crashes on purpose at step {step}")
        if args.step_sleep:
            time.sleep(args.step_sleep)
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def trainer_step(self) -> int:
        return int(self._trainer.global_step)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root-dir", required=True)
    parser.add_argument("--accelerator", default="cpu", help="cuda: the same faults on GPUs (NCCL)")
    parser.add_argument("--max-steps", type=int, default=40)
    parser.add_argument("--ready-step", type=int, default=-1)
    parser.add_argument("--step-sleep", type=float, default=0.0)
    parser.add_argument("--hang-rank", type=int, default=-1)
    parser.add_argument("--hang-step", type=int, default=-1)
    parser.add_argument("--crash-rank", type=int, default=-1)
    parser.add_argument("--crash-step", type=int, default=-1)
    parser.add_argument("--every-n-steps", type=int, default=None)
    parser.add_argument("--log-every", type=int, default=5)
    parser.add_argument("--ckpt-path", default=None)
    parser.add_argument("--dirpath", default=None, help="ModelCheckpoint(dirpath=...)")
    parser.add_argument("--slow-interrupt-save", action="store_true")
    args = parser.parse_args()
    args.launched = "TORCHELASTIC_RUN_ID" in os.environ
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(96, 4, generator=generator)
    y = torch.sin(x.sum(dim=1, keepdim=True))
    callbacks: list[Callback] = [ReportStop()]
    if args.every_n_steps:
        callbacks.append(ModelCheckpoint(dirpath=args.dirpath, every_n_train_steps=args.every_n_steps, save_last=True))
    trainer = Trainer(
        accelerator=args.accelerator,
        devices=int(os.environ.get("LOCAL_WORLD_SIZE", "1")),
        strategy="ddp" if "WORLD_SIZE" in os.environ and os.environ["WORLD_SIZE"] != "1" else "auto",
        max_steps=args.max_steps,
        max_epochs=-1,
        default_root_dir=args.root_dir,
        enable_progress_bar=False,
        enable_model_summary=False,
        log_every_n_steps=args.log_every,
        callbacks=callbacks,
        logger="csv",  # the tests read metrics.csv (Lightning's default logger is TensorBoard's)
        seed=0,
    )
    if args.slow_interrupt_save:
        slow_down_interrupt_saves(trainer)
    torch.manual_seed(0)
    model = Net(args, int(os.environ.get("RANK", "0")))
    model._trainer = trainer  # type: ignore[assignment]
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True), ckpt_path=args.ckpt_path)
    weights = b"".join(v.cpu().numpy().tobytes() for v in model.state_dict().values())
    digest = hashlib.sha256(weights).hexdigest()[:16]
    _say(f"DONE rank={trainer.global_rank} step={trainer.global_step} weights={digest}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
