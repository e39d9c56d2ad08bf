"""``ModelParallelStrategy`` and ``LightningModule.all_gather`` on two real gloo processes, against Lightning 2.6.6.

One script per framework: ``all_gather`` of a rank-dependent tensor, a number and a dict (and a gradient
through ``sync_grads=True``); then a fit under ``ModelParallelStrategy(data_parallel_size=2,
tensor_parallel_size=1)`` whose ``configure_model`` shards the layers over ``self.device_mesh["data_parallel"]``
with ``fully_shard``, which must end with the weights DDP reaches. Tensor parallelism itself
(``tensor_parallel_size > 1``) needs ``parallelize_module`` on real devices and is not run on this CPU machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.processes import child_env

pytest.importorskip("lightning", reason="the runs are compared with lightning's, not installed here")

SCRIPT = textwrap.dedent(
    """
    import json, sys, warnings
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    framework, out = sys.argv[1], sys.argv[2]
    if framework == "lightning":
        import lightning as L
        from lightning.pytorch.strategies import ModelParallelStrategy
    else:
        import accelplug as L
        from accelplug.pytorch.strategies import ModelParallelStrategy
    warnings.simplefilter("ignore")

    def data():
        g = torch.Generator().manual_seed(3)
        x = torch.randn(32, 4, generator=g)
        return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4, shuffle=False)

    class Net(L.LightningModule):
        def __init__(self, shard=False):
            super().__init__()
            torch.manual_seed(0)
            self.shard = shard
            self.body, self.head = torch.nn.Linear(4, 8), torch.nn.Linear(8, 1)

        def configure_model(self):
            if self.shard:
                from torch.distributed.fsdp import fully_shard
                mesh = self.device_mesh["data_parallel"]
                fully_shard(self.body, mesh=mesh)
                fully_shard(self.head, mesh=mesh)
                fully_shard(self, mesh=mesh)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return F.mse_loss(self.head(torch.tanh(self.body(x))), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

        def on_train_end(self):
            rank = self.global_rank
            if self.shard:
                self.mesh_shape = list(self.device_mesh.shape)
                self.mesh_names = list(self.device_mesh.mesh_dim_names)
                self.sampler = self.trainer.distributed_sampler_kwargs
                return
            gathered = self.all_gather({"t": torch.arange(3.0) + 10 * rank, "n": rank, "pair": (1.5, torch.ones(2))})
            source = torch.full((2,), float(rank + 1), requires_grad=True)
            (self.all_gather(source, sync_grads=True) ** 2).sum().backward()
            self.gathered = {"t": gathered["t"].tolist(), "n": gathered["n"].tolist(),
                             "n_dtype": str(gathered["n"].dtype),
                             "pair": [gathered["pair"][0].tolist(), gathered["pair"][1].tolist()],
                             "grad": source.grad.tolist()}

    def fit(module, strategy):
        trainer = L.Trainer(accelerator="cpu", devices=2, strategy=strategy, max_epochs=2, logger=False,
                            enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
        trainer.fit(module, data())
        return trainer

    ddp_module = Net()
    ddp = fit(ddp_module, "ddp")
    results = {"gathered": ddp_module.gathered, "ddp": {k: v.tolist() for k, v in ddp_module.state_dict().items()}}
    sharded = Net(shard=True)
    trainer = fit(sharded, ModelParallelStrategy(data_parallel_size=2, tensor_parallel_size=1))
    full = {k: (v.full_tensor() if hasattr(v, "full_tensor") else v).tolist() for k, v in sharded.state_dict().items()}
    results["model_parallel"] = full
    results["mesh"] = [sharded.mesh_shape, sharded.mesh_names, sharded.sampler]
    results["steps"] = [ddp.global_step, trainer.global_step]
    with open(f"{out}.{trainer.global_rank}", "w") as f:
        json.dump(results, f)
    """
)


def _run(framework: str, tmp_path: Path) -> list[dict[str, Any]]:
    script = tmp_path / f"mp_{framework}.py"
    script.write_text(SCRIPT)
    out = tmp_path / f"{framework}.json"
    done = subprocess.run(
        [sys.executable, str(script), framework, str(out)],
        cwd=tmp_path,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return [json.loads(Path(f"{out}.{rank}").read_text()) for rank in (0, 1)]


def _close(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(torch.tensor(a[key]), torch.tensor(b[key]), rtol=1e-5, atol=1e-6, msg=key)


@pytest.mark.slow
@pytest.mark.timeout(840)
def test_all_gather_and_a_data_parallel_mesh_match_lightning_on_two_gloo_processes(tmp_path: Path) -> None:
    theirs = _run("lightning", tmp_path)
    ours = _run("accelplug", tmp_path)
    for rank in (0, 1):
        assert ours[rank]["gathered"] == theirs[rank]["gathered"], rank
        assert (
            ours[rank]["mesh"]
            == theirs[rank]["mesh"]
            == [[2, 1], ["data_parallel", "tensor_parallel"], {"num_replicas": 2, "rank": rank}]
        )
        assert ours[rank]["steps"] == theirs[rank]["steps"]
        _close(ours[rank]["ddp"], theirs[rank]["ddp"])
        _close(ours[rank]["model_parallel"], theirs[rank]["model_parallel"])
        _close(ours[rank]["model_parallel"], ours[rank]["ddp"])  # sharding over the mesh trains as DDP does
    assert ours[0]["gathered"]["t"] == [[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]]
    # each rank's loss reaches its own part through both ranks' backward: 2 * 2 * (rank + 1)
    assert [ours[rank]["gathered"]["grad"] for rank in (0, 1)] == [[4.0, 4.0], [8.0, 8.0]]
