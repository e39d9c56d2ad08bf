"""``DeepSpeedStrategy``: the module and its one optimizer handed to a DeepSpeed engine, which owns backward and step.

The engine partitions optimizer states (ZeRO-1), gradients (ZeRO-2) and parameters (ZeRO-3), offloads them to
the CPU or NVMe, scales float16 losses and keeps float32 master weights. accelplug's loop keeps everything else
(hooks, logging, schedulers, callbacks); it reaches the engine through three strategy hooks: ``backward`` (the
engine's), ``optimizer_step`` (closure, then ``engine.step()``) and the checkpoint methods (the engine saves
its own partitioned files in a folder beside the checkpoint file, which keeps the loop's state and names it).

The process group is torch's, made as DDP makes it (or a group of one in-process for one device); DeepSpeed's
communication layer wraps it. Lightning's strategy names are registered as subclasses with other defaults.
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import torch

from accelplug.errors import MisconfigurationException
from accelplug.strategies.base import PreparedModule, StepRouter, Strategy
from accelplug.strategies.ddp import DDPStrategy, adopt_process_group, collective_timeout, launched_by_torchrun
from accelplug.strategies.optimizers import OptimizerSetup, parse_optimizers
from accelplug.strategies.state_dicts import SHARDED_KEY, remove_checkpoint_files

from .config import deepspeed_config, load_user_config, precision_config

if TYPE_CHECKING:
    from accelplug.accelerator import Accelerator
    from accelplug.precision.base import NumericPrecision

__all__ = ["STRATEGY_VARIANTS", "DeepSpeedStrategy"]

_ACCELERATORS = ("cpu", "cuda")
_TAG = "checkpoint"  # the engine's tag (sub-folder) inside the shard folder, as Lightning names it
_FOLDER_SUFFIX = ".shards-"  # what the core's remove_checkpoint_files globs for beside a checkpoint file


class _CastingRouter(StepRouter):
    """The user's ``training_step`` as the engine's module, with floating inputs in the engine's dtype.

    DeepSpeed keeps the module itself in bfloat16/float16 under those precisions, so float32 batches are cast
    to it, as Lightning's DeepSpeed precision does.
    """

    def __init__(self, module: torch.nn.Module, dtype: torch.dtype | None) -> None:
        super().__init__(module)
        self.input_dtype = dtype

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if self.input_dtype is not None:
            args, kwargs = _cast(args, self.input_dtype), _cast(kwargs, self.input_dtype)
        return super().forward(*args, **kwargs)


def _cast(data: Any, dtype: torch.dtype) -> Any:
    if isinstance(data, torch.Tensor):
        return data.to(dtype) if data.is_floating_point() else data
    if isinstance(data, (list, tuple)):
        items = [_cast(x, dtype) for x in data]
        return type(data)(*items) if hasattr(data, "_fields") else type(data)(items)
    if isinstance(data, dict):
        return {k: _cast(v, dtype) for k, v in data.items()}
    return data


class DeepSpeedStrategy(DDPStrategy):
    """DeepSpeed ZeRO through ``deepspeed.initialize``; the arguments and defaults are Lightning 2.6's.

    ``config`` (a dict or a JSON file's path) replaces the config the other arguments build; the precision
    entries (``bf16``/``fp16``) are added from the Trainer's ``precision`` unless it has them.
    """

    name = "deepspeed"
    description = "DeepSpeed ZeRO (stage 2 by default); the engine owns backward and the optimizer step"
    # ZeRO-3 gathers parameters in forward hooks; tensors made under inference mode could not train afterwards.
    allows_inference_mode = False

    def __init__(
        self,
        zero_optimization: bool = True,
        stage: int = 2,
        offload_optimizer: bool = False,
        offload_parameters: bool = False,
        offload_params_device: str = "cpu",
        offload_optimizer_device: str = "cpu",
        nvme_path: str = "/local_nvme",
        pin_memory: bool = False,
        sub_group_size: int = 1_000_000_000_000,
        contiguous_gradients: bool = True,
        overlap_comm: bool = True,
        allgather_partitions: bool = True,
        reduce_scatter: bool = True,
        allgather_bucket_size: int = 200_000_000,
        reduce_bucket_size: int = 200_000_000,
        zero_allow_untested_optimizer: bool = True,
        logging_batch_size_per_gpu: str | int = "auto",
        config: str | os.PathLike[str] | dict[str, Any] | None = None,
        logging_level: int = logging.WARN,
        loss_scale: float = 0.0,
        initial_scale_power: int = 16,
        loss_scale_window: int = 1000,
        hysteresis: int = 2,
        min_loss_scale: int = 1,
        partition_activations: bool = False,
        cpu_checkpointing: bool = False,
        exclude_frozen_parameters: bool = False,
    ) -> None:
        super().__init__()
        if isinstance(logging_level, bool) or not isinstance(logging_level, int):
            raise MisconfigurationException(
                f"DeepSpeedStrategy(logging_level={logging_level!r}): expected a logging level int such as "
                "logging.WARN."
            )
        # Built (and so checked) now, where the user passed the arguments, not when the run starts.
        self.config = load_user_config(config) or deepspeed_config(
            zero_optimization=zero_optimization,
            stage=stage,
            offload_optimizer=offload_optimizer,
            offload_parameters=offload_parameters,
            offload_optimizer_device=offload_optimizer_device,
            offload_params_device=offload_params_device,
            nvme_path=nvme_path,
            pin_memory=pin_memory,
            contiguous_gradients=contiguous_gradients,
            overlap_comm=overlap_comm,
            allgather_partitions=allgather_partitions,
            reduce_scatter=reduce_scatter,
            allgather_bucket_size=allgather_bucket_size,
            reduce_bucket_size=reduce_bucket_size,
            sub_group_size=sub_group_size,
            zero_allow_untested_optimizer=zero_allow_untested_optimizer,
            partition_activations=partition_activations,
            cpu_checkpointing=cpu_checkpointing,
            logging_batch_size_per_gpu=logging_batch_size_per_gpu,
        )
        if "gradient_accumulation_steps" in self.config and self.config["gradient_accumulation_steps"] != 1:
            raise MisconfigurationException(
                "DeepSpeedStrategy: do not set 'gradient_accumulation_steps' in the DeepSpeed config; this strategy "
                "steps the engine once per Trainer optimizer step and does not support accumulate_grad_batches > 1 yet."
            )
        self.logging_level = logging_level
        self.exclude_frozen_parameters = exclude_frozen_parameters
        self._scale_options: dict[str, Any] = {
            "loss_scale": loss_scale,
            "initial_scale_power": initial_scale_power,
            "loss_scale_window": loss_scale_window,
            "hysteresis": hysteresis,
            "min_loss_scale": min_loss_scale,
        }
        self.engine: Any = None

    def __repr__(self) -> str:
        stage = self.config.get("zero_optimization", {}).get("stage", 0)
        return f"{type(self).__name__}(stage={stage})"

    @property
    def zero_stage(self) -> int:
        return int(self.config.get("zero_optimization", {}).get("stage", 0))

    # ---- where it runs ------------------------------------------------------------------------------
    @classmethod
    def supports(cls, accelerator: type[Accelerator]) -> bool | None:
        return accelerator.name in _ACCELERATORS

    @classmethod
    def unsupported_reason(cls, accelerator: type[Accelerator]) -> str | None:
        return f"this plugin runs DeepSpeed on {' and '.join(_ACCELERATORS)} devices only"

    def needs_launcher(self, processes: int) -> bool:
        return processes > 1

    def setup_environment(self, accelerator: Accelerator | None = None, device: torch.device | None = None) -> None:
        import torch.distributed as dist

        accelerator, device = self._environment_target(accelerator, device)  # no arguments: Lightning's call

        _select_deepspeed_accelerator(device)
        _import_deepspeed()
        if launched_by_torchrun():
            super().setup_environment(accelerator, device)
            return
        backend = self.backend_for(accelerator, device)
        Strategy.setup_environment(self, accelerator, device)
        if not dist.is_initialized():
            # One device, no launcher: a process group of one, in this process (DeepSpeed needs a group).
            dist.init_process_group(
                backend,
                store=dist.HashStore(),  # type: ignore[attr-defined]
                rank=0,
                world_size=1,
                timeout=collective_timeout(),
            )
            adopt_process_group()
            self._created_group = True
        os.environ.setdefault("LOCAL_RANK", "0")  # the engine asserts that a launcher set it

    # ---- the engine --------------------------------------------------------------------------------
    def run_config(self, precision_name: str) -> dict[str, Any]:
        """This run's config: the strategy's, the precision's entries (unless given), one micro-batch per step."""
        config = dict(self.config)
        if not ({"bf16", "fp16", "bfloat16"} & set(config)):
            config.update(precision_config(precision_name, **self._scale_options))
        config.setdefault("train_micro_batch_size_per_gpu", 1)  # DeepSpeed uses it for throughput logs only
        config["gradient_accumulation_steps"] = 1
        # DeepSpeed 0.19 clips at norm 1.0 unless told otherwise; Lightning (and a plain loop) clip nothing unless
        # asked, so the losses of a run match a single-device run's only with this set.
        config.setdefault("gradient_clipping", 0.0)
        return config

    def setup_module(
        self,
        module: torch.nn.Module,
        precision: NumericPrecision,
        *,
        move_to_device: bool = True,
        compile_options: dict[str, Any] | None = None,
    ) -> PreparedModule:
        raise MisconfigurationException(
            "DeepSpeedStrategy runs under the Trainer only: Fabric's setup() is not supported by accelplug-deepspeed."
        )

    def setup_module_and_optimizers(
        self,
        module: torch.nn.Module,
        precision: NumericPrecision,
        *,
        compile_options: dict[str, Any] | None = None,
        with_optimizers: bool = True,
    ) -> PreparedModule:
        """Build the engine around the module and the one optimizer ``configure_optimizers()`` returns."""
        import deepspeed

        if compile_options is not None:
            raise MisconfigurationException(
                "DeepSpeedStrategy does not support compile=True; compile inside the module instead."
            )
        config = self.run_config(precision.name)
        _check_dtype_support(config, precision.name)
        if precision.name.endswith("-true"):
            module = precision.convert_module(module)
        # The engine scales float16 losses itself: a second scaler in the precision would scale twice.
        precision.scaler = None
        dtype = torch.bfloat16 if "bf16" in config else torch.float16 if "fp16" in config else None
        router = _CastingRouter(module, dtype if dtype is not None and config[_key(config)].get("enabled") else None)
        optim: OptimizerSetup | None = None
        optimizer: torch.optim.Optimizer | None = None
        if with_optimizers:
            configure: Callable[[], Any] = module.configure_optimizers  # type: ignore[assignment]
            optim = parse_optimizers(configure())
            if len(optim.optimizers) != 1:
                raise MisconfigurationException(
                    f"DeepSpeedStrategy steps one optimizer, but configure_optimizers() returned "
                    f"{len(optim.optimizers)}; return one optimizer (and optionally its schedulers)."
                )
            optimizer = optim.optimizers[0]
        deepspeed.utils.logging.logger.setLevel(self.logging_level)
        engine, ds_optimizer, _, _ = deepspeed.initialize(
            model=router, optimizer=optimizer, config=config, dist_init_required=False
        )
        self.engine = engine
        if optim is not None:
            optim = OptimizerSetup([ds_optimizer], optim.schedulers)
        return PreparedModule(module, engine, engine, optim, router=router)

    def _engine(self) -> Any:
        if self.engine is None:
            raise RuntimeError("DeepSpeedStrategy: the engine is built when the Trainer prepares the module")
        return self.engine

    # ---- backward and step: the engine's -------------------------------------------------------------
    def backward(self, loss: torch.Tensor, precision: Any = None, *args: Any, **kwargs: Any) -> None:
        self._engine().backward(loss)

    def optimizer_step(
        self,
        optimizer: torch.optim.Optimizer,
        closure: Callable[[], Any] | None = None,
        precision: Any = None,
        **kwargs: Any,
    ) -> Any:
        value = closure() if closure is not None else None
        self._engine().step()
        return value

    def clip_gradients(
        self,
        module: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        value: float,
        algorithm: str,
        *,
        norm_type: float = 2.0,
        error_if_nonfinite: bool = False,
    ) -> torch.Tensor | None:
        raise MisconfigurationException(
            "DeepSpeedStrategy clips inside the engine: set 'gradient_clipping' in DeepSpeedStrategy(config={...}) "
            "instead of Trainer(gradient_clip_val=...)."
        )

    @contextlib.contextmanager
    def no_gradient_sync(self, wrapped: torch.nn.Module | None) -> Iterator[None]:
        raise MisconfigurationException(
            "DeepSpeedStrategy does not support accumulate_grad_batches > 1 yet (the engine would need its own "
            "gradient_accumulation_steps); use accumulate_grad_batches=1."
        )
        yield  # pragma: no cover - a generator for contextmanager

    # ---- checkpoints: the engine's files in a folder beside the checkpoint file --------------------------
    def module_state_dict(self, module: torch.nn.Module) -> dict[str, Any]:
        """Empty: the engine saves the (partitioned) weights into the checkpoint's folder."""
        return {}

    def optimizer_state_dict(self, module: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        """Empty: the engine saves each rank's optimizer partition into the checkpoint's folder."""
        return {}

    def checkpoint_map_location(self) -> torch.device:
        return torch.device("cpu")

    def save_checkpoint(
        self,
        checkpoint: Any = None,
        path: Any = None,
        write: Callable[[dict[str, Any], Path], object] | None = None,
        *,
        tensor_keys: tuple[str, ...] = ("state_dict", "optimizer_states"),
        **fabric_form: Any,
    ) -> None:
        """Every rank saves its partition with ``engine.save_checkpoint`` into a fresh folder; then rank 0 writes
        the file naming it (atomically, last, so the file always names a complete folder)."""
        if write is None:  # Lightning Fabric's form: the base class gathers the states, then calls back with a writer
            super().save_checkpoint(checkpoint, path, write, **fabric_form)
            return
        token = self.broadcast_object(uuid.uuid4().hex[:12])
        folder = path.parent / f"{path.name}{_FOLDER_SUFFIX}{token}"
        self._engine().save_checkpoint(
            str(folder), tag=_TAG, client_state={}, exclude_frozen_parameters=self.exclude_frozen_parameters
        )
        self.barrier()
        meta = {k: v for k, v in checkpoint.items() if k not in tensor_keys}
        meta["state_dict"] = {}
        meta[SHARDED_KEY] = {
            "folder": folder.name,
            "world_size": self.world_size,
            "optimizers": len(checkpoint["optimizer_states"]) if "optimizer_states" in checkpoint else None,
            "keys": sorted(k for k in tensor_keys if k in checkpoint),
            "format": "deepspeed",
        }
        if self.writes_checkpoints:
            write(meta, path)
            for old in path.parent.glob(f"{path.name}{_FOLDER_SUFFIX}*"):
                if old != folder and old.is_dir():
                    import shutil

                    shutil.rmtree(old, ignore_errors=True)

    def load_sharded_checkpoint(
        self, module: torch.nn.Module, optimizers: list[torch.optim.Optimizer], folder: Path
    ) -> None:
        """The engine's own load: weights, and with ``optimizers`` each rank's optimizer partition."""
        if not (folder / _TAG).is_dir():
            raise MisconfigurationException(
                f"{str(folder)!r} holds no DeepSpeed checkpoint (no {_TAG!r} folder); it was not saved by "
                "DeepSpeedStrategy."
            )
        loaded, _ = self._engine().load_checkpoint(
            str(folder),
            tag=_TAG,
            load_optimizer_states=bool(optimizers),
            load_lr_scheduler_states=False,
            load_module_strict=True,
        )
        if loaded is None:
            raise MisconfigurationException(f"DeepSpeed could not load the checkpoint in {str(folder)!r}.")

    def remove_checkpoint(self, path: str | os.PathLike[str]) -> None:
        """The file and the engine's folder beside it (the core's writer knows only the file)."""
        if self.is_global_zero:
            remove_checkpoint_files(Path(os.fspath(path)))


def _key(config: dict[str, Any]) -> str:
    return "bf16" if "bf16" in config else "fp16"


def _check_dtype_support(config: dict[str, Any], precision_name: str) -> None:
    """Refuse a low precision DeepSpeed's accelerator cannot run (its CPU accelerator has no float16) here, in words,
    rather than as the engine's ``ValueError`` halfway through building itself."""
    from deepspeed.accelerator import get_accelerator

    accelerator = get_accelerator()
    for key, supported, alternative in (
        ("fp16", accelerator.is_fp16_supported, "bf16-mixed or 32-true"),
        ("bf16", accelerator.is_bf16_supported, "32-true"),
    ):
        if config.get(key, {}).get("enabled") and not supported():
            raise MisconfigurationException(
                f"precision={precision_name!r} needs DeepSpeed's {key}, which its {accelerator.device_name()!r} "
                f"accelerator does not support; use precision {alternative}."
            )


def _select_deepspeed_accelerator(device: torch.device) -> None:
    """Make DeepSpeed use the run's device type (its own detection looks for CUDA and other runtimes first)."""
    chosen = os.environ.get("DS_ACCELERATOR")
    if chosen is None:
        os.environ["DS_ACCELERATOR"] = device.type
        return
    if chosen != device.type:
        raise MisconfigurationException(
            f"DS_ACCELERATOR={chosen!r}, but this run is on a {device.type!r} device; unset it or set "
            f"DS_ACCELERATOR={device.type!r}."
        )


def _import_deepspeed() -> None:
    try:
        import deepspeed  # noqa: F401
    except ImportError as exc:
        raise MisconfigurationException(
            f"DeepSpeedStrategy needs the deepspeed package ({exc}); install it with "
            "`DS_BUILD_OPS=0 pip install 'accelplug-deepspeed[deepspeed]'`."
        ) from None


class _Variant(DeepSpeedStrategy):
    """A registered name whose defaults differ from ``deepspeed``'s (Lightning's strategy strings)."""

    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**self.defaults, **kwargs})


def _variant(name: str, description: str, **defaults: Any) -> type[DeepSpeedStrategy]:
    title = "".join(part.title() for part in name.split("_"))
    return type(title + "Strategy", (_Variant,), {"name": name, "description": description, "defaults": defaults})


STRATEGY_VARIANTS: tuple[type[DeepSpeedStrategy], ...] = (
    DeepSpeedStrategy,
    _variant("deepspeed_stage_1", "DeepSpeed ZeRO stage 1 (optimizer states partitioned)", stage=1),
    _variant("deepspeed_stage_2", "DeepSpeed ZeRO stage 2 (optimizer states and gradients partitioned)", stage=2),
    _variant(
        "deepspeed_stage_2_offload",
        "DeepSpeed ZeRO stage 2, optimizer offloaded to the CPU",
        stage=2,
        offload_optimizer=True,
    ),
    _variant("deepspeed_stage_3", "DeepSpeed ZeRO stage 3 (parameters partitioned too)", stage=3),
    _variant(
        "deepspeed_stage_3_offload",
        "DeepSpeed ZeRO stage 3, optimizer and parameters offloaded to the CPU",
        stage=3,
        offload_optimizer=True,
        offload_parameters=True,
    ),
    _variant(
        "deepspeed_stage_3_offload_nvme",
        "DeepSpeed ZeRO stage 3, optimizer and parameters offloaded to NVMe",
        stage=3,
        offload_optimizer=True,
        offload_parameters=True,
        offload_params_device="nvme",
        offload_optimizer_device="nvme",
    ),
)
