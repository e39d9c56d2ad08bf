"""What ``import accelplug`` and ``Trainer()`` may load on top of ``import torch``, and what a small fit may not.

Start-up is the first thing a user measures (issue 28: at most +30 ms over ``import torch``), and it grows one
innocent import at a time: a package ``__init__`` that imports every class, a helper imported at the top of a
module for one rare branch. Each test runs the code in a fresh interpreter under ``scripts/import_chain.py``,
which records the chain of imports that brought every module in. When a module joins, the message names it and
that chain. Import it where it is used (inside the function; a package's names through
``_import_paths.lazy_submodules``); if ``Trainer()`` really needs it, add it to the list below.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from accelplug.loggers.tensorboard import tensorboard_available

REPO = Path(__file__).resolve().parents[2]

#: The start-up path of issue 28, and ``Trainer()`` with its defaults.
START_UP = """
import accelplug
accelplug.get_registry().available()
accelplug.Trainer(accelerator="auto")
accelplug.Trainer()
"""

#: The default logger is CSV's where no TensorBoard writer can be made (the Trainer asks the same question).
_CSV_IF_NO_TENSORBOARD = () if tensorboard_available() else ("csv_logs",)

#: accelplug's modules that path needs, by room ("" is the room's own ``__init__`` or module).
NEEDED: dict[str, tuple[str, ...]] = {
    "accelplug": ("",),
    "_import_paths": ("",),  # the moved-paths finder, installed by ``import accelplug``
    "_console": ("",),  # Lightning's console policy (INFO lines, short warnings), set by ``import accelplug``
    "_version": ("",),  # __version__, and the version the registry reports for its built-in plugin
    "_record": ("",),  # the dataclass methods of every record on the path (cheaper than generating them)
    "registry": ("",),  # get_registry(), and with it the plugin spine:
    "hookspecs": ("",),
    "builtin_plugin": ("",),
    "isolation": ("",),
    "status": ("",),
    "envvars": ("",),
    "errors": ("",),
    "enums": ("",),  # trainer.state's TrainerFn/RunningStage are Lightning's case-insensitive string enums
    "accelerator": ("",),
    "accelerators": ("", "cpu", "cuda", "mps"),  # the built-in accelerators available() lists
    "hardware": ("", "devices", "runtime"),  # (the driver is asked, through _nvml, only where torch has CUDA)
    "precision": ("", "base", "bf16_true", "fp16_true", "full", "mixed", "names"),  # the built-in precisions
    # the Strategy base and the strategy a one-device run builds; the other built-ins are registered by name and
    # imported when chosen (compiling only with compile=...); layer_sync: the sync_batchnorm=... option's check
    "strategies": ("", "base", "layer_sync", "single_device"),
    # the base class; each built-in is imported only where its launcher's variables are set
    "environments": ("", "base"),
    "checkpoint": ("", "file"),  # the file loggers' paths (local or fsspec); the writers load with a checkpoint
    "selection": ("",),  # and the environment a run adopts (not the launcher, which starts processes at fit)
    "distributed": ("", "rank_zero"),  # set_rank
    "seed": ("",),
    "overrides": ("",),
    # the callbacks every Trainer adds (checkpoint, summary) and the progress-bar check (its base, not the bars)
    "callbacks": ("", "base", "model_checkpoint", "model_summary", "progress_bar"),
    # the default logger (TensorBoard's when it can write, else CSV's); it writes nothing before a fit
    "loggers": ("", "_files", "_params", "_requirements", "logger", "protocol", "tensorboard", *_CSV_IF_NO_TENSORBOARD),
    "profilers": ("", "base"),  # trainer.profiler, a PassThroughProfiler
    "trainer": (
        "",
        "trainer",
        "state",
        "display",
        "display.defaults",
        "display.device_info",  # Lightning's GPU/TPU availability lines and unused-GPU warning, at Trainer()
        "options",
        "options.arguments",
        "options.checks",
        "options.defaults",
        "options.entries",
        "options.precision_and_sync",
        "process",
        "process.environment",
    ),
}
#: Other packages and standard-library modules that path loads beyond ``import torch``'s, and why.
NEEDED_PACKAGES: dict[str, str] = {
    "pluggy": "the plugin registry is pluggy's (the contract)",
}
#: Never on that path, whatever the lists above say.
NEVER: dict[str, str] = {
    "pydantic": "the config file is parsed with it only when one exists (DEVELOPERS.md)",
    "packaging": "its requirement parser is the costliest import a Trainer ever had; nothing here compares versions",
    "lightning_utilities": "it imports packaging; its rank_zero_only is handed the rank when something loads it",
    "lightning": "accelplug replaces it",
    "pytorch_lightning": "accelplug replaces it",
    "fsspec": "the loggers make their file system at their first write",
    "tensorboard": "the TensorBoard logger makes its SummaryWriter at its first write",
    "jsonargparse": "LightningCLI only",
    "rich": "looked up by RichModelSummary, imported when a table or bar is drawn",
    "tqdm": "TQDMProgressBar's, imported when it draws",
    # asked for the config folder only off Linux: there envvars.config_path answers XDG's rule itself
    **({"platformdirs": "the config folder is found without it on Linux"} if sys.platform == "linux" else {}),
}

#: A small fit with a CSV logger and no display: what it must not load, and why.
SMALL_FIT = """
import torch, accelplug

class Regressor(accelplug.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        self.log("loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

data = torch.utils.data.TensorDataset(torch.randn(16, 4), torch.randn(16, 1))
trainer = accelplug.Trainer(
    max_epochs=1,
    logger=accelplug.CSVLogger("logs"),
    enable_progress_bar=False,
    enable_model_summary=False,
)
trainer.fit(Regressor(), torch.utils.data.DataLoader(data, batch_size=4))
"""
NOT_IN_A_FIT: dict[str, str] = {
    **{name: reason for name, reason in NEVER.items() if name != "fsspec"},  # the CSV logger writes through fsspec
    "accelplug.fabric": "Fabric is for hand-written loops",
    "accelplug.tuner": "only lr_find and scale_batch_size",
    "accelplug.pytorch": "Lightning's import paths, for scripts that use them",
    "accelplug.plugins": "Lightning's import paths, for scripts that use them",
    "accelplug.utilities": "Lightning's import paths, for scripts that use them",
    "accelplug.precision.lightning": "Lightning's precision plugins, for plugins=[...] only",
    "accelplug.profilers.simple": "profiler='simple' only",
    "accelplug.profilers.advanced": "profiler='advanced' only",
    "accelplug.profilers.pytorch": "profiler='pytorch' only",
    "accelplug.config": "the config file, parsed with pydantic, only when one exists",
    "accelplug.lightning_cli": "LightningCLI only",
    "accelplug.cli": "the command line only",
}


def _needed_modules() -> set[str]:
    needed = set()
    for room, modules in NEEDED.items():
        prefix = "accelplug" if room == "accelplug" else f"accelplug.{room}"
        needed |= {prefix if not m else f"{prefix}.{m}" for m in modules}
    return needed


def _joined(code: str, folder: Path) -> dict[str, list[str]]:
    """Each module ``code`` loads on top of ``import torch``, with the chain of imports that brought it; in a fresh
    interpreter with no ``ACCELPLUG_*`` setting, no config file and no entry-point plugins (their imports are
    theirs), in ``folder``."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("ACCELPLUG_")}
    env.update(ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD="1", XDG_CONFIG_HOME=str(folder / "config"), CUDA_VISIBLE_DEVICES="")
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "import_chain.py"), "--json", code],
        env=env,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    chains: dict[str, list[str]] = json.loads(result.stdout)
    return chains


def _report(title: str, offenders: dict[str, str], chains: dict[str, list[str]], advice: str) -> str:
    """One paragraph per offender: the module, why it is unwelcome (if known), and the chain that brought it."""
    lines = [title]
    for shown, (module, why) in enumerate(sorted(offenders.items())):
        if shown == 10:
            lines.append(f"... and {len(offenders) - 10} more: {', '.join(sorted(offenders)[10:])}")
            break
        lines.append(f"\n{module}{f' ({why})' if why else ''}, brought in by:")
        lines.append("    " + "\n    -> ".join(chains[module]))
    lines.append(f"\n{advice}")
    return "\n".join(lines)


def _outermost(modules: set[str]) -> set[str]:
    """The modules whose package is not in ``modules`` too: one chain per package that joined, not one per module."""
    return {m for m in modules if not any(m.startswith(f"{other}.") for other in modules)}


@pytest.fixture(scope="module")
def start_up(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    return _joined(START_UP, tmp_path_factory.mktemp("start-up"))


def test_trainer_start_up_loads_only_what_it_needs(start_up: dict[str, list[str]]) -> None:
    ours = {m for m in start_up if m == "accelplug" or m.startswith("accelplug.")}
    unlisted = ours - _needed_modules()
    others = {m for m in _outermost(set(start_up) - ours) if m.partition(".")[0] not in NEEDED_PACKAGES}
    offenders = {m: "" for m in unlisted} | {m: NEVER.get(m.partition(".")[0], "") for m in others}
    assert not offenders, _report(
        f"{len(offenders)} module(s) joined `import accelplug` + `Trainer()` without being on its list:",
        offenders,
        start_up,
        "Import it where it is used: inside the function that needs it, or as a name its package's __getattr__ "
        "(_import_paths.lazy_submodules) loads on first use. If Trainer() itself needs it, add it to NEEDED or "
        "NEEDED_PACKAGES in tests/foundation/test_start_up_imports.py, saying why.",
    )


def test_trainer_start_up_never_loads_the_heavy_or_optional_packages(start_up: dict[str, list[str]]) -> None:
    offenders = {m: NEVER[m] for m in start_up if m in NEVER}
    assert not offenders, _report("Loaded by `import accelplug` + `Trainer()`:", offenders, start_up, "")


def test_every_module_the_list_allows_is_still_on_the_path(start_up: dict[str, list[str]]) -> None:
    """The list is the path as it is, so that a module joining it is noticed; one that left is taken off it."""
    gone = sorted(_needed_modules() - set(start_up)) + sorted(set(NEEDED_PACKAGES) - set(start_up))
    assert not gone, f"no longer loaded by Trainer(): {gone}; take them off NEEDED / NEEDED_PACKAGES"


def test_a_small_fit_loads_no_optional_package_and_no_lightning_compatibility_room(tmp_path: Path) -> None:
    chains = _joined(SMALL_FIT, tmp_path)
    offenders = {name: why for name, why in NOT_IN_A_FIT.items() if name in chains}
    assert not offenders, _report(
        "A fit with a CSV logger, no progress bar and no summary loaded:",
        offenders,
        chains,
        "Import it where the feature that needs it runs, not at the top of a module every fit imports.",
    )


def test_the_report_names_the_function_whose_import_brought_a_module_in(tmp_path: Path) -> None:
    """A function-level import is reported with the function and line that wrote it, after the caller's line."""
    chains = _joined("import accelplug\ntrainer = accelplug.Trainer()\ntrainer.fit_loop\n", tmp_path)
    message = _report("joined:", {"accelplug.trainer.loops._views": ""}, chains, "")
    chain = message.split("brought in by:")[1]
    assert "__main__:3" in chain
    assert "accelplug.trainer.trainer:" in chain and "(fit_loop)" in chain
