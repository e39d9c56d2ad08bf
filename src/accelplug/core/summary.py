"""Lightning's ``ModelSummary`` object: a LightningModule's layers, their parameter counts, sizes and FLOPs.

``lightning.pytorch.utilities.model_summary.summarize(module, max_depth)`` returns one; ``str()`` of it is the table
the ``ModelSummary`` callback prints. The rows are the module's children (``max_depth=1``), its submodules down
to ``max_depth`` levels, every submodule (-1) or none (0). When the module sets ``example_input_array``, one forward
pass in eval mode (each submodule's mode restored afterwards) records every row's input and output shapes and
the FLOPs ``torch.utils.flop_counter`` counts; without it the sizes are ``"?"``. Parameters no listed layer holds
appear as a last row, ``"other params"``. Uninitialized (lazy) parameters count as 0, with a warning (once per
process, as Lightning's ``warning_cache`` gives it).

Named ``ModuleSummary`` here, since ``ModelSummary`` is the callback's name in :mod:`accelplug.callbacks`;
Lightning's path gives it Lightning's name. :class:`DeepSpeedSummary` counts DeepSpeed's partitioned parameters.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections import OrderedDict
from typing import Any

import torch
from lightning_utilities.core.rank_zero import WarningCache
from torch import nn

from ..errors import MisconfigurationException

__all__ = [
    "LEFTOVER_PARAMS_NAME",
    "NOT_APPLICABLE",
    "PARAMETER_NUM_UNITS",
    "UNKNOWN_SIZE",
    "DeepSpeedLayerSummary",
    "DeepSpeedSummary",
    "LayerSummary",
    "ModuleSummary",
    "deepspeed_param_size",
    "get_formatted_model_size",
    "get_human_readable_count",
    "parse_batch_shape",
    "summarize",
    "warning_cache",
]

PARAMETER_NUM_UNITS = [" ", "K", "M", "B", "T"]
UNKNOWN_SIZE = "?"
LEFTOVER_PARAMS_NAME = "other params"
NOT_APPLICABLE = "n/a"
#: The warnings this module gives once per process, as Lightning's (a summary's counts are read many times).
warning_cache = WarningCache()
_BITS = {"64": 64, "32": 32, "16": 16, "bf16": 16, "16-true": 16, "bf16-true": 16, "32-true": 32, "64-true": 64}
_UNINITIALIZED = (
    "The total number of parameters detected may be inaccurate because the model contains an instance of "
    "`UninitializedParameter`. To get an accurate number, set `self.example_input_array` in your LightningModule."
)


def get_human_readable_count(number: int | float) -> str:
    """``123`` -> ``'123  '``, ``1234`` -> ``'1.2 K'``, ``2e6`` -> ``'2.0 M'``, up to trillions (``'5,000 T'``)."""
    if number < 0:
        raise MisconfigurationException(f"get_human_readable_count({number!r}): expected a count >= 0.")
    digits = int(math.floor(math.log10(number)) + 1) if number > 0 else 1
    group = min(math.ceil(digits / 3), len(PARAMETER_NUM_UNITS))
    scaled = number * 10 ** (-3 * (group - 1))
    if group == 1 or scaled >= 100:
        return f"{int(scaled):,d} {PARAMETER_NUM_UNITS[group - 1]}"
    return f"{scaled:,.1f} {PARAMETER_NUM_UNITS[group - 1]}"


def get_formatted_model_size(total_model_size: float) -> str:
    """A size in MB with three decimals (``'0.530'``)."""
    return f"{total_model_size:,.3f}"


def parse_batch_shape(batch: Any) -> str | list[Any]:
    """The shape of a tensor as a list, of a list or tuple as a list of shapes; ``"?"`` for anything else."""
    if hasattr(batch, "shape"):
        return list(batch.shape)
    if isinstance(batch, (list, tuple)):
        return [parse_batch_shape(item) for item in batch]
    return UNKNOWN_SIZE


def _uninitialized(parameter: torch.Tensor) -> bool:
    """A lazy parameter whose size is not known yet (warned about; a DTensor's is known)."""
    from torch.nn.parameter import UninitializedParameter

    if isinstance(parameter, UninitializedParameter) and type(parameter).__name__ != "DTensor":
        warning_cache.warn(_UNINITIALIZED)
        return True
    return False


def _count(parameters: Any) -> int:
    return sum(0 if _uninitialized(p) else p.numel() for p in parameters)


class LayerSummary:
    """One layer's row: its type, parameter count and mode, and the input and output shapes of its first forward
    pass after the summary was made (``"?"`` until then; a scripted module records none)."""

    def __init__(self, module: nn.Module) -> None:
        self._module = module
        self._in_size: str | list[Any] | None = None
        self._out_size: str | list[Any] | None = None
        self._hook_handle: Any = None
        if not isinstance(module, torch.jit.ScriptModule):
            self._hook_handle = module.register_forward_hook(self._record, with_kwargs=True)

    def _record(self, _: nn.Module, args: Any, kwargs: Any, output: Any) -> None:
        given = (*args, *kwargs.values()) if kwargs else tuple(args)
        self._in_size = parse_batch_shape(given[0] if len(given) == 1 else given)
        self._out_size = parse_batch_shape(output)
        self.detach_hook()  # a module called again (a recurrent one) keeps its first shapes

    def __del__(self) -> None:
        self.detach_hook()

    def detach_hook(self) -> None:
        """Stop recording (done once the summary is made, or after the first forward pass)."""
        if self._hook_handle is not None:
            self._hook_handle.remove()

    @property
    def in_size(self) -> str | list[Any]:
        return self._in_size or UNKNOWN_SIZE

    @property
    def out_size(self) -> str | list[Any]:
        return self._out_size or UNKNOWN_SIZE

    @property
    def layer_type(self) -> str:
        return type(self._module).__name__

    @property
    def num_parameters(self) -> int:
        return _count(self._module.parameters())

    @property
    def training(self) -> bool:
        return self._module.training


def _module_bits(model: nn.Module) -> int:
    """Bits per parameter for the size estimate: the Trainer's precision (32 when unknown, with a warning)."""
    trainer = getattr(model, "_trainer", None)
    if trainer is None:
        return 32
    precision = str(trainer.precision)
    if precision not in _BITS:
        warnings.warn(
            f"Precision {precision} is not supported by the model summary.  Estimated model size in MB will not be "
            "accurate. Using 32 bits instead.",
            UserWarning,
            stacklevel=3,
        )
    return _BITS.get(precision, 32)


class ModuleSummary:
    """The summary of ``model``'s layers down to ``max_depth`` (-1: all of them, 0: none); Lightning's
    ``ModelSummary`` object. Made at once: the example forward pass, if any, runs when it is built."""

    def __init__(self, model: nn.Module, max_depth: int = 1) -> None:
        if not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < -1:
            raise MisconfigurationException(f"`max_depth` can be -1, 0 or > 0, got {max_depth}.")
        from torch.utils.flop_counter import FlopCounterMode

        self._model = model
        self._max_depth = max_depth
        self._flop_counter = FlopCounterMode(display=False, depth=max_depth + 1)  # the root counts as depth 0
        self._layer_summary = self.summarize()
        self._precision_megabytes = _module_bits(model) / 8.0 * 1e-6

    @property
    def max_depth(self) -> int:
        return self._max_depth

    @property
    def named_modules(self) -> list[tuple[str, nn.Module]]:
        if self._max_depth == 0:
            return []
        if self._max_depth == 1:
            return list(self._model.named_children())
        return list(self._model.named_modules())[1:]  # the root is the table, not a row

    @property
    def layer_names(self) -> list[str]:
        return list(self._layer_summary)

    @property
    def layer_types(self) -> list[str]:
        return [layer.layer_type for layer in self._layer_summary.values()]

    @property
    def in_sizes(self) -> list[Any]:
        return [layer.in_size for layer in self._layer_summary.values()]

    @property
    def out_sizes(self) -> list[Any]:
        return [layer.out_size for layer in self._layer_summary.values()]

    @property
    def param_nums(self) -> list[int]:
        return [layer.num_parameters for layer in self._layer_summary.values()]

    @property
    def training_modes(self) -> list[bool]:
        return [layer.training for layer in self._layer_summary.values()]

    @property
    def total_training_modes(self) -> dict[str, int]:
        """Submodules (the root excluded) in train and in eval mode."""
        modes = [module.training for module in self._model.modules()][1:]
        return {"train": modes.count(True), "eval": modes.count(False)}

    @property
    def total_parameters(self) -> int:
        return _count(self._model.parameters())

    @property
    def trainable_parameters(self) -> int:
        return _count(p for p in self._model.parameters() if p.requires_grad)

    @property
    def total_layer_params(self) -> int:
        return sum(self.param_nums)

    @property
    def model_size(self) -> float:
        """Estimated size of the parameters in MB, at the Trainer's precision."""
        return self.total_parameters * self._precision_megabytes

    @property
    def total_flops(self) -> int:
        return int(self._flop_counter.get_total_flops())

    @property
    def flop_counts(self) -> dict[str, dict[Any, int]]:
        """FLOPs of each row by operator (empty without an example forward pass)."""
        counts = self._flop_counter.get_flop_counts()
        root = type(self._model).__name__
        return {name: dict(counts.get(f"{root}.{name}", {})) for name in self.layer_names}

    def summarize(self) -> dict[str, LayerSummary]:
        """The rows, with their shapes recorded by the example forward pass when the module has an example."""
        summary = OrderedDict((name, self._layer(module)) for name, module in self.named_modules)
        if getattr(self._model, "example_input_array", None) is not None:
            self._forward_example_input()
        for layer in summary.values():
            layer.detach_hook()
        if self._max_depth >= 1:
            for name in [name for name in summary if name.count(".") >= self._max_depth]:
                del summary[name]
        return summary

    def _layer(self, module: nn.Module) -> LayerSummary:
        return LayerSummary(module)

    def _forward_example_input(self) -> None:
        """One forward pass of ``example_input_array`` (through the module's batch-transfer hooks) in eval mode,
        without gradients, under the Trainer's precision when attached; every submodule's mode is restored."""
        model = self._model
        example = _transferred(model, model.example_input_array)  # type: ignore[attr-defined]
        modes = {name: module.training for name, module in model.named_modules()}
        model.eval()
        trainer = getattr(model, "_trainer", None)
        plugin = getattr(trainer, "precision_plugin", None)
        forward_context = plugin.forward_context() if plugin is not None else contextlib.nullcontext()
        try:
            with torch.no_grad(), forward_context, self._flop_counter:
                if isinstance(example, (list, tuple)):
                    model(*example)
                elif isinstance(example, dict):
                    model(**example)
                else:
                    model(example)
        finally:
            for name, module in model.named_modules():
                if name in modes:
                    module.training = modes[name]

    def _get_summary_data(self) -> list[tuple[str, list[str]]]:
        """The table's columns: header and cells."""
        columns: list[tuple[str, list[str]]] = [
            (" ", [str(index) for index in range(len(self._layer_summary))]),
            ("Name", self.layer_names),
            ("Type", self.layer_types),
            ("Params", [get_human_readable_count(n) for n in self.param_nums]),
            ("Mode", ["train" if mode else "eval" for mode in self.training_modes]),
            ("FLOPs", [get_human_readable_count(sum(c.values())) for c in self.flop_counts.values()]),
        ]
        if getattr(self._model, "example_input_array", None) is not None:
            columns.append(("In sizes", [str(size) for size in self.in_sizes]))
            columns.append(("Out sizes", [str(size) for size in self.out_sizes]))
        leftover = self.total_parameters - self.total_layer_params
        if leftover > 0:
            self._add_leftover_params_to_summary(columns, leftover)
        return columns

    def _add_leftover_params_to_summary(self, columns: list[tuple[str, list[str]]], leftover: int) -> None:
        """The last row: parameters held by the module itself, outside every listed layer."""
        special = {" ": " ", "Name": LEFTOVER_PARAMS_NAME, "Params": get_human_readable_count(leftover)}
        for header, cells in columns:
            cells.append(special.get(header, NOT_APPLICABLE))

    def __str__(self) -> str:
        return _format_table(self, self._get_summary_data())

    def __repr__(self) -> str:
        return str(self)


def _transferred(model: nn.Module, batch: Any) -> Any:
    """``batch`` through the module's own transfer hooks to its device, as the Trainer moves a batch."""
    before = getattr(model, "on_before_batch_transfer", None)
    if callable(before):
        batch = before(batch, 0)
    transfer = getattr(model, "transfer_batch_to_device", None)
    device = getattr(model, "device", None)
    if callable(transfer) and device is not None:
        batch = transfer(batch, device, 0)
    after = getattr(model, "on_after_batch_transfer", None)
    if callable(after):
        batch = after(batch, 0)
    return batch


def _format_table(summary: ModuleSummary, columns: list[tuple[str, list[str]]]) -> str:
    """The columns joined by `` | ``, between two rules, then the totals, each value in a field of 10."""
    rows = len(columns[0][1])
    widths = [max([len(header), *(len(str(cell)) for cell in cells)]) for header, cells in columns]
    rule = "-" * (sum(widths) + 3 * (len(columns) + 1))
    lines = [" | ".join(f"{header:<{width}}" for (header, _), width in zip(columns, widths, strict=True)), rule]
    for row in range(rows):
        lines.append(" | ".join(f"{cells[row]!s:<{w}}" for (_, cells), w in zip(columns, widths, strict=True)))
    lines.append(rule)
    total, trainable, modes = summary.total_parameters, summary.trainable_parameters, summary.total_training_modes
    totals = [
        (get_human_readable_count(trainable), "Trainable params"),
        (get_human_readable_count(total - trainable), "Non-trainable params"),
        (get_human_readable_count(total), "Total params"),
        (get_formatted_model_size(summary.model_size), "Total estimated model params size (MB)"),
        (modes["train"], "Modules in train mode"),
        (modes["eval"], "Modules in eval mode"),
        (get_human_readable_count(summary.total_flops), "Total Flops"),
    ]
    lines += [f"{value!s:<10}{label}" for value, label in totals]
    return "\n".join(lines)


def summarize(lightning_module: nn.Module, max_depth: int = 1) -> ModuleSummary:
    """The summary of ``lightning_module`` down to ``max_depth`` (0: no rows)."""
    return ModuleSummary(lightning_module, max_depth=max_depth)


def deepspeed_param_size(p: nn.Parameter) -> int:
    """The full size of a parameter DeepSpeed partitioned (its ``ds_numel``)."""
    if not hasattr(p, "ds_numel"):
        raise MisconfigurationException(
            "deepspeed_param_size: the parameter was not partitioned by DeepSpeed (it has no ds_numel)."
        )
    return int(p.ds_numel)


class DeepSpeedLayerSummary(LayerSummary):
    """A row of a model DeepSpeed partitioned: full parameter counts, and the share each device holds."""

    @property
    def num_parameters(self) -> int:
        return sum(0 if _uninitialized(p) else deepspeed_param_size(p) for p in self._module.parameters())

    @property
    def average_shard_parameters(self) -> int:
        return sum(0 if _uninitialized(p) else int(p.partition_numel()) for p in self._module.parameters())  # type: ignore[attr-defined, misc]


class DeepSpeedSummary(ModuleSummary):
    """:class:`ModuleSummary` of a model DeepSpeed partitioned (ZeRO stage 3), with a ``Params per Device`` column."""

    def _layer(self, module: nn.Module) -> LayerSummary:
        return DeepSpeedLayerSummary(module)

    @property
    def total_parameters(self) -> int:
        return sum(0 if _uninitialized(p) else deepspeed_param_size(p) for p in self._model.parameters())

    @property
    def trainable_parameters(self) -> int:
        return sum(
            0 if _uninitialized(p) else deepspeed_param_size(p) for p in self._model.parameters() if p.requires_grad
        )

    @property
    def parameters_per_layer(self) -> list[int]:
        return [layer.average_shard_parameters for layer in self._layer_summary.values()]  # type: ignore[attr-defined]

    def _get_summary_data(self) -> list[tuple[str, list[str]]]:
        columns = super()._get_summary_data()
        per_device = [get_human_readable_count(n) for n in self.parameters_per_layer]
        if len(per_device) < len(columns[0][1]):
            per_device.append(NOT_APPLICABLE)  # the "other params" row
        columns.insert(4, ("Params per Device", per_device))
        return columns
