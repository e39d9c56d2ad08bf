"""``ModelSummary`` and ``RichModelSummary``: the table of a module's layers printed when fit starts.

Lightning's table: one row per layer down to ``max_depth`` (1: the module's children; -1: every submodule;
0: no table), with its type, parameter count, train/eval mode and FLOPs, then the totals. FLOPs and the
``In sizes``/``Out sizes`` columns come from one forward pass of ``example_input_array`` when the module sets
one (counted by ``torch.utils.flop_counter.FlopCounterMode``); without it they are 0 and left out. The table
goes to stderr on the global-zero process, like the rest of what the Trainer prints; ``RichModelSummary``'s to
rich's console, as Lightning's.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from dataclasses import field
from typing import Any, Literal

import torch

from .._import_paths import seen_at
from .._record import record
from ..errors import MisconfigurationException, PackageNotInstalledError
from .base import Callback

__all__ = ["ModelSummary", "RichModelSummary", "SummaryData", "human_readable_count", "summarize"]

#: Lightning's path of ``RichModelSummary``, where code written for Lightning replaces ``_RICH_AVAILABLE``.
_PUBLIC_PATH = "accelplug.pytorch.callbacks.rich_model_summary"

_UNITS = (" ", "K", "M", "B", "T")
_BITS = {"64": 64, "32": 32, "16": 16, "bf16": 16, "16-true": 16, "bf16-true": 16, "32-true": 32, "64-true": 64}


def human_readable_count(number: int) -> str:
    """``123`` -> ``'123  '``, ``1234`` -> ``'1.2 K'``, ``2e6`` -> ``'2.0 M'`` (Lightning's abbreviation)."""
    digits = int(math.floor(math.log10(number)) + 1) if number > 0 else 1
    group = min(math.ceil(digits / 3), len(_UNITS))
    value = number * 10 ** (-3 * (group - 1))
    if group == 1 or value >= 100:
        return f"{int(value):,d} {_UNITS[group - 1]}"
    return f"{value:,.1f} {_UNITS[group - 1]}"


def _shape(value: Any) -> Any:
    if hasattr(value, "shape"):
        return list(value.shape)
    if isinstance(value, (list, tuple)):
        return [_shape(v) for v in value]
    return "?"


@record
class SummaryData:
    """What the table shows: the columns (header, cells) and the totals below it."""

    columns: list[tuple[str, list[str]]]
    total_parameters: int
    trainable_parameters: int
    model_size: float
    training_modes: dict[str, int]
    total_flops: int = 0
    layers: list[str] = field(default_factory=list)


def _check_depth(max_depth: Any) -> None:
    if not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < -1:
        raise MisconfigurationException(f"ModelSummary(max_depth={max_depth!r}) is invalid: use -1, 0 or an int > 0.")


def _layers(module: torch.nn.Module, max_depth: int) -> list[tuple[str, torch.nn.Module]]:
    if max_depth == 0:
        return []
    if max_depth == 1:
        return list(module.named_children())
    found = list(module.named_modules())[1:]  # the module itself is the table, not a row
    return [(n, m) for n, m in found if max_depth < 0 or n.count(".") < max_depth]


def summarize(module: torch.nn.Module, max_depth: int = 1, precision: str | None = None) -> SummaryData:
    """The summary of ``module`` down to ``max_depth`` (-1: all), sized for ``precision`` (default 32 bits)."""
    _check_depth(max_depth)
    layers = _layers(module, max_depth)
    sizes: dict[str, tuple[Any, Any]] = {}
    flops: dict[str, int] = {}
    total_flops = 0
    example = getattr(module, "example_input_array", None)
    if example is not None:
        total_flops = _forward_example(module, example, layers, sizes, flops)
    counts = [sum(p.numel() for p in layer.parameters()) for _, layer in layers]
    total = sum(p.numel() for p in module.parameters())
    trainable = sum(p.numel() for p in module.parameters() if p.requires_grad)
    modes = [m.training for m in list(module.modules())[1:]]
    columns: list[tuple[str, list[str]]] = [
        (" ", [str(i) for i in range(len(layers))]),
        ("Name", [name for name, _ in layers]),
        ("Type", [type(layer).__name__ for _, layer in layers]),
        ("Params", [human_readable_count(n) for n in counts]),
        ("Mode", ["train" if layer.training else "eval" for _, layer in layers]),
        ("FLOPs", [human_readable_count(flops.get(name, 0)) for name, _ in layers]),
    ]
    if example is not None:
        columns.append(("In sizes", [str(sizes.get(name, ("?", "?"))[0]) for name, _ in layers]))
        columns.append(("Out sizes", [str(sizes.get(name, ("?", "?"))[1]) for name, _ in layers]))
    leftover = total - sum(counts)
    if leftover > 0:  # parameters held by the module itself, outside any listed layer
        for header, cells in columns:
            extra = {" ": " ", "Name": "other params", "Params": human_readable_count(leftover)}.get(header, "n/a")
            cells.append(extra)
    bits = _BITS.get(str(precision), 32) if precision is not None else 32
    return SummaryData(
        columns=columns,
        total_parameters=total,
        trainable_parameters=trainable,
        model_size=total * bits / 8 * 1e-6,
        training_modes={"train": modes.count(True), "eval": modes.count(False)},
        total_flops=total_flops,
        layers=[name for name, _ in layers],
    )


def _forward_example(
    module: torch.nn.Module,
    example: Any,
    layers: list[tuple[str, torch.nn.Module]],
    sizes: dict[str, tuple[Any, Any]],
    flops: dict[str, int],
) -> int:
    """One forward pass of ``example`` in eval mode: each listed layer's first input/output shape, and FLOPs."""
    from torch.utils.flop_counter import FlopCounterMode

    handles = []
    for name, layer in layers:

        def record(_: Any, args: Any, kwargs: Any, out: Any, name: str = name) -> None:
            if name not in sizes:
                given = (*args, *kwargs.values())
                sizes[name] = (_shape(given[0] if len(given) == 1 else given), _shape(out))

        handles.append(layer.register_forward_hook(record, with_kwargs=True))
    modes = {m: m.training for m in module.modules()}
    counter = FlopCounterMode(display=False)
    try:
        module.eval()
        with torch.no_grad(), counter:
            if isinstance(example, (list, tuple)):
                module(*example)
            elif isinstance(example, dict):
                module(**example)
            else:
                module(example)
    finally:
        for handle in handles:
            handle.remove()
        for m, training in modes.items():
            m.train(training)
    by_module = counter.get_flop_counts()
    root = type(module).__name__
    for name, _ in layers:
        flops[name] = sum(by_module.get(f"{root}.{name}", {}).values())
    return int(counter.get_total_flops())


def format_table(data: SummaryData) -> str:
    """Lightning's plain-text table: columns joined by `` | ``, rules, then the totals."""
    widths = [max([len(header)] + [len(str(c)) for c in cells]) for header, cells in data.columns]
    rule = "-" * (sum(widths) + 3 * (len(data.columns) + 1))
    lines = [" | ".join(header.ljust(w) for (header, _), w in zip(data.columns, widths, strict=True)), rule]
    rows = len(data.columns[0][1])
    for i in range(rows):
        lines.append(" | ".join(str(cells[i]).ljust(w) for (_, cells), w in zip(data.columns, widths, strict=True)))
    lines.append(rule)
    totals = [
        (human_readable_count(data.trainable_parameters), "Trainable params"),
        (human_readable_count(data.total_parameters - data.trainable_parameters), "Non-trainable params"),
        (human_readable_count(data.total_parameters), "Total params"),
        (f"{data.model_size:,.3f}", "Total estimated model params size (MB)"),
        (str(data.training_modes["train"]), "Modules in train mode"),
        (str(data.training_modes["eval"]), "Modules in eval mode"),
        (human_readable_count(data.total_flops), "Total Flops"),
    ]
    lines += [f"{value:<10}{label}" for value, label in totals]
    return "\n".join(lines)


class ModelSummary(Callback):
    """Prints the layer table when fit starts (``max_depth`` 0: nothing)."""

    def __init__(self, max_depth: int = 1, **summarize_kwargs: Any) -> None:
        if not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < -1:
            raise MisconfigurationException(
                f"ModelSummary(max_depth={max_depth!r}) is invalid: use -1, 0 or an int > 0."
            )
        self._max_depth = max_depth
        self._summarize_kwargs = summarize_kwargs

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        if not self._max_depth:
            return
        precision = getattr(trainer, "precision", None)
        data = summarize(pl_module, self._max_depth, None if precision is None else str(precision))
        if trainer.is_global_zero:
            self.summarize(
                data.columns,
                data.total_parameters,
                data.trainable_parameters,
                data.model_size,
                data.training_modes,
                total_flops=data.total_flops,
                **self._summarize_kwargs,
            )

    @staticmethod
    def summarize(
        summary_data: list[tuple[str, list[str]]],
        total_parameters: int,
        trainable_parameters: int,
        model_size: float,
        total_training_modes: dict[str, int],
        total_flops: int,
        **summarize_kwargs: Any,
    ) -> None:
        """Print the table (a subclass shows it another way: ``RichModelSummary``)."""
        data = SummaryData(
            summary_data, total_parameters, trainable_parameters, model_size, total_training_modes, total_flops
        )
        print(format_table(data), file=sys.stderr, flush=True)


class RichModelSummary(ModelSummary):
    """The same table drawn by ``rich`` on rich's console (stdout, as Lightning's; ``header_style`` as in Lightning,
    default ``"bold magenta"``)."""

    def __init__(self, max_depth: int = 1, **summarize_kwargs: Any) -> None:
        # Lightning's flag where code written for Lightning replaces it (its path loaded), else looked up: every
        # Trainer() makes one, and neither importing rich nor reading package metadata belongs on that path
        flag = seen_at(_PUBLIC_PATH, "_RICH_AVAILABLE", None)
        if not (importlib.util.find_spec("rich") is not None if flag is None else flag):
            raise PackageNotInstalledError(
                "`RichModelSummary` requires `rich` to be installed. Install it by running `pip install -U rich` "
                "(or use ModelSummary)."
            )
        super().__init__(max_depth, **summarize_kwargs)

    @staticmethod
    def summarize(
        summary_data: list[tuple[str, list[str]]],
        total_parameters: int,
        trainable_parameters: int,
        model_size: float,
        total_training_modes: dict[str, int],
        total_flops: int,
        **summarize_kwargs: Any,
    ) -> None:
        import rich
        from rich.table import Table

        console = rich.get_console()  # rich's console (stdout), as Lightning's; read each time, so it can be replaced
        table = Table(header_style=summarize_kwargs.get("header_style", "bold magenta"))
        right = {"Params", "FLOPs", "In sizes", "Out sizes"}
        for header, _ in summary_data:
            justify: Literal["left", "right"] = "right" if header in right else "left"
            table.add_column(header, justify=justify, style="dim" if header == " " else None)
        for row in zip(*(cells for _, cells in summary_data), strict=True):
            table.add_row(*row)
        console.print(table)
        totals = Table.grid(expand=True)
        totals.add_column()
        for label, value in (
            ("Trainable params", human_readable_count(trainable_parameters)),
            ("Non-trainable params", human_readable_count(total_parameters - trainable_parameters)),
            ("Total params", human_readable_count(total_parameters)),
            ("Total estimated model params size (MB)", f"{model_size:,.3f}"),
            ("Modules in train mode", str(total_training_modes["train"])),
            ("Modules in eval mode", str(total_training_modes["eval"])),
            ("Total FLOPs", human_readable_count(total_flops)),
        ):
            totals.add_row(f"[bold]{label}[/]: {value:<10}")
        console.print(totals)
