"""``strategy="ddp_notebook"`` in a real Jupyter kernel: a notebook executed by nbclient trains on two forked processes.

The notebook trains ``tests/clusters/train_job.py``'s regression with ``devices=2`` and saves the
weights the kernel's model holds after ``fit``; they must equal those of the same job started by
torchrun (``accelplug launch --devices 2``), so the two forked ranks trained as one DDP job and rank
0's weights came back into the kernel. Needs ``nbclient`` and ``ipykernel`` (the ``notebook`` extra).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from accelplug.errors import MisconfigurationException
from tests.processes import REPO, child_env

nbclient = pytest.importorskip(
    "nbclient", reason="the notebook test needs nbclient and ipykernel: pip install -e '.[notebook]'"
)
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipykernel")

pytestmark = pytest.mark.slow

CLUSTERS = REPO / "tests" / "clusters"
_ENV = {"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"}

CELLS = [
    f"import os, sys\nos.environ.update({_ENV!r})\nsys.path.insert(0, {str(CLUSTERS)!r})",
    "import torch\nimport accelplug as L\nfrom train_job import OPTIONS, Regression, data",
    "L.seed_everything(0, verbose=False)\nmodel = Regression(0.0, None)\n"
    "trainer = L.Trainer(devices=2, strategy='ddp_notebook', default_root_dir=ROOT, **OPTIONS)",
    "trainer.fit(model, data())",
    "print('after fit', os.getpid(), trainer.global_step, trainer.world_size)\ntorch.save(model.state_dict(), OUT)",
    "metrics = trainer.validate(model, data(), verbose=False)\nprint('validated', sorted(metrics[0]))",
    "predictions = trainer.predict(model, data())\nprint('predicted', predictions)",
]


def test_a_notebook_trains_on_two_forked_processes_with_the_weights_of_torchrun(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    setup = f"ROOT, OUT = {str(tmp_path / 'run')!r}, {str(tmp_path / 'notebook.pt')!r}"
    notebook.cells = [nbformat.v4.new_code_cell(code) for code in [setup, *CELLS]]
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute(env=child_env(_ENV))
    printed = "".join(o.get("text", "") for cell in notebook.cells for o in cell.get("outputs", []))
    assert "after fit" in printed and " 24 " in printed, printed  # the kernel's trainer got rank 0's step count
    assert "validated ['val_loss']" in printed, printed  # validate forks too, and rank 0's metrics return
    # predict forks too; as in Lightning, a forking strategy returns no predictions (a prediction writer keeps them)
    assert "predicted None" in printed, printed

    reference = tmp_path / "torchrun.pt"
    launch = [sys.executable, "-m", "accelplug", "launch", "--cpu", "--devices", "2", str(CLUSTERS / "train_job.py")]
    result = subprocess.run(
        [*launch, "--root", str(tmp_path / "torchrun"), "--out", str(reference)],
        env=child_env(_ENV),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    ours, theirs = torch.load(tmp_path / "notebook.pt", weights_only=True), torch.load(reference, weights_only=True)
    assert ours.keys() == theirs.keys()
    assert all(torch.equal(ours[k], theirs[k]) for k in ours)


def test_forking_after_cuda_was_initialised_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelplug.distributed import local_processes

    monkeypatch.setattr(local_processes.torch.cuda, "is_initialized", lambda: True)  # no GPU here: CUDA's answer only
    with pytest.raises(MisconfigurationException, match=r"CUDA is already initialised in this process"):
        local_processes.check_fork_safe("ddp_notebook")
