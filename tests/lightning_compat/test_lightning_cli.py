"""``LightningCLI`` parity: one CLI script (``cli_scripts/train_cli.py``) run under Lightning 2.6 and, with its
imports swapped, under accelplug, with the same arguments; what each run trains and writes is compared.

Left out of the comparison, each for a reason outside the CLI: the folder ``config.yaml`` goes to (the
Trainer's ``log_dir``: Lightning's default logger and ``lightning_logs``) and the Trainer arguments only one side
has (accelplug's ``mps_fallback``, ``seed``, ...). The hyper-parameters are compared whole, with the
``_instantiator`` (and ``_class_path``) both record for a class the CLI built (``load_from_checkpoint_support``).

Below them, in-process tests of what a script sees of the CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

pytest.importorskip("lightning", reason="the CLI is compared against Lightning's, not installed here")
pytest.importorskip("jsonargparse", reason="LightningCLI needs jsonargparse (the test extra installs it)")

from accelplug import LightningModule, Trainer
from accelplug.demos import BoringModel
from accelplug.errors import MisconfigurationException
from accelplug.pytorch.cli import (
    LightningArgumentParser,
    LightningCLI,
    LRSchedulerCallable,
    LRSchedulerTypeTuple,
    OptimizerCallable,
)
from tests.conftest import REPO, subprocess_env
from tests.lightning_compat.test_real_projects import to_accelplug
from tests.warm_python import WarmPython

SCRIPT = Path(__file__).resolve().parent / "cli_scripts" / "train_cli.py"
FRAMEWORKS = ("lightning", "accelplug")
QUIET = ("--trainer.logger=false", "--trainer.enable_checkpointing=false", "--trainer.enable_model_summary=false")


#: The CLI seeds by default (seed_everything=True); with no seed set it warns so, as Lightning's does.
_SEEDED_WITHOUT_A_SEED = pytest.mark.filterwarnings("ignore:No seed found, seed set to 0:UserWarning")


@pytest.fixture(scope="module")
def warm_python() -> Iterator[WarmPython]:
    """The server the runs are forked from: torch imported once (``tests/warm_python.py``), with the compiler
    front end every run imports anyway (``import lightning`` does, and so does accelplug's first optimizer);
    Lightning or accelplug, jsonargparse and the script are imported fresh in each run. ``PYTHONHASHSEED=0`` as
    in every run."""
    python = WarmPython(server_env={"PYTHONHASHSEED": "0"}, preload=("torch._dynamo",))
    yield python
    python.close()


def _run(
    python: WarmPython, tmp_path: Path, framework: str, args: list[str], mode: str
) -> subprocess.CompletedProcess[str]:
    """``python train_cli.py ARGS`` in ``tmp_path/FRAMEWORK``, the script's imports swapped for accelplug's run."""
    folder = tmp_path / framework
    folder.mkdir(exist_ok=True)
    source = SCRIPT.read_text()
    (folder / SCRIPT.name).write_text(to_accelplug(source) if framework == "accelplug" else source)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCELPLUG_", "PL_"))}
    env.update({"CLI_MODE": mode, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"})
    env["ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        return python.run([SCRIPT.name, *args], env=env, cwd=folder, timeout=240)
    except subprocess.TimeoutExpired as timeout:  # killed: what it printed, with SIGKILL's status
        out, err = (text if isinstance(text, str) else "" for text in (timeout.stdout, timeout.stderr))
        return subprocess.CompletedProcess(timeout.cmd, -9, out, err)


def _run_both(
    python: WarmPython, tmp_path: Path, args: list[str], mode: str = "subcommands"
) -> dict[str, subprocess.CompletedProcess[str]]:
    """The script under each framework, the two processes side by side (one thread each)."""
    with ThreadPoolExecutor(max_workers=len(FRAMEWORKS)) as pool:
        futures = {fw: pool.submit(_run, python, tmp_path, fw, args, mode) for fw in FRAMEWORKS}
        return {fw: future.result() for fw, future in futures.items()}


def _both(
    python: WarmPython, tmp_path: Path, args: list[str], mode: str = "subcommands"
) -> dict[str, subprocess.CompletedProcess[str]]:
    runs = _run_both(python, tmp_path, args, mode)
    for framework, run in runs.items():
        assert run.returncode == 0, f"{framework}: {run.stdout[-1500:]}\n{run.stderr[-3000:]}"
    return runs


def _results(tmp_path: Path, framework: str) -> dict[str, Any]:
    results: dict[str, Any] = json.loads((tmp_path / framework / "results.json").read_text())
    return results


def _saved_config(tmp_path: Path, framework: str) -> dict[str, Any]:
    found = sorted((tmp_path / framework).rglob("config.yaml"))
    assert len(found) == 1, f"{framework} saved {found}"
    config: dict[str, Any] = yaml.safe_load(found[0].read_text())
    return config


def _comparable(config: dict[str, Any], trainer_keys: tuple[str, ...]) -> dict[str, Any]:
    kept = {k: v for k, v in config.items() if k in ("model", "data", "optimizer", "lr_scheduler", "seed_everything")}
    kept["trainer"] = {k: config["trainer"].get(k) for k in trainer_keys}
    return kept


def _close(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(b[key], float):
            assert a[key] == pytest.approx(b[key], rel=1e-6), key
        else:
            assert a[key] == b[key], key


def test_fit_with_optimizer_scheduler_and_a_linked_argument_trains_and_saves_as_lightning(
    warm_python: WarmPython, tmp_path: Path
) -> None:
    args = [
        "fit",
        "--optimizer=Adam",
        "--optimizer.lr=0.01",
        "--lr_scheduler=StepLR",
        "--lr_scheduler.step_size=1",
        "--data.targets=2",
        *QUIET,
    ]
    _both(warm_python, tmp_path, args)
    mine, lightnings = _results(tmp_path, "accelplug"), _results(tmp_path, "lightning")
    _close(mine, lightnings)
    # data.targets linked into model.out_dim; the instantiator rebuilds the model from these in load_from_checkpoint
    assert mine["hparams"] == {"hidden": 4, "out_dim": 2, "_instantiator": "lightning.pytorch.cli.instantiate_module"}
    assert (mine["optimizer"], mine["schedulers"], mine["lr"]) == ("Adam", ["StepLR"], pytest.approx(1e-4))
    keys = ("max_epochs", "logger", "enable_checkpointing", "enable_progress_bar", "accelerator", "devices")
    assert _comparable(_saved_config(tmp_path, "accelplug"), keys) == _comparable(
        _saved_config(tmp_path, "lightning"), keys
    )


def test_a_yaml_config_file_and_the_command_line_combine_as_in_lightning(
    warm_python: WarmPython, tmp_path: Path
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        "seed_everything: 3\n"
        "trainer:\n  max_epochs: 1\n"
        "model:\n  hidden: 5\n"
        "data:\n  batch_size: 4\n"
        "optimizer:\n  class_path: torch.optim.SGD\n  init_args:\n    lr: 0.2\n"
        "lr_scheduler:\n  class_path: ReduceLROnPlateau\n  init_args:\n    monitor: val_loss\n    patience: 0\n"
    )
    _both(warm_python, tmp_path, ["fit", f"--config={config}", "--data.batch_size=16", *QUIET])
    mine, lightnings = _results(tmp_path, "accelplug"), _results(tmp_path, "lightning")
    _close(mine, lightnings)
    assert (mine["batch_size"], mine["hparams"]["hidden"], mine["global_step"]) == (16, 5, 2)
    assert mine["optimizer"] == "SGD" and mine["schedulers"] == ["ReduceLROnPlateau"]
    assert _saved_config(tmp_path, "accelplug")["seed_everything"] == 3


def test_print_config_prints_the_same_model_data_and_optimizer_sections(
    warm_python: WarmPython, tmp_path: Path
) -> None:
    runs = _both(
        warm_python, tmp_path, ["fit", "--model.hidden=9", "--optimizer=SGD", "--optimizer.lr=0.3", "--print_config"]
    )
    keys = ("max_epochs", "accelerator", "devices", "enable_progress_bar")
    printed = {fw: yaml.safe_load(run.stdout) for fw, run in runs.items()}
    assert _comparable(printed["accelplug"], keys) == _comparable(printed["lightning"], keys)
    assert printed["accelplug"]["model"] == {"hidden": 9}  # out_dim is a link target: not printed
    assert not (tmp_path / "accelplug" / "results.json").exists()  # printing the config runs nothing


def test_run_false_builds_the_classes_and_leaves_the_call_to_the_script(
    warm_python: WarmPython, tmp_path: Path
) -> None:
    _both(warm_python, tmp_path, ["--trainer.max_epochs=1", "--model.hidden=3", *QUIET], mode="no_run")
    _close(_results(tmp_path, "accelplug"), _results(tmp_path, "lightning"))


def test_subclass_mode_picks_the_model_class_by_name(warm_python: WarmPython, tmp_path: Path) -> None:
    args = ["fit", "--model=ScaledNet", "--model.scale=0.5", "--trainer.max_epochs=1", *QUIET]
    _both(warm_python, tmp_path, args, mode="subclass")
    mine, lightnings = _results(tmp_path, "accelplug"), _results(tmp_path, "lightning")
    _close(mine, lightnings)
    assert (mine["model"], mine["scale"]) == ("ScaledNet", 0.5)


def test_a_bad_argument_ends_both_with_exit_2_naming_it(warm_python: WarmPython, tmp_path: Path) -> None:
    for framework, run in _run_both(warm_python, tmp_path, ["fit", "--model.hiden=3"]).items():
        assert run.returncode == 2, framework
        assert "hiden" in run.stderr and "Traceback" not in run.stderr, framework


def test_a_second_run_into_the_same_folder_refuses_to_overwrite_its_config(
    warm_python: WarmPython, tmp_path: Path
) -> None:
    logger = ["--trainer.logger=CSVLogger", "--trainer.logger.save_dir=out", "--trainer.logger.name=logs"]
    logger.append("--trainer.logger.version=fixed")
    args = ["fit", "--trainer.max_epochs=1", *logger, *QUIET[1:]]
    _both(warm_python, tmp_path, args)
    for framework, run in _run_both(warm_python, tmp_path, args).items():
        assert run.returncode != 0, framework
        assert (tmp_path / framework / "out" / "logs" / "fixed" / "config.yaml").is_file(), framework
        assert "config.yaml" in run.stderr and "overwrite" in run.stderr, framework


# ---- accelplug's own checks (no Lightning run needed) ---------------------------------------------------------
def test_without_jsonargparse_the_cli_names_the_package_to_install(warm_python: WarmPython) -> None:
    code = (
        "import sys\n"
        "sys.modules['jsonargparse'] = None  # as if not installed\n"
        "from accelplug.pytorch.cli import LightningCLI\n"
        "from accelplug.errors import MisconfigurationException\n"
        "try:\n"
        "    LightningCLI()\n"
        "except MisconfigurationException as error:\n"
        "    print(error)\n"
    )
    result = warm_python.run(["-c", code], env=subprocess_env(), cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "jsonargparse" in result.stdout and 'pip install "accelplug[cli]"' in result.stdout


def test_a_class_the_cli_cannot_configure_is_refused_by_name() -> None:
    from accelplug.errors import MisconfigurationException
    from accelplug.pytorch.cli import LightningArgumentParser, SaveConfigCallback

    parser = LightningArgumentParser()
    with pytest.raises(MisconfigurationException, match=r"add_lightning_class_args.*subclass of Trainer"):
        parser.add_lightning_class_args(int, "number")
    with pytest.raises(MisconfigurationException, match=r"add_optimizer_args.*Optimizer"):
        parser.add_optimizer_args(int)  # type: ignore[arg-type]
    with pytest.raises(MisconfigurationException, match="save_to_log_dir=False"):
        SaveConfigCallback(parser, {}, save_to_log_dir=False)  # type: ignore[arg-type]


def _nul_config_cli(args: list[str], **parser_kwargs: Any) -> None:
    from accelplug.pytorch import LightningModule
    from accelplug.pytorch.cli import LightningCLI

    class Tiny(LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

    LightningCLI(Tiny, args=args, run=False, parser_kwargs=parser_kwargs)


@pytest.mark.parametrize("args", [["--config", "con\x00fig.yaml"], ["--config=con\x00fig.yaml"]])
def test_a_config_path_with_a_nul_byte_ends_with_one_error_line_and_exit_2(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["train.py"])  # args= alone
    with pytest.raises(SystemExit) as exited:
        _nul_config_cli(args)
    assert exited.value.code == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: --config 'con\\x00fig.yaml' contains a NUL byte, which no file path")


def test_a_nul_byte_under_exit_on_error_false_is_a_misconfiguration_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelplug.errors import MisconfigurationException

    monkeypatch.setattr(sys, "argv", ["train.py"])
    # a ValueError, as Lightning's CLI raises here, that names the value
    with pytest.raises(MisconfigurationException, match=r"--config 'con\\x00fig.yaml' contains a NUL byte"):
        _nul_config_cli(["--config", "con\x00fig.yaml"], exit_on_error=False)


# ---- in-process: what a script sees ------------------------------------------------------------------------
class _InjectedModel(LightningModule):
    """A model whose parts come from the CLI: an activation object and optimizer/scheduler factories."""

    def __init__(
        self,
        optimizer: OptimizerCallable = torch.optim.Adam,
        scheduler: LRSchedulerCallable = torch.optim.lr_scheduler.ConstantLR,
        activation: torch.nn.Module | None = None,
    ) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.activation = activation
        self.layer = torch.nn.Linear(2, 1)

    def configure_optimizers(self) -> Any:
        optimizer = self.optimizer(self.parameters())
        return {"optimizer": optimizer, "lr_scheduler": self.scheduler(optimizer)}


def _injected_cli(tmp_path: Path, *args: str, **kwargs: Any) -> LightningCLI:
    return LightningCLI(
        _InjectedModel,
        run=False,
        auto_configure_optimizers=False,
        args=[f"--trainer.default_root_dir={tmp_path}", "--trainer.logger=false", *args],
        **kwargs,
    )


def _checkpoint_of(cli: LightningCLI, path: Path) -> Path:
    saved = {"state_dict": cli.model.state_dict(), "hyper_parameters": dict(cli.model.hparams)}
    torch.save({**saved, "pytorch-lightning_version": "2.6.6"}, path)  # the release Lightning's loading needs
    return path


@pytest.fixture
def argv_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["train.py"])  # args= is the whole command line


@_SEEDED_WITHOUT_A_SEED
@pytest.mark.usefixtures("argv_alone")
def test_a_model_built_by_the_cli_records_the_configuration_of_what_was_injected(tmp_path: Path) -> None:
    cli = _injected_cli(tmp_path, "--model.activation=torch.nn.LeakyReLU", "--model.activation.negative_slope=0.2")
    hparams = cli.model.hparams
    assert hparams["_instantiator"] == "lightning.pytorch.cli.instantiate_module"  # Lightning loads it too
    assert hparams["activation"] == {
        "class_path": "torch.nn.LeakyReLU",
        "init_args": {"negative_slope": 0.2, "inplace": False},
    }
    assert hparams["optimizer"] == "torch.optim.Adam" or hparams["optimizer"]["class_path"] == "torch.optim.Adam"
    assert isinstance(cli.model.activation, torch.nn.LeakyReLU)  # the model itself got the objects


@_SEEDED_WITHOUT_A_SEED
@pytest.mark.usefixtures("argv_alone")
def test_load_from_checkpoint_builds_the_injected_objects_again_from_the_recorded_configuration(
    tmp_path: Path,
) -> None:
    cli = _injected_cli(tmp_path, "--model.activation=torch.nn.LeakyReLU", "--model.activation.negative_slope=0.2")
    # rebuilt from its arguments, the model records the activation object itself (as in Lightning, which warns)
    with pytest.warns(UserWarning, match="Attribute 'activation' is an instance of `nn.Module`"):
        loaded = _InjectedModel.load_from_checkpoint(_checkpoint_of(cli, tmp_path / "m.ckpt"))
    assert isinstance(loaded.activation, torch.nn.LeakyReLU) and loaded.activation.negative_slope == 0.2
    optimizers = loaded.configure_optimizers()
    assert isinstance(optimizers["optimizer"], torch.optim.Adam)
    assert isinstance(optimizers["lr_scheduler"], torch.optim.lr_scheduler.ConstantLR)
    assert torch.equal(loaded.layer.weight, cli.model.layer.weight)


@_SEEDED_WITHOUT_A_SEED
@pytest.mark.usefixtures("argv_alone")
def test_in_subclass_mode_the_base_class_loads_the_subclass_the_configuration_names(tmp_path: Path) -> None:
    cli = _injected_cli(tmp_path, f"--model={__name__}._InjectedModel", subclass_mode_model=True)
    assert cli.model.hparams["_class_path"] == f"{__name__}._InjectedModel"
    loaded = LightningModule.load_from_checkpoint(_checkpoint_of(cli, tmp_path / "m.ckpt"))
    assert type(loaded) is _InjectedModel


@pytest.mark.parametrize(
    ("saved", "named"),
    [
        ({"_instantiator": "os.system"}, "'os.system'"),
        ({"_instantiator": "lightning.pytorch.cli.instantiate_module", "_class_path": "a.b.Model"}, "'a.b.Model'"),
    ],
)
def test_a_checkpoint_naming_code_that_is_not_trusted_is_refused_as_a_value_error(
    tmp_path: Path, saved: dict[str, str], named: str
) -> None:
    from accelplug.core.saving import UntrustedCheckpointError

    path = tmp_path / "m.ckpt"
    torch.save({"state_dict": {}, "hyper_parameters": saved, "pytorch-lightning_version": "2.6.6"}, path)
    with pytest.raises(UntrustedCheckpointError, match=f"{named}.*blocked") as refused:
        LightningModule.load_from_checkpoint(path)
    assert isinstance(refused.value, ValueError)


@_SEEDED_WITHOUT_A_SEED
@pytest.mark.usefixtures("argv_alone")
def test_optimizer_and_scheduler_callables_are_model_options_built_from_the_command_line(tmp_path: Path) -> None:
    cli = _injected_cli(
        tmp_path,
        "--model.optimizer=SGD",
        "--model.optimizer.lr=0.07",
        "--model.scheduler=StepLR",
        "--model.scheduler.step_size=2",
    )
    built = cli.model.configure_optimizers()
    assert isinstance(built["optimizer"], torch.optim.SGD) and built["optimizer"].param_groups[0]["lr"] == 0.07
    assert isinstance(built["lr_scheduler"], torch.optim.lr_scheduler.StepLR)


@pytest.mark.usefixtures("argv_alone")
def test_the_hparams_of_a_ckpt_path_that_do_not_fit_the_model_end_in_lightnings_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "other.ckpt"
    torch.save({"state_dict": {}, "hyper_parameters": {"width": 3}, "pytorch-lightning_version": "2.6.6"}, path)
    with pytest.raises(SystemExit):
        LightningCLI(BoringModel, args=["predict", f"--ckpt_path={path}"])
    assert "Parsing of ckpt_path hyperparameters failed" in capsys.readouterr().err


def test_the_trainer_arguments_can_go_at_the_top_level_of_a_parser() -> None:
    parser = LightningArgumentParser()
    parser.add_lightning_class_args(Trainer, None)
    assert parser.parse_args(["--max_epochs=3", "--accelerator=cpu"]).max_epochs == 3
    with pytest.raises(MisconfigurationException, match="needs a nested_key"):
        parser.add_lightning_class_args(Trainer, None, subclass_mode=True)


def test_add_lr_scheduler_args_takes_lightnings_tuple_of_scheduler_types() -> None:
    parser = LightningArgumentParser()
    parser.add_lr_scheduler_args(LRSchedulerTypeTuple)
    parsed = parser.parse_args(["--lr_scheduler=ReduceLROnPlateau", "--lr_scheduler.monitor=val_loss"])
    assert parsed.lr_scheduler.class_path.endswith("ReduceLROnPlateau")


@_SEEDED_WITHOUT_A_SEED
@pytest.mark.usefixtures("argv_alone")
def test_a_profiler_class_takes_arguments_its_signature_does_not_name_as_dict_kwargs() -> None:
    from accelplug.profilers import PyTorchProfiler

    args = ["--trainer.profiler=PyTorchProfiler", "--trainer.profiler.dirpath=prof"]
    args += ["--trainer.profiler.dict_kwargs.profile_memory=true"]  # torch.profiler's, through **profiler_kwargs
    cli = LightningCLI(BoringModel, run=False, args=["--trainer.logger=false", *args])
    assert isinstance(cli.trainer.profiler, PyTorchProfiler) and cli.trainer.profiler.dirpath == "prof"
    assert cli.config.trainer.profiler.dict_kwargs == {"profile_memory": True}


@pytest.mark.usefixtures("argv_alone")
def test_tensorboard_logger_offers_the_summary_writers_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tensorboard", reason="the SummaryWriter's arguments come from tensorboard")
    args = ["--trainer.logger=TensorBoardLogger", "--trainer.logger.comment=run1", "--print_config"]
    with pytest.raises(SystemExit):
        LightningCLI(BoringModel, run=False, args=args)
    assert yaml.safe_load(capsys.readouterr().out)["trainer"]["logger"]["init_args"]["comment"] == "run1"


@_SEEDED_WITHOUT_A_SEED
@pytest.mark.usefixtures("argv_alone")
def test_a_strategy_default_given_as_lazy_instance_takes_its_arguments_from_the_command_line() -> None:
    from jsonargparse import lazy_instance

    from accelplug.strategies import DDPStrategy

    default = lazy_instance(DDPStrategy, find_unused_parameters=True)
    args = ["--trainer.logger=false", "--trainer.strategy.process_group_backend=gloo"]
    cli = LightningCLI(BoringModel, run=False, trainer_defaults={"strategy": default}, args=args)
    assert cli.config.trainer.strategy.init_args.find_unused_parameters is True
    assert isinstance(cli.trainer.strategy, DDPStrategy) and cli.trainer.strategy.process_group_backend == "gloo"
    plain = LightningCLI(BoringModel, run=False, args=["--trainer.logger=false", "--trainer.accelerator=cpu"])
    assert plain.trainer.strategy is not None and plain.config.trainer.strategy == "auto"
