"""``accelplug launch``: run a script as one process per device through torchrun.

It speaks torchrun's and ``accelerate launch``'s dialects as well as its own, so a command line
copied from either works or says exactly what to change:

* torchrun's names are accepted as they are (``--nproc-per-node``, ``--node-rank``, ``--master-addr``,
  ``--rdzv-backend``, ``-m``, ``--standalone``, ``--max-restarts``...), and every option may be
  spelt with underscores (``--nproc_per_node``), as torchrun and accelerate allow;
* accelerate's options with an exact equivalent are rewritten to it before parsing
  (:data:`ACCELERATE_EQUIVALENTS`; ``--mixed_precision fp16`` becomes ``--precision 16-mixed``),
  ``--num_processes`` (a total over all machines) is divided by the number of machines;
* options that have no place in accelplug launch (accelerate's DeepSpeed/FSDP switches, torchrun's
  log redirection) are refused with a message naming what to do instead (:data:`REFUSED_OPTIONS`);
* anything else before the script is an unknown option, reported with the closest name.

Everything after the script (or ``-m MODULE``) belongs to the script: parsing stops there
(``allow_interspersed_args=False``), so a script option that shares a name with one of ours reaches
the script untouched.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from ..errors import MisconfigurationException

__all__ = ["ACCELERATE_EQUIVALENTS", "REFUSED_OPTIONS", "LaunchCommand", "register"]

_PASS_THROUGH = {"allow_extra_args": True, "allow_interspersed_args": False}

#: accelerate's spellings (after ``_`` -> ``-``) with an exact accelplug meaning: option -> replacement.
ACCELERATE_EQUIVALENTS = {
    "--num-machines": "--nnodes",
    "--machine-rank": "--node-rank",
    "--main-process-ip": "--master-addr",
    "--main-process-port": "--master-port",
    "--gpu-ids": "--devices",
    "--mixed-precision": "--precision",
}
#: ``accelerate launch --mixed_precision`` values and the precision each one is.
ACCELERATE_PRECISIONS = {"no": "32-true", "fp16": "16-mixed", "bf16": "bf16-mixed"}

_RUN_TORCHRUN = (
    "accelplug launch does not pass it on; start the script with torchrun directly (a script using "
    "accelplug's Trainer behaves the same under it)"
)
_IN_THE_SCRIPT = "choose it in the script, where the Trainer is built"
#: Options (and option prefixes ending in ``-``) refused with what to do instead.
REFUSED_OPTIONS = {
    "--config-file": "accelplug reads its defaults from the file `accelplug config` writes; "
    "point ACCELPLUG_CONFIG_FILE at another file to use that",
    "--use-deepspeed": f"{_IN_THE_SCRIPT}: Trainer(strategy='deepspeed_stage_2') with the accelplug-deepspeed plugin",
    "--deepspeed-": f"{_IN_THE_SCRIPT}: Trainer(strategy=DeepSpeedStrategy(...)) from the accelplug-deepspeed plugin",
    "--use-fsdp": f"{_IN_THE_SCRIPT}: Trainer(strategy='fsdp')",
    "--fsdp-": f"{_IN_THE_SCRIPT}: Trainer(strategy='fsdp', ...)",
    "--use-megatron-lm": "Megatron-LM is not supported by accelplug",
    "--megatron-lm-": "Megatron-LM is not supported by accelplug",
    "--dynamo-backend": f"{_IN_THE_SCRIPT}: Trainer(compile=True) or Trainer(compile='max-autotune')",
    "--dynamo-": f"{_IN_THE_SCRIPT}: Trainer(compile={{...}})",
    "--num-cpu-threads-per-process": "set OMP_NUM_THREADS=N before accelplug launch (by default CPU workers "
    "share the cores)",
    "--main-training-function": "accelplug launch runs the whole script, as torchrun does",
    "--same-network": "not needed: give --master-addr and --master-port",
    "--tpu": "install the accelplug-xla plugin (plugins/accelplug-xla) and use --accelerator xla",
    "--use-xpu": "install the accelplug-xpu plugin and use --accelerator xpu",
    "--ipex": "install the accelplug-xpu plugin and use --accelerator xpu",
    "--quiet": "accelplug launch prints a single line before the workers start",
    "--no-python": _RUN_TORCHRUN,
    "--run-path": _RUN_TORCHRUN,
    "--log-dir": _RUN_TORCHRUN,
    "--redirects": _RUN_TORCHRUN,
    "-r": _RUN_TORCHRUN,
    "--tee": _RUN_TORCHRUN,
    "-t": _RUN_TORCHRUN,
    "--local-ranks-filter": _RUN_TORCHRUN,
    "--start-method": _RUN_TORCHRUN,
    "--role": _RUN_TORCHRUN,
    "--monitor-interval": _RUN_TORCHRUN,
    "--local-addr": _RUN_TORCHRUN,
    "--logs-specs": _RUN_TORCHRUN,
    "--numa-binding": _RUN_TORCHRUN,
    "--signals-to-handle": _RUN_TORCHRUN,
    "--event-log-handler": _RUN_TORCHRUN,
    "--virtual-local-rank": _RUN_TORCHRUN,
    "--shutdown-timeout": _RUN_TORCHRUN,
    "--duplicate-stdout-filters": _RUN_TORCHRUN,
    "--duplicate-stderr-filters": _RUN_TORCHRUN,
}

_EPILOG = (
    "Options after SCRIPT (or -m MODULE) go to the script. Options you leave out come from "
    "ACCELPLUG_* variables, then the config file (accelplug config). Underscore spellings "
    "(--nproc_per_node) work too, and so do accelerate launch's --num_processes, --num_machines, "
    "--machine_rank, --main_process_ip, --main_process_port, --mixed_precision, --gpu_ids and "
    "--multi_gpu."
)


def _refusal(name: str) -> str | None:
    for option, why in REFUSED_OPTIONS.items():
        if name == option or (option.endswith("-") and name.startswith(option)):
            return why
    return None


class LaunchCommand(TyperCommand):
    """The ``launch`` command: rewrites torchrun/accelerate spellings before click parses them."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:  # shell completion parses partial lines: never refuse those
            args = self._translate(ctx, args)
        return super().parse_args(ctx, args)

    def _takes_value(self, ctx: Any) -> dict[str, bool]:
        names: dict[str, bool] = {}
        for param in self.get_params(ctx):
            for name in [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())]:
                names[name] = not getattr(param, "is_flag", False)
        return names

    def _translate(self, ctx: Any, args: list[str]) -> list[str]:
        """Normalise the options before the script; everything from the script on is left as it is."""
        takes_value = self._takes_value(ctx)
        out: list[str] = []
        i = 0
        while i < len(args):
            token = args[i]
            if token == "--" or not token.startswith("-") or token == "-":
                out.extend(args[i:])  # the script and its arguments
                break
            name, eq, value = token.partition("=")
            if name.startswith("--"):
                name = "--" + name[2:].replace("_", "-")
            why = _refusal(name) if name not in takes_value else None
            if why is not None:
                raise MisconfigurationException(f"launch option {token.split('=')[0]} is not supported: {why}.")
            if name == "--multi-gpu":  # accelerate: "several GPUs" is the 'gpu' accelerator, all devices by default
                out.append("--accelerator=gpu")
                i += 1
                continue
            if name not in takes_value and name not in ACCELERATE_EQUIVALENTS:
                out.append(token)  # unknown: click reports it as the user spelt it, with the closest name
                i += 1
                continue
            replacement = ACCELERATE_EQUIVALENTS.get(name, name)
            needs_value = takes_value.get(replacement, False)
            if needs_value and not eq and i + 1 < len(args):
                value, eq = args[i + 1], "="
                i += 1
            if name == "--mixed-precision" and eq:
                value = self._accelerate_precision(value)
            if name == "--gpu-ids" and eq and value.strip().lower() == "all":
                value = "-1"
            out.append(f"{replacement}={value}" if eq else replacement)
            i += 1
        return out

    @staticmethod
    def _accelerate_precision(value: str) -> str:
        text = value.strip().lower()
        if text == "fp8":
            raise MisconfigurationException(
                "--mixed_precision fp8 is not supported by accelplug; accepted: no (32-true), bf16 (bf16-mixed), "
                "fp16 (16-mixed), or accelplug's own --precision values."
            )
        return ACCELERATE_PRECISIONS.get(text, value)


def register(app: typer.Typer) -> None:
    """Add the ``launch`` command to ``app``."""

    @app.command(
        "launch",
        cls=LaunchCommand,
        context_settings=_PASS_THROUGH,
        options_metavar="[OPTIONS] (SCRIPT | -m MODULE) [SCRIPT_ARGS]...",
        epilog=_EPILOG,
    )
    def launch_command(
        ctx: typer.Context,
        cpu: Annotated[bool, typer.Option("--cpu", help="Use the CPU (sets ACCELPLUG_ACCELERATOR=cpu).")] = False,
        accelerator: Annotated[
            str | None, typer.Option("--accelerator", metavar="NAME", help="Accelerator name, 'gpu' or 'auto'.")
        ] = None,
        devices: Annotated[
            str | None,
            typer.Option(
                "--devices",
                "--nproc-per-node",
                metavar="N",
                help="Processes on this node: a count, -1 (all), 'auto' or indices '0,2'.",
            ),
        ] = None,
        num_processes: Annotated[
            int | None,
            typer.Option("--num-processes", hidden=True, help="accelerate's total process count over all nodes."),
        ] = None,
        precision: Annotated[
            str | None,
            typer.Option(
                "--precision",
                metavar="P",
                help="32-true, bf16-mixed, 16-mixed, 64-true (or 32, bf16, 16, 64); workers get ACCELPLUG_PRECISION.",
            ),
        ] = None,
        nnodes: Annotated[str | None, typer.Option("--nnodes", metavar="N", help="Machines taking part.")] = None,
        node_rank: Annotated[
            int | None, typer.Option("--node-rank", metavar="R", help="This machine's rank, 0..nnodes-1.")
        ] = None,
        master_addr: Annotated[
            str | None, typer.Option("--master-addr", metavar="ADDR", help="Address of the node-rank-0 machine.")
        ] = None,
        master_port: Annotated[
            int | None,
            typer.Option("--master-port", metavar="PORT", help="Its rendezvous port (a free one on a single node)."),
        ] = None,
        rdzv_backend: Annotated[
            str | None,
            typer.Option(
                "--rdzv-backend",
                metavar="NAME",
                help="torchrun rendezvous: static (--master-addr/--master-port, the default), c10d, etcd, etcd-v2.",
            ),
        ] = None,
        rdzv_endpoint: Annotated[
            str | None,
            typer.Option("--rdzv-endpoint", metavar="HOST:PORT", help="Where the nodes meet (c10d: port 29400)."),
        ] = None,
        rdzv_id: Annotated[
            str | None, typer.Option("--rdzv-id", metavar="ID", help="Job id shared by the nodes (torchrun's).")
        ] = None,
        rdzv_conf: Annotated[
            str | None, typer.Option("--rdzv-conf", metavar="K=V,...", help="Rendezvous settings passed to torchrun.")
        ] = None,
        standalone: Annotated[
            bool, typer.Option("--standalone", help="One machine, rendezvous on a free local port (the default).")
        ] = False,
        max_restarts: Annotated[
            int,
            typer.Option(
                "--max-restarts",
                metavar="N",
                help="Restart the workers up to N times after a failure (torchrun's elastic restarts).",
            ),
        ] = 0,
        module: Annotated[
            bool, typer.Option("-m", "--module", help="Run MODULE as `python -m MODULE` instead of a script file.")
        ] = False,
        mps_fallback: Annotated[
            bool | None,
            typer.Option("--mps-fallback/--no-mps-fallback", help="Set PYTORCH_ENABLE_MPS_FALLBACK=1 for the script."),
        ] = None,
    ) -> None:
        """Run a script as one process per device, through torchrun.

        The workers are started by torchrun's agent (torch.distributed.run): each sees RANK,
        LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, and a failing rank stops the job.
        """
        if not ctx.args:
            raise MisconfigurationException(
                "launch needs the script to run: accelplug launch [OPTIONS] SCRIPT [SCRIPT_ARGS]... "
                "(or -m MODULE [ARGS]...)."
            )
        if num_processes is not None:
            devices = _per_node(num_processes, devices, nnodes)
        from ..launcher import launch

        code = launch(
            ctx.args[0],
            list(ctx.args[1:]),
            cpu=cpu,
            accelerator=accelerator,
            devices=devices,
            nnodes=nnodes,
            node_rank=node_rank,
            master_addr=master_addr,
            master_port=master_port,
            mps_fallback=mps_fallback,
            as_module=module,
            precision=precision,
            max_restarts=max_restarts,
            rdzv_backend=rdzv_backend,
            rdzv_endpoint=rdzv_endpoint,
            rdzv_id=rdzv_id,
            rdzv_conf=rdzv_conf,
            standalone=standalone,
        )
        raise typer.Exit(code)


def _per_node(num_processes: int, devices: str | None, nnodes: str | None) -> str:
    """accelerate's ``--num_processes`` counts processes over all machines; accelplug counts per machine."""
    if devices is not None:
        raise MisconfigurationException(
            "--num_processes (accelerate's total over all machines) and --devices/--nproc-per-node (per machine) "
            "contradict each other; give --devices."
        )
    nodes = int(nnodes) if nnodes is not None and nnodes.strip().isascii() and nnodes.strip().isdigit() else 1
    if num_processes < 1 or nodes < 1 or num_processes % nodes:
        raise MisconfigurationException(
            f"--num_processes={num_processes} is invalid: expected a positive multiple of the number of machines "
            f"({nodes}); accelplug runs --devices = num_processes / machines on each."
        )
    return str(num_processes // nodes)
