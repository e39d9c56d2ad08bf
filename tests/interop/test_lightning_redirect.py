"""``accelplug.interop``: code that imports Lightning's names runs on accelplug, when asked and only then.

The redirect changes ``sys.meta_path`` for the rest of a process, so every test that turns it on does so in a
child Python; Lightning 2.6 is installed in the test environment, so "the alias wins" is checked against a real
``lightning`` that would otherwise be imported. The children are forked from one warm server that imported torch
once (``tests/warm_python.py``): accelplug, Lightning and the redirect are imported fresh in each, and none of
these tests is about Python's own start-up. Where a grandchild's start-up is the point (the launcher's
``sitecustomize`` hook in a spawned worker), that grandchild is a real process started by ``spawn``.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from accelplug.errors import MisconfigurationException
from accelplug.interop import ENV_VAR, activate_from_environment, redirect_active, redirect_target
from tests.conftest import REPO, subprocess_env
from tests.warm_python import WarmPython

HERE = Path(__file__).resolve().parent
THIRDPARTY = HERE / "thirdparty_lib"

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def warm() -> Iterator[WarmPython]:
    python = WarmPython()
    yield python
    python.close()


@pytest.fixture
def run_python(warm: WarmPython) -> Run:
    """``python -c code`` in a fresh child (forked from the warm server), as the suite's ``run_python`` runs it."""

    def run(
        code: str, *, env: dict[str, str] | None = None, pythonpath: Path | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return warm.run(["-c", code], env=subprocess_env(env, pythonpath=pythonpath), cwd=REPO, timeout=timeout)

    return run


@pytest.fixture
def launcher(warm: WarmPython) -> Run:
    """``python -m accelplug.interop ARGS`` in a fresh child, with the test's environment."""

    def run(*args: str, cwd: Path = REPO, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return warm.run(["-m", "accelplug.interop", *args], env=dict(os.environ), cwd=cwd, timeout=timeout)

    return run


def _python(code: str, run_python: Run, **kwargs: object) -> str:
    result = run_python(textwrap.dedent(code), **kwargs)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize(
    ("lightning_name", "accelplug_name"),
    [
        ("lightning", "accelplug"),
        ("lightning.pytorch", "accelplug.pytorch"),
        ("lightning.pytorch.callbacks.early_stopping", "accelplug.pytorch.callbacks.early_stopping"),
        ("pytorch_lightning", "accelplug.pytorch"),
        ("pytorch_lightning.loggers", "accelplug.pytorch.loggers"),
        ("lightning.fabric", "accelplug.fabric"),
        ("lightning_fabric.utilities", "accelplug.fabric.utilities"),
    ],
)
def test_each_lightning_name_stands_for_the_matching_accelplug_module(lightning_name: str, accelplug_name: str) -> None:
    assert redirect_target(lightning_name) == accelplug_name


@pytest.mark.parametrize("other", ["lightning_utilities", "lightning_utilities.core", "lightningx", "torch"])
def test_names_of_other_distributions_are_not_redirected(other: str) -> None:
    assert redirect_target(other) is None


def test_import_accelplug_neither_loads_the_redirect_nor_changes_lightning(run_python: Run) -> None:
    out = _python(
        """
        import sys, accelplug, lightning
        print('accelplug.interop' in sys.modules, lightning is accelplug, 'site-packages' in lightning.__file__)
        """,
        run_python,
    )
    assert out == "False False True"


def test_after_the_call_lightning_names_import_accelplugs_modules(run_python: Run) -> None:
    out = _python(
        """
        from accelplug.interop import use_accelplug_for_lightning
        use_accelplug_for_lightning()
        import lightning, lightning.pytorch as pl, pytorch_lightning, lightning.fabric, lightning_fabric
        import accelplug, accelplug.pytorch, accelplug.fabric
        print(lightning is accelplug, pl is accelplug.pytorch, pytorch_lightning is accelplug.pytorch,
              lightning.fabric is accelplug.fabric, lightning_fabric is accelplug.fabric)
        """,
        run_python,
    )
    assert out == "True True True True True"


def test_classes_are_one_class_under_both_names(run_python: Run) -> None:
    out = _python(
        """
        from accelplug.interop import use_accelplug_for_lightning
        use_accelplug_for_lightning()
        from lightning.pytorch import LightningModule, Trainer
        from pytorch_lightning.callbacks import EarlyStopping
        from lightning_fabric import Fabric
        import accelplug
        print(LightningModule is accelplug.LightningModule, Trainer is accelplug.Trainer,
              EarlyStopping is accelplug.EarlyStopping, Fabric is accelplug.Fabric,
              isinstance(EarlyStopping(monitor='x'), accelplug.Callback))
        """,
        run_python,
    )
    assert out == "True True True True True"


def test_accelplug_modules_keep_their_own_names_under_the_lightning_name(run_python: Run) -> None:
    # A module loaded through ``lightning.pytorch.loggers`` is accelplug's, with accelplug's __name__ and __spec__,
    # so its lazy relative imports resolve inside accelplug (no ImportWarning about __package__ != __spec__.parent).
    # The filter is the child's first line (what PYTHONWARNINGS=error::ImportWarning sets at start-up): every
    # import below runs under it.
    out = _python(
        """
        import warnings
        warnings.filterwarnings("error", category=ImportWarning)
        from accelplug.interop import use_accelplug_for_lightning
        use_accelplug_for_lightning()
        import lightning.pytorch.loggers as loggers
        logger = loggers.CSVLogger('.', name='x')
        print(loggers.__name__, loggers.__spec__.name, type(logger).__module__.split('.')[0])
        """,
        run_python,
    )
    assert out == "accelplug.pytorch.loggers accelplug.pytorch.loggers accelplug"


def test_a_lightning_module_accelplug_lacks_raises_module_not_found_naming_both(run_python: Run) -> None:
    out = _python(
        """
        from accelplug.interop import use_accelplug_for_lightning
        use_accelplug_for_lightning()
        try:
            import lightning.pytorch.no_such_module
        except ModuleNotFoundError as error:
            print(error.name, '|', error)
        """,
        run_python,
    )
    name, message = out.split(" | ")
    assert name == "lightning.pytorch.no_such_module"
    assert "accelplug.pytorch.no_such_module" in message


def test_lightning_modules_outside_pytorch_and_fabric_are_refused(run_python: Run) -> None:
    # accelplug.registry exists, but Lightning has no lightning.registry: the alias must not expose it.
    out = _python(
        """
        from accelplug.interop import use_accelplug_for_lightning
        use_accelplug_for_lightning()
        try:
            import lightning.registry
        except ModuleNotFoundError as error:
            print('refused:', error)
        """,
        run_python,
    )
    assert out.startswith("refused:")
    assert "only lightning.pytorch and lightning.fabric" in out


def test_turning_it_on_after_lightning_was_imported_fails_naming_the_module(run_python: Run) -> None:
    out = _python(
        """
        import lightning.fabric
        from accelplug.errors import MisconfigurationException
        from accelplug.interop import LightningAlreadyImportedError, use_accelplug_for_lightning
        try:
            use_accelplug_for_lightning()
        except LightningAlreadyImportedError as error:
            print(isinstance(error, MisconfigurationException), 'lightning.fabric' in error.modules)
            print(error)
        """,
        run_python,
    )
    flags, message = out.split("\n", 1)
    assert flags == "True True"
    assert "'lightning.fabric'" in message
    assert "before anything imports Lightning" in message


def test_turning_it_on_twice_is_harmless(run_python: Run) -> None:
    out = _python(
        """
        from accelplug.interop import redirect_active, use_accelplug_for_lightning
        use_accelplug_for_lightning()
        import lightning.pytorch
        use_accelplug_for_lightning()
        import sys
        print(redirect_active(), sum(type(f).__name__ == '_LightningAliasFinder' for f in sys.meta_path))
        """,
        run_python,
    )
    assert out == "True 1"


def test_the_environment_variable_turns_it_on_where_it_is_read(run_python: Run) -> None:
    out = _python(
        """
        from accelplug.interop import activate_from_environment
        print(activate_from_environment())
        import lightning, accelplug
        print(lightning is accelplug)
        """,
        run_python,
        env={ENV_VAR: "on"},
    )
    assert out == "True\nTrue"


def test_the_environment_variable_off_leaves_lightning_alone() -> None:
    assert activate_from_environment({ENV_VAR: "0"}) is False
    assert activate_from_environment({}) is False
    assert redirect_active() is False


def test_a_bad_environment_value_is_refused_with_the_accepted_words() -> None:
    with pytest.raises(MisconfigurationException, match=rf"{ENV_VAR}='ture'.*Did you mean 'true'\?"):
        activate_from_environment({ENV_VAR: "ture"})
    assert redirect_active() is False


def test_the_launcher_runs_a_script_with_its_arguments_on_accelplug(tmp_path: Path, launcher: Run) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "import sys, lightning, accelplug\nprint(lightning is accelplug, sys.argv[1:], __name__)\n",
        encoding="utf-8",
    )
    result = launcher(str(script), "--epochs", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True ['--epochs', '2'] __main__"


def test_the_launcher_runs_a_module_as_main(tmp_path: Path, launcher: Run) -> None:
    (tmp_path / "trainpkg").mkdir()
    (tmp_path / "trainpkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "trainpkg" / "run.py").write_text(
        "import sys, pytorch_lightning, accelplug.pytorch\n"
        "print(pytorch_lightning is accelplug.pytorch, sys.argv[1:], __name__)\n",
        encoding="utf-8",
    )
    result = launcher("-m", "trainpkg.run", "x", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True ['x'] __main__"


@pytest.mark.parametrize("program", ["lightning.pytorch", "pytorch_lightning"])
def test_the_launcher_runs_a_lightning_program_by_its_lightning_name(
    program: str, tmp_path: Path, launcher: Run
) -> None:
    result = launcher("-m", f"{program}.utilities.upgrade_checkpoint", "missing.ckpt", cwd=tmp_path)
    assert result.returncode == 1  # accelplug's upgrade_checkpoint: the path does not exist
    assert result.stderr.strip().startswith("upgrade_checkpoint: error: The path"), result.stderr


def test_the_launcher_refuses_to_start_without_a_script(launcher: Run) -> None:
    result = launcher(timeout=60)
    assert result.returncode == 2
    assert "usage: python -m accelplug.interop script.py" in result.stderr


def test_processes_the_launched_script_spawns_get_the_redirect_too(tmp_path: Path, launcher: Run) -> None:
    # A spawned worker re-imports the script (as __mp_main__) before running anything: its `import lightning`
    # must already be accelplug there, or the worker would mix two frameworks' classes.
    script = tmp_path / "spawner.py"
    script.write_text(
        textwrap.dedent(
            """
            import multiprocessing as mp
            import lightning

            def report(queue):
                import accelplug
                queue.put(lightning is accelplug)

            if __name__ == "__main__":
                context = mp.get_context("spawn")
                queue = context.Queue()
                worker = context.Process(target=report, args=(queue,))
                worker.start()
                print("child:", queue.get(timeout=120))
                worker.join()
            """
        ),
        encoding="utf-8",
    )
    result = launcher(str(script), timeout=180)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "child: True"


def test_a_library_subclassing_lightnings_module_trains_on_accelplug(run_python: Run) -> None:
    out = _python(
        """
        from accelplug.interop import use_accelplug_for_lightning
        use_accelplug_for_lightning()
        import lightning.pytorch as pl
        import regressors
        import accelplug

        model, data = regressors.LinearRegressor(lr=0.2), regressors.make_loaders()
        trainer = pl.Trainer(max_epochs=30, accelerator="cpu", logger=False, enable_checkpointing=False,
                             enable_progress_bar=False, enable_model_summary=False)
        before = trainer.validate(model, datamodule=data, verbose=False)[0]["val_loss"]
        trainer.fit(model, datamodule=data)
        after = trainer.callback_metrics["val_loss"].item()
        print(isinstance(model, accelplug.LightningModule), type(trainer) is accelplug.Trainer,
              isinstance(data, accelplug.LightningDataModule), model.describe())
        print(after < before / 10, trainer.current_epoch)
        """,
        run_python,
        pythonpath=THIRDPARTY,
    )
    assert out == "True True True LinearRegressor(lr=0.2)\nTrue 30"


def test_the_launchers_own_variable_is_not_reported_as_unknown(tmp_path: Path, launcher: Run) -> None:
    # The launcher sets ACCELPLUG_LIGHTNING_REDIRECT for its children; a Trainer warns about ACCELPLUG_* variables
    # accelplug does not read, and must not take this one for a typo.
    script = tmp_path / "trainer.py"
    script.write_text(
        textwrap.dedent(
            """
            import warnings
            import lightning.pytorch as pl
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                pl.Trainer(logger=False, enable_checkpointing=False)
            print([str(w.message) for w in caught if "ACCELPLUG_LIGHTNING_REDIRECT" in str(w.message)])
            """
        ),
        encoding="utf-8",
    )
    result = launcher(str(script))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_gpu_count_replaced_at_lightnings_path_drives_the_trainer_under_the_redirect(run_python: Run) -> None:
    out = _python(
        """
        from accelplug.interop import use_accelplug_for_lightning
        use_accelplug_for_lightning()
        import lightning.fabric.accelerators.cuda, lightning.pytorch.accelerators.cuda
        from lightning.pytorch import Trainer
        lightning.fabric.accelerators.cuda.num_cuda_devices = lambda: 2
        lightning.pytorch.accelerators.cuda.num_cuda_devices = lambda: 2
        trainer = Trainer(accelerator="gpu", devices=2, logger=False, enable_checkpointing=False)
        print(type(trainer.accelerator).__name__, type(trainer.strategy).__name__, trainer.device_ids)
        """,
        run_python,
    )
    assert out.splitlines()[-1] == "CUDAAccelerator DDPStrategy [0, 1]"
