"""Runs on the real ``vulkan`` device in a child process and prints one JSON line of what happened.

``python vulkan_child.py FOLDER SCENARIO...``. torchvulkan is imported first, as a user's script does for a backend
that torch does not autoload, so the bridge (``torch_accelerator``) sees ``vulkan`` when accelplug loads its
plugins. Every scenario runs the same model on the same data on the CPU too, in this process, so the tests
compare the two. Only tiny models: lavapipe runs each Vulkan kernel on the CPU, far slower than torch's own CPU
kernels (a small convolution takes seconds).
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
import torchvulkan  # noqa: F401 - registers the vulkan device before accelplug loads the bridge

import accelplug
from accelplug.hardware.capabilities import capabilities
from tests.real_device.models import BFloat16Touch, Classifier, Regressor, loader, tokens

DEVICE = "torch_accelerator"
EPOCHS = 3


def trainer(accelerator: str, folder: Path, **options: Any) -> accelplug.Trainer:
    settings: dict[str, Any] = {
        "max_epochs": EPOCHS,
        "logger": False,
        "enable_checkpointing": False,
        "enable_model_summary": False,
        "enable_progress_bar": False,
        "default_root_dir": str(folder),
    }
    settings.update(options)
    return accelplug.Trainer(accelerator=accelerator, devices=1, **settings)


def fresh_model() -> Regressor:
    accelplug.seed_everything(0)
    return Regressor()


def refusal(make: Callable[[], Any]) -> str | None:
    """The message of the MisconfigurationException ``make`` raises, None when it raises nothing."""
    try:
        make()
    except accelplug.MisconfigurationException as exc:
        return str(exc)
    return None


# ---- scenarios -----------------------------------------------------------------------------------------
def stages(folder: Path) -> dict[str, Any]:
    """fit, validate, test and predict on each device; the checkpoint path device -> CPU -> device."""
    out: dict[str, Any] = {}
    for accelerator in ("cpu", DEVICE):
        model = fresh_model()
        run = trainer(accelerator, folder)
        run.fit(model, loader(), loader())
        out[accelerator] = {
            "root_device": str(run.root_device),
            "batch_devices": sorted(model.devices),
            "param_device": str(next(model.parameters()).device),
            "fit_losses": model.losses,
            "validate": run.validate(model, loader(), verbose=False),
            "test": run.test(model, loader(), verbose=False),
            "predict": torch.cat(run.predict(model, loader())).flatten().tolist(),  # type: ignore[arg-type]
        }
        run.save_checkpoint(folder / f"{accelerator}-epoch3.ckpt")
    # The reference: the CPU's own checkpoint, resumed on the CPU for two more epochs.
    reference = fresh_model()
    trainer("cpu", folder, max_epochs=EPOCHS + 2).fit(reference, loader(), ckpt_path=folder / "cpu-epoch3.ckpt")
    # The path: the device's checkpoint resumed on the CPU for one epoch, that one resumed on the device.
    on_cpu = fresh_model()
    cpu_run = trainer("cpu", folder, max_epochs=EPOCHS + 1)
    cpu_run.fit(on_cpu, loader(), ckpt_path=folder / f"{DEVICE}-epoch3.ckpt")
    cpu_run.save_checkpoint(folder / "cpu-epoch4.ckpt")
    back = fresh_model()
    back_run = trainer(DEVICE, folder, max_epochs=EPOCHS + 2)
    back_run.fit(back, loader(), ckpt_path=folder / "cpu-epoch4.ckpt")
    saved = torch.load(folder / f"{DEVICE}-epoch3.ckpt", map_location="cpu", weights_only=True)
    out["checkpoint"] = {
        "reference_losses": reference.losses,
        "device_to_cpu_losses": on_cpu.losses,
        "cpu_to_device_losses": back.losses,
        "cpu_to_device_param_device": str(next(back.parameters()).device),
        "saved_state_devices": sorted({str(t.device) for t in saved["state_dict"].values()}),
        "saved_rng_keys": sorted(saved["rng"]),
    }
    return out


def fabric(folder: Path) -> dict[str, Any]:
    """accelplug's Fabric: a hand-written loop on each device."""
    out: dict[str, Any] = {}
    for accelerator in ("cpu", DEVICE):
        accelplug.seed_everything(0)
        run = accelplug.Fabric(accelerator=accelerator, devices=1)
        run.launch()
        model = Regressor()
        optimizer = model.configure_optimizers()
        model, optimizer = run.setup(model, optimizer)
        data = run.setup_dataloaders(loader())
        losses = []
        for _ in range(EPOCHS):
            for x, y in data:
                loss = torch.nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                run.backward(loss)
                optimizer.step()
                losses.append(float(loss.detach().cpu()))
        out[accelerator] = {"device": str(run.device), "losses": losses}
    return out


def precisions(folder: Path) -> dict[str, Any]:
    """16-mixed where the backend's autocast takes float16; the precisions it cannot do, refused."""
    out: dict[str, Any] = {"supported": list(accelplug.get_registry().status(_bridge()).precisions)}
    for accelerator in ("cpu", DEVICE):
        model = fresh_model()
        # The CPU reference keeps float16 autocast through the plugin: the name "16-mixed" on the CPU trains in
        # bf16-mixed, as Lightning's Trainer does.
        cpu_fp16 = {"plugins": [accelplug.plugins.MixedPrecision("16-mixed", "cpu")]}
        precision = cpu_fp16 if accelerator == "cpu" else {"precision": "16-mixed"}
        trainer(accelerator, folder, max_epochs=1, **precision).fit(model, loader())
        out[f"16-mixed/{accelerator}"] = model.losses
    for precision in ("bf16-mixed", "64-true", "bf16-true"):
        out[f"refused/{precision}"] = refusal(lambda p=precision: trainer(DEVICE, folder, precision=p))  # type: ignore[misc]
    return out


def compiling(folder: Path) -> dict[str, Any]:
    """compile=True: refused with the reason, before anything runs."""
    model = fresh_model()
    return {"compile=True": refusal(lambda: trainer(DEVICE, folder, compile=True).fit(model, loader()))}


def optional_parts(folder: Path) -> dict[str, Any]:
    """What the backend has and lacks, after a fit that asks for everything: the statistics callback, the
    progress display, a pinned loader, a checkpoint (with the device's RNG state), a synchronising monitor."""
    model = fresh_model()
    monitor = accelplug.callbacks.DeviceStatsMonitor()
    run = trainer(
        DEVICE,
        folder,
        callbacks=[monitor, accelplug.callbacks.ModelCheckpoint(dirpath=folder / "ckpts")],
        enable_progress_bar=True,
        enable_checkpointing=True,
        logger=accelplug.loggers.CSVLogger(folder / "logs"),
        log_every_n_steps=1,
    )
    run.fit(model, loader(pin_memory=True), loader())
    logged = (folder / "logs").rglob("metrics.csv")
    header = next(iter(logged)).read_text().splitlines()[0].split(",")
    report = {c.name: {"available": c.available, "detail": c.describe()} for c in capabilities("vulkan").report()}
    return {"losses": model.losses, "logged_columns": header, "capabilities": report}


def _bridge() -> type[accelplug.Accelerator]:
    return accelplug.get_registry().get(DEVICE)


# ---- strict mode: which operations fall back to the CPU ------------------------------------------------
@contextmanager
def fallbacks() -> Iterator[list[str]]:
    """torchvulkan's CPU-fallback warnings raised inside, each once (``torch.set_warn_always`` makes torch repeat
    them, so none is hidden by having happened before)."""
    found: list[str] = []
    torch.set_warn_always(True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield found
    torch.set_warn_always(False)
    for warning in caught:
        text = str(warning.message).split(" (Triggered internally")[0]
        if text.startswith("torchvulkan") and text not in found:
            found.append(text)


def _raw_steps(model: Classifier, dtype: torch.dtype | None, autocast: torch.dtype | None) -> None:
    device = torch.device("vulkan", 0)
    model = model.to(device) if dtype is None else model.to(device, dtype=dtype)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    for x, y in tokens():
        x, y = x.to(device), y.to(device)
        context = torch.autocast("vulkan", dtype=autocast) if autocast else torch.autocast("vulkan", enabled=False)
        with context:
            loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()


def strict(folder: Path) -> dict[str, Any]:
    """Under ``TORCHVULKAN_STRICT=1``: the operations a hand-written step falls back to the CPU for, per
    precision, and what accelplug's Trainer adds to them (it must add none)."""
    out: dict[str, Any] = {}
    for label, dtype, autocast in (
        ("32-true", None, None),
        ("16-mixed", None, torch.float16),
        ("bf16 weights", torch.bfloat16, None),
    ):
        accelplug.seed_everything(0)
        try:
            with fallbacks() as found:
                _raw_steps(Classifier(), dtype, autocast)
            out[f"raw/{label}"] = found
        except RuntimeError as exc:  # strict mode turns a dispatcher fallback into an error
            out[f"raw/{label}"] = [f"error: {str(exc).splitlines()[0]}"]
    for precision, model in (("32-true", Classifier()), ("16-mixed", Classifier()), ("control", BFloat16Touch())):
        accelplug.seed_everything(0)
        run = trainer(
            DEVICE,
            folder,
            precision="32-true" if precision == "control" else precision,
            callbacks=[accelplug.callbacks.DeviceStatsMonitor(), accelplug.callbacks.ModelCheckpoint(dirpath=folder)],
            enable_progress_bar=True,
            enable_checkpointing=True,
            logger=accelplug.loggers.CSVLogger(folder / "logs"),
            log_every_n_steps=1,
            gradient_clip_val=1.0,
        )
        try:
            with fallbacks() as found:
                run.fit(model, tokens(), tokens())
                run.validate(model, tokens(), verbose=False)
                run.predict(model, tokens())
            out[f"trainer/{precision}"] = found
        except RuntimeError as exc:
            out[f"trainer/{precision}"] = [f"error: {str(exc).splitlines()[0]}"]
    return out


SCENARIOS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "stages": stages,
    "fabric": fabric,
    "precisions": precisions,
    "compiling": compiling,
    "optional_parts": optional_parts,
    "strict": strict,
}

if __name__ == "__main__":
    # ``vulkan_child.py FOLDER NAME...``: several scenarios in one process (each process pays torch's start-up).
    where, names = Path(sys.argv[1]), sys.argv[2:]
    results: dict[str, Any] = {}
    for name in names:
        began = time.perf_counter()
        folder = where / name
        folder.mkdir(parents=True, exist_ok=True)
        results[name] = SCENARIOS[name](folder)
        results[name]["seconds"] = round(time.perf_counter() - began, 2)
        results[name]["folder"] = str(folder)
    print(json.dumps(results))
