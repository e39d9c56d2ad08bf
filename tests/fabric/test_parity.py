"""The same Fabric loop under Lightning Fabric 2.6 and accelplug's Fabric: the same losses, norms and weights.

One process runs in this test process; two processes are started for real (gloo), each framework in its own
launch of ``scripts/parity.py``: Lightning's one run re-launches itself (no launcher) and gives the reference
of every two-process test; accelplug's DDP loops and FSDP share one launch by torchrun's agent, and its
plain-script re-launch is a launch of its own. On the CPU every DDP number is bit-identical; FSDP is
compared within a tolerance, since Lightning runs torch's FSDP1 and accelplug FSDP2 (different reduction
order of the sharded gradients).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug.fabric import Fabric
from accelplug.launcher import free_port
from tests.callbacks.parity import quiet_lightning
from tests.processes import REPO, child_env
from tests.warm_python import WarmPython

from . import loops

lightning_fabric = pytest.importorskip(
    "lightning.fabric", reason="the parity tests compare against lightning, not installed here"
)

SCRIPT = Path(__file__).resolve().parent / "scripts" / "parity.py"

ONE_PROCESS = {
    "plain": {},
    "accumulate-2-clip-norm": {"accumulate": 2, "clip": "norm"},
    "clip-value-adam": {"clip": "value", "optimizer": "adam"},
    "bf16-mixed": {"precision": "bf16-mixed"},
    "bf16-mixed-clip-norm": {"precision": "bf16-mixed", "clip": "norm", "accumulate": 2},
    "64-true": {"precision": "64-true"},
    "bf16-true": {"precision": "bf16-true"},
}


def _quietly(fn: Any, *args: Any, **kwargs: Any) -> Any:
    with quiet_lightning():  # Lightning's own warnings only: accelplug's stay visible
        return fn(*args, **kwargs)


@pytest.mark.parametrize("case", list(ONE_PROCESS))
def test_one_process_loop_matches_lightning_fabric_exactly(case: str) -> None:
    options = ONE_PROCESS[case]
    theirs = _quietly(loops.train, lightning_fabric.Fabric, **options)
    ours = _quietly(loops.train, Fabric, **options)
    assert ours["losses"] == theirs["losses"]
    assert ours["norms"] == theirs["norms"]
    assert ours["weights"] == theirs["weights"]
    assert len(ours["losses"]) == 16


def test_a_checkpoint_resumes_the_same_under_either_framework(tmp_path: Path) -> None:
    """Saved after one epoch by one framework, resumed for the second by either: the same numbers every way."""
    paths = {}
    for saver in (lightning_fabric.Fabric, Fabric):
        paths[saver] = tmp_path / f"{saver.__module__}.ckpt"
        _quietly(loops.train, saver, epochs=1, save_to=str(paths[saver]))
    reference = _quietly(
        loops.train, lightning_fabric.Fabric, epochs=2, resume_from=str(paths[lightning_fabric.Fabric])
    )
    for saver, path in paths.items():
        for loader in (lightning_fabric.Fabric, Fabric):
            resumed = _quietly(loops.train, loader, epochs=2, resume_from=str(path))
            assert resumed["losses"] == reference["losses"], (saver, loader)
            assert resumed["weights"] == reference["weights"], (saver, loader)
    fresh = _quietly(loops.train, Fabric, epochs=1)
    assert fresh["weights"] != reference["weights"], "the resumed runs started from the saved weights"


#: What a developer's shell might set that would change a run (the module's fixtures start before the autouse
#: fixture that clears these for each test, so the runs' environment leaves them out itself).
_LAUNCHER_VARIABLES = ("WORLD_SIZE", "LOCAL_WORLD_SIZE", "RANK", "LOCAL_RANK", "PYTORCH_ENABLE_MPS_FALLBACK")


def _env() -> dict[str, str]:
    env = {k: v for k, v in child_env().items() if not k.startswith("ACCELPLUG_") and k not in _LAUNCHER_VARIABLES}
    return {**env, "ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _launch(
    framework: str, case: str, out: Path, *, python: WarmPython | None = None, timeout: int = 480
) -> list[dict[str, Any]]:
    """Run ``scripts/parity.py FRAMEWORK CASE`` on two processes; each rank's results.

    Without ``python``, under torchrun's agent (``python -m torch.distributed.run``); with it, as ``python
    parity.py`` forked from that server (torch imported once), the script starting its other rank itself."""
    args = [str(SCRIPT), framework, case, str(out)]
    if python is not None:
        result = python.run(args, env=_env(), timeout=timeout, cwd=REPO)
    else:
        # torchrun's agent keeps its error files in a new /tmp/torchelastic_* folder unless told where.
        logs = ["--log-dir", str(out / f"torchrun-{framework}-{case}")]
        torchrun = ["-m", "torch.distributed.run", *logs, "--nproc-per-node", "2", "--master-port", str(free_port())]
        command = [sys.executable, *torchrun, *args]
        result = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=timeout, cwd=REPO)
    assert result.returncode == 0, result.stderr[-4000:]
    return [json.loads((out / f"{framework}-{case}.rank{rank}.json").read_text()) for rank in (0, 1)]


@pytest.fixture(scope="module")
def theirs_run(fit_python: WarmPython, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """Lightning's two-process results for every test below, from one launch (starting processes is the slow part).

    ``python parity.py`` with no launcher: Lightning Fabric starts the second rank itself at the first
    ``launch()``, so the same run is the reference of the DDP loops, FSDP and the plain-script re-launch.
    """
    out = tmp_path_factory.mktemp("lightning-parity")
    return out, _launch("lightning", "ddp,fsdp,relaunch", out, python=fit_python)


@pytest.fixture(scope="module")
def ours_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """accelplug's DDP loops and FSDP on two processes started by torchrun's agent, from one launch."""
    out = tmp_path_factory.mktemp("accelplug-parity")
    return out, _launch("accelplug", "ddp,fsdp", out)


@pytest.mark.slow
@pytest.mark.timeout(600)  # the first of them starts a fixture's launch as well
def test_two_ddp_processes_match_lightning_fabric_exactly(
    theirs_run: tuple[Path, list[dict[str, Any]]], ours_run: tuple[Path, list[dict[str, Any]]]
) -> None:
    (their_folder, theirs), (our_folder, ours) = theirs_run, ours_run
    for rank in (0, 1):
        for loop in ("plain", "accumulate_clip_norm", "clip_value_adam", "bf16_mixed", "saved"):
            assert ours[rank][loop]["losses"] == theirs[rank][loop]["losses"], (rank, loop)
            assert ours[rank][loop]["local_losses"] == theirs[rank][loop]["local_losses"], (rank, loop)
            assert ours[rank][loop]["norms"] == theirs[rank][loop]["norms"], (rank, loop)
            assert ours[rank][loop]["weights"] == theirs[rank][loop]["weights"], (rank, loop)
            assert ours[rank][loop]["world_size"] == 2
        assert ours[rank]["collectives"] == theirs[rank]["collectives"]
    assert ours[0]["plain"]["weights"] == ours[1]["plain"]["weights"], "DDP keeps the ranks' weights equal"
    assert ours[0]["plain"]["local_losses"] != ours[1]["plain"]["local_losses"], "each rank trains on its own shard"
    assert ours[0]["plain"]["losses"] == ours[1]["plain"]["losses"], "all_reduce gives every rank the mean"
    collectives = ours[1]["collectives"]
    assert collectives["gathered"] == [[0.0, 0.0], [1.0, 10.0]]
    assert (collectives["sum"], collectives["mean"], collectives["max"]) == (3.0, 1.5, 1.0)
    assert collectives["broadcast"] == {"from": 1}
    assert collectives["unmarked_method"] == "refused: mark_forward_method"

    # The two-process checkpoints cross over: each framework's file loads into the other's model.
    saved_weights = ours[0]["saved"]["weights"]
    for saved in (their_folder / "lightning-ddp.ckpt", our_folder / "accelplug-ddp.ckpt"):
        for loader in (lightning_fabric.Fabric, Fabric):
            model = loops.Net()
            remainder = _quietly(_load_into, loader, model, saved)
            assert loops.weights(model) == saved_weights, (saved.name, loader)
            assert remainder.get("epoch") == 1


def _load_into(fabric_cls: Any, model: torch.nn.Module, path: Path) -> dict[str, Any]:
    fabric = fabric_cls(accelerator="cpu", devices=1)
    return dict(fabric.load(path, {"model": fabric.setup(model)}))


@pytest.mark.slow
@pytest.mark.timeout(600)  # the first of them starts a fixture's launch as well
def test_fsdp_on_two_processes_matches_lightning_fabric_fsdp(
    theirs_run: tuple[Path, list[dict[str, Any]]], ours_run: tuple[Path, list[dict[str, Any]]]
) -> None:
    theirs, ours = theirs_run[1], ours_run[1]
    for rank in (0, 1):
        torch.testing.assert_close(
            torch.tensor(ours[rank]["fsdp"]["losses"]),
            torch.tensor(theirs[rank]["fsdp"]["losses"]),
            rtol=1e-4,
            atol=1e-6,
        )
        torch.testing.assert_close(
            torch.tensor(ours[rank]["fsdp"]["norms"]), torch.tensor(theirs[rank]["fsdp"]["norms"]), rtol=1e-4, atol=1e-6
        )
    assert len(ours[0]["fsdp"]["losses"]) == 8

    # Built on the meta device and materialised while sharding: the values an eager build draws.
    torch.manual_seed(7)
    eager = loops.weights(loops.Net())
    for rank in (0, 1):
        assert ours[rank]["meta_init"]["was_meta"]
        assert ours[rank]["meta_init"]["weights"] == eager


@pytest.mark.slow
@pytest.mark.timeout(600)  # the first of them starts a fixture's launch as well
def test_a_plain_python_script_relaunches_itself_as_lightning_fabric_does(
    tmp_path: Path, theirs_run: tuple[Path, list[dict[str, Any]]], fit_python: WarmPython
) -> None:
    """``python script.py`` with devices=2 and no launcher: one process per device under either framework
    (accelplug re-launches the script under torchrun's agent, Lightning starts the other ranks itself; its
    run is the ``theirs_run`` fixture's, started the same way)."""
    theirs = theirs_run[1]
    ours = _launch("accelplug", "relaunch", tmp_path, python=fit_python)
    assert [r["relaunched"]["rank"] for r in ours] == [0, 1]
    assert all(r["relaunched"]["world_size"] == 2 for r in ours)
    assert [r["relaunched"]["local_losses"] for r in ours] == [r["relaunched"]["local_losses"] for r in theirs]
    assert [r["relaunched"]["weights"] for r in ours] == [r["relaunched"]["weights"] for r in theirs]
