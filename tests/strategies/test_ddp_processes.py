"""DDP's options for real: two gloo processes per framework, Lightning 2.6.6 and accelplug, same script.

One script fits several small modules in one launch (a launch is the slow part): a module whose step
leaves a head unused on odd batches (needs ``find_unused_parameters``, here through Lightning's strategy
string), one with a head never used under ``static_graph``, a manual-optimization GAN-shaped module
with two optimizers (the pl_gan project's shape), an ``IterableDataset`` without length stopped by
``max_steps``, and a dict of two training loaders (each sharded, combined as ``max_size_cycle``). Each
rank writes its final weights; both ranks must agree and accelplug's must equal Lightning's.

accelplug's run also registers a communication hook that sums instead of averaging, which must train
exactly as the averaging default does with twice the learning rate (Lightning registers hooks on CUDA
only, so that case is accelplug's alone).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.processes import child_env
from tests.warm_python import WarmPython

pytest.importorskip("lightning", reason="the runs are compared with lightning's, not installed here")

SCRIPT = textwrap.dedent(
    """
    import json, sys, warnings
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    framework, out = sys.argv[1], sys.argv[2]
    if framework == "lightning":
        import lightning as L
        from lightning.pytorch.strategies import DDPStrategy
    else:
        import accelplug as L
        from accelplug.strategies import DDPStrategy
    warnings.simplefilter("ignore")

    def data():
        g = torch.Generator().manual_seed(3)
        x = torch.randn(64, 4, generator=g)
        return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8, shuffle=False)

    class TwoHeads(L.LightningModule):
        def __init__(self, lr=0.1, always_a=False):
            super().__init__()
            self.lr, self.always_a = lr, always_a
            self.body, self.a, self.b = torch.nn.Linear(4, 8), torch.nn.Linear(8, 1), torch.nn.Linear(8, 1)

        def training_step(self, batch, batch_idx):
            x, y = batch
            h = torch.tanh(self.body(x))
            out = self.a(h) if self.always_a or batch_idx % 2 == 0 else self.a(h) + self.b(h)
            return F.mse_loss(out, y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=self.lr)

    class DictHeads(TwoHeads):
        def training_step(self, batch, batch_idx):
            return sum(F.mse_loss(self.a(torch.tanh(self.body(x))), y) for x, y in batch.values())

    class Gan(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.automatic_optimization = False
            self.generator, self.discriminator = torch.nn.Linear(2, 4), torch.nn.Linear(4, 1)

        def training_step(self, batch):
            real, _ = batch
            opt_g, opt_d = self.optimizers()
            z = torch.randn(real.shape[0], 2, generator=torch.Generator().manual_seed(self.global_step))
            self.toggle_optimizer(opt_g)
            g_loss = F.softplus(-self.discriminator(self.generator(z))).mean()
            self.manual_backward(g_loss)
            opt_g.step()
            opt_g.zero_grad()
            self.untoggle_optimizer(opt_g)
            self.toggle_optimizer(opt_d)
            fake = self.generator(z).detach()
            d_loss = (F.softplus(-self.discriminator(real)) + F.softplus(self.discriminator(fake))).mean()
            self.manual_backward(d_loss)
            opt_d.step()
            opt_d.zero_grad()
            self.untoggle_optimizer(opt_d)

        def configure_optimizers(self):
            return (torch.optim.Adam(self.generator.parameters(), lr=0.01),
                    torch.optim.Adam(self.discriminator.parameters(), lr=0.01))

    class Stream(torch.utils.data.IterableDataset):
        # no length, not sharded by either framework: every rank reads the whole stream
        def __iter__(self):
            g = torch.Generator().manual_seed(5)
            for _ in range(16):
                x = torch.randn(4, generator=g)
                yield x, x.sum(0, keepdim=True)

    def sum_hook(state, bucket):
        work = dist.all_reduce(bucket.buffer(), async_op=True)
        return work.get_future().then(lambda fut: fut.value()[0])

    def fit(module, strategy, loader=None, **limits):
        torch.manual_seed(0)
        model = module()
        trainer = L.Trainer(accelerator="cpu", devices=2, strategy=strategy, logger=False,
                            enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                            **(limits or {"max_epochs": 2}))
        trainer.fit(model, data() if loader is None else loader)
        return trainer, {k: v.tolist() for k, v in model.state_dict().items()}

    cases = {
        "find_unused_by_name": (TwoHeads, "ddp_find_unused_parameters_true"),
        "find_unused_with_buckets": (TwoHeads, DDPStrategy(find_unused_parameters=True, gradient_as_bucket_view=True,
                                                           bucket_cap_mb=1)),
        "static_graph": (lambda: TwoHeads(always_a=True), DDPStrategy(static_graph=True)),
        "manual_gan": (Gan, "ddp_find_unused_parameters_true"),
        "dict_of_loaders": (lambda: DictHeads(always_a=True), DDPStrategy(find_unused_parameters=True),
                            {"big": data(), "small": DataLoader(TensorDataset(torch.ones(24, 4), torch.ones(24, 1)),
                                                                batch_size=4, shuffle=True)}),
        "iterable_max_steps": (TwoHeads, "ddp_find_unused_parameters_true", DataLoader(Stream(), batch_size=4),
                               {"max_steps": 3}),
    }
    if framework == "accelplug":
        cases["summing_hook"] = (TwoHeads, DDPStrategy(find_unused_parameters=True, ddp_comm_hook=sum_hook))
        cases["double_lr"] = (lambda: TwoHeads(lr=0.2), "ddp_find_unused_parameters_true")
    results = {}
    for name, (module, strategy, *rest) in cases.items():
        loader, limits = (rest[0] if rest else None), (rest[1] if len(rest) > 1 else {})
        trainer, weights = fit(module, strategy, loader, **limits)
        results[name] = {"weights": weights, "global_step": trainer.global_step, "world": trainer.world_size}
    with open(f"{out}.{trainer.global_rank}", "w") as f:
        json.dump(results, f)
    """
)


def _run(python: WarmPython, framework: str, tmp_path: Path) -> dict[str, Any]:
    """``python SCRIPT FRAMEWORK OUT``: rank 0 forked from ``python`` (torch imported once), rank 1 the fresh
    Python the framework's launcher starts; each rank's results."""
    script = tmp_path / f"ddp_{framework}.py"
    script.write_text(SCRIPT)
    out = tmp_path / f"{framework}.json"
    done = python.run([str(script), framework, str(out)], cwd=tmp_path, env=child_env(), timeout=400)
    assert done.returncode == 0, done.stderr[-4000:]
    ranks = [json.loads(Path(f"{out}.{rank}").read_text()) for rank in (0, 1)]
    assert ranks[0] == ranks[1], f"{framework}: the two ranks ended with different weights"
    return ranks[0]


def _close(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(torch.tensor(a[key]), torch.tensor(b[key]), rtol=1e-5, atol=1e-6, msg=key)


@pytest.mark.slow
@pytest.mark.timeout(840)  # two launches of two processes each: about 70 s alone, longer on a loaded machine
def test_ddp_options_train_as_lightnings_on_two_gloo_processes(fit_python: WarmPython, tmp_path: Path) -> None:
    expected = _run(fit_python, "lightning", tmp_path)
    got = _run(fit_python, "accelplug", tmp_path)
    for case, result in expected.items():
        assert got[case]["world"] == result["world"] == 2
        assert got[case]["global_step"] == result["global_step"], case
        _close(got[case]["weights"], result["weights"])
    # the hook is really registered: summing two ranks' gradients is averaging at twice the learning rate
    _close(got["summing_hook"]["weights"], got["double_lr"]["weights"])
    initial = got["find_unused_by_name"]["weights"]
    assert any(got["summing_hook"]["weights"][k] != initial[k] for k in initial)
