"""One process of a parity run: ``python parity.py FRAMEWORK CASE OUT_DIR`` under torchrun or plain python.

FRAMEWORK is ``lightning`` or ``accelplug``; the loop is the same code (``tests/fabric/loops.py``) with the
``Fabric`` class of that framework. CASE is ``ddp``, ``fsdp`` or ``relaunch``, or several of them joined by
commas (``ddp,fsdp``), run one after the other in one launch. Each rank writes its results to
``OUT_DIR/FRAMEWORK-CASE.rankN.json``.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository, for tests.fabric.loops

from tests.fabric import loops

warnings.filterwarnings("ignore")


def fabric_class(framework: str) -> type:
    if framework == "lightning":
        from lightning.fabric import Fabric as LightningFabric

        return LightningFabric
    from accelplug.fabric import Fabric

    return Fabric


def fsdp_strategy(framework: str) -> object:
    """FSDP sharding each ``Block``. Lightning Fabric gates FSDP to GPUs (an exact type check in its connector)
    and passes no device to torch's FSDP1, which then refuses the CPU; the subclass gives it the CPU device,
    which FSDP1 supports over gloo. accelplug's is torch's FSDP2, as shipped."""
    from tests.fabric.loops import Block

    if framework == "lightning":
        import torch
        from lightning.fabric.strategies import FSDPStrategy as LightningFSDP

        class CPUFSDP(LightningFSDP):
            def setup_module(self, module: torch.nn.Module) -> torch.nn.Module:
                from torch.distributed.fsdp import FullyShardedDataParallel

                return FullyShardedDataParallel(
                    module,
                    sharding_strategy=self.sharding_strategy,
                    device_id=torch.device("cpu"),
                    **self._fsdp_kwargs,
                )

        return CPUFSDP(auto_wrap_policy={Block}, state_dict_type="full")
    from accelplug.fabric.strategies import FSDPStrategy

    return FSDPStrategy(auto_wrap_policy={Block}, state_dict_type="full")


def meta_init(fabric_cls: type) -> dict[str, object]:
    """``Net`` built on the meta device and materialised by sharding: its gathered weights after seed 7."""
    fabric = fabric_cls(accelerator="cpu", devices=2, strategy=fsdp_strategy("accelplug"))
    fabric.launch()
    fabric.seed_everything(7, verbose=False)
    with fabric.init_module(empty_init=True):
        model = loops.Net()
    meta = all(p.is_meta for p in model.parameters())
    model = fabric.setup_module(model)
    return {"was_meta": meta, "weights": loops.weights(model), "rank": fabric.global_rank}


def main() -> None:
    framework, case, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    fabric_cls = fabric_class(framework)
    results: dict[str, object] = {}
    parts = case.split(",")  # several parts share one launch: starting the processes is the slow part
    unknown = sorted(set(parts) - {"ddp", "fsdp", "relaunch"})
    if unknown:
        raise SystemExit(f"unknown case {unknown[0]!r}")
    if "ddp" in parts:
        results["plain"] = loops.train(fabric_cls, devices=2, strategy="ddp")
        results["accumulate_clip_norm"] = loops.train(
            fabric_cls, devices=2, strategy="ddp", accumulate=2, clip="norm", method="training_step"
        )
        results["clip_value_adam"] = loops.train(
            fabric_cls, devices=2, strategy="ddp", clip="value", optimizer="adam", method="score"
        )
        results["bf16_mixed"] = loops.train(fabric_cls, devices=2, strategy="ddp", precision="bf16-mixed")
        results["saved"] = loops.train(
            fabric_cls, devices=2, strategy="ddp", epochs=1, save_to=str(out / f"{framework}-ddp.ckpt")
        )
        results["collectives"] = loops.collectives(fabric_cls, devices=2)
    if "fsdp" in parts:
        run = loops.train(
            fabric_cls, devices=2, strategy=fsdp_strategy(framework), optimizer="adam", clip="norm", accumulate=2
        )
        run.pop("weights")  # sharded parameters: compared through the losses and norms
        results["fsdp"] = run
        if framework == "accelplug":
            results["meta_init"] = meta_init(fabric_cls)
    if "relaunch" in parts:
        results["relaunched"] = loops.train(fabric_cls, devices=2, strategy="ddp", epochs=1)
    rank = results[next(iter(results))]["rank"]  # type: ignore[index]
    (out / f"{framework}-{case}.rank{rank}.json").write_text(json.dumps(results))
    _close_process_group()


def _close_process_group() -> None:
    """Leave together and tear the group down before the interpreter exits: a gloo group still alive at exit
    can abort the process from its worker threads' destructors ("terminate called without an active
    exception", seen once in CI after Lightning's FSDP run), failing a run whose results were already written."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
