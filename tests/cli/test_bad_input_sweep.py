"""Every command refuses bad input the same way: exit 2, one line on stderr, no traceback, no leftovers.

Each case runs ``accelplug.cli.main`` in the test process (``conftest.cli``: milliseconds a case where a
process costs a torch import); ``test_entry_point.py`` runs one refusal through ``python -m accelplug``.
None of them reaches training or starts a worker: every mistake is caught while the options are checked.
(``bench`` has its own tests.)
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from accelplug.accelerators import CUDAAccelerator, MPSAccelerator

RunCli = Callable[..., subprocess.CompletedProcess[str]]

#: Placeholders replaced per test: an empty script, a folder, a config file with given content.
SCRIPT, FOLDER, CONFIG = "{script}", "{folder}", "{config}"

UNAVAILABLE = next((cls.name for cls in (MPSAccelerator, CUDAAccelerator) if not cls.is_available()), None)


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    says: str  # a fragment the one error line must contain
    env: dict[str, str] = field(default_factory=dict)
    config: str | None = None  # contents of a config file ACCELPLUG_CONFIG_FILE then names

    def __str__(self) -> str:
        extra = " ".join(f"{k}={v}" for k, v in self.env.items())
        return " ".join(filter(None, (extra, "accelplug", *self.args)))


def case(*args: str, says: str, env: dict[str, str] | None = None, config: str | None = None) -> Case:
    return Case(args, says, env or {}, config)


CASES = [
    # the command line itself
    case("lst", says="No such command 'lst'. Did you mean 'list'?"),
    case("--versin", says="No such option: --versin. Did you mean --version?"),
    case("list", "--jsn", says="No such option: --jsn. Did you mean --json?"),
    case("list", "extra", says="unexpected extra argument"),
    case("list", "--json=yes", says="does not take a value"),
    case("env", "--jsn", says="Did you mean --json?"),
    case("env", "extra", says="unexpected extra argument"),
    # config: presets, the file, the environment
    case("config", "--default", "--devices", "abc", says="devices='abc'"),
    case("config", "--default", "--devices", "²", says="devices='²'"),
    case("config", "--default", "--devices", "0", says="devices='0'"),
    case("config", "--default", "--devices", "0,0", says="devices='0,0'"),
    case("config", "--default", "--precision", "bf15", says="Did you mean 'bf16'?"),
    case("config", "--default", "--precision", "8", says="precision='8'"),
    case("config", "--default", "--strategy", "D D P", says="strategy='D D P'"),
    case("config", "--default", "--num-nodes", "0", says="num_nodes=0"),
    case("config", "--default", "--num-nodes", "x", says="Invalid value for '--num-nodes'"),
    case("config", "--default", "--accelerator", "c p u", says="accelerator='c p u'"),
    case("config", "--default", "--devices", "2", "--strategy", "single_device", says="asks for several"),
    case("config", "--default", says="/dev/null is not a folder", env={"ACCELPLUG_CONFIG_FILE": "/dev/null/c.toml"}),
    case("config", "--accelerator", "cdua", says="Did you mean 'cuda'?"),
    case("config", "shw", says="No such command 'shw'. Did you mean 'show'?"),
    case("config", "show", says="names a config file that does not exist", env={"ACCELPLUG_CONFIG_FILE": "/no/c.toml"}),
    case("config", "show", says="ACCELPLUG_DEVICES='abc'", env={"ACCELPLUG_DEVICES": "abc"}),
    case("config", "show", says="ACCELPLUG_NUM_NODES='-3'", env={"ACCELPLUG_NUM_NODES": "-3"}),
    case("config", "show", says="ACCELPLUG_MPS_FALLBACK='maybe'", env={"ACCELPLUG_MPS_FALLBACK": "maybe"}),
    case("config", "show", says="line 2", config='accelerator = "cpu"\ndevices = 2 2\n'),
    case("config", "show", says="Did you mean 'precision'?", config='precison = "bf16"\n'),
    case("config", "show", says="[trainer] is a table", config="[trainer]\ndevices = 2\n"),
    # launch
    case("launch", says="launch needs the script to run"),
    case("launch", "--cpu", says="launch needs the script to run"),
    case("launch", "--nproc-per-nod", "2", SCRIPT, says="Did you mean --nproc-per-node?"),
    case("launch", "--devices", says="'--devices' requires an argument"),
    case("launch", "--devices", "²", SCRIPT, says="--devices='²'"),
    case("launch", "--devices", "0", SCRIPT, says="devices=0"),
    case("launch", "--devices", "abc", SCRIPT, says="devices='abc'"),
    case("launch", "--nproc_per_node", "99999", SCRIPT, says="asks for 99999 devices"),
    case("launch", "--max-restarts", "-1", SCRIPT, says="--max-restarts=-1"),
    case("launch", "--master-port", "70000", SCRIPT, says="--master-port=70000"),
    case("launch", "--master-port", "abc", SCRIPT, says="Invalid value for '--master-port'"),
    case("launch", "missing_script.py", says="script 'missing_script.py' is not a file"),
    case("launch", FOLDER, says="is a folder"),
    case("launch", "--nnodes", "2", SCRIPT, says="needs --master-addr and --master-port"),
    case("launch", "--nnodes", "0", SCRIPT, says="--nnodes=0"),
    case("launch", "--nnodes", "1:4", SCRIPT, says="elastic range"),
    case("launch", "--node-rank", "5", SCRIPT, says="--node-rank=5"),
    case("launch", "--cpu", "--accelerator", "cuda", SCRIPT, says="contradict"),
    case("launch", "--accelerator", "mpss", SCRIPT, says="Did you mean 'mps'?"),
    case("launch", "--precision", "bf15", SCRIPT, says="Did you mean 'bf16'?"),
    case("launch", "--precision", "fp16", SCRIPT, says="'16-mixed'"),
    case("launch", "--mixed_precision", "fp8", SCRIPT, says="fp8 is not supported"),
    case("launch", "--use_deepspeed", SCRIPT, says="accelplug-deepspeed plugin"),
    case("launch", "-m", "no_such_module_xyz", says="cannot be found"),
    case("launch", "--rdzv-backend", "c10", SCRIPT, says="Did you mean 'c10d'?"),
    case("launch", "--standalone", "--nnodes", "2", SCRIPT, says="--standalone means one machine"),
    case("launch", SCRIPT, says="ACCELPLUG_DEVICES='abc'", env={"ACCELPLUG_DEVICES": "abc"}),
    case("launch", SCRIPT, says="Did you mean 'cuda'?", env={"ACCELPLUG_ACCELERATOR": "cdua"}),
    # demo (checked before any training)
    case("demo", "--root-dir", "/dev/null/x", says="/dev/null is not a folder"),
    case("demo", "--max-epochs", "0", says="--max-epochs=0"),
    case("demo", "--max-epochs", "x", says="Invalid value for '--max-epochs'"),
    case("demo", "--devices", "²", says="--devices='²'"),
    case("demo", "--cpu", "--accelerator", "cuda", says="contradict"),
    case("demo", "--accelerator", "mpss", says="Did you mean 'mps'?"),
    case("demo", "extra", says="unexpected extra argument"),
]
if UNAVAILABLE:  # a multi-line cause and remedy still reaches the terminal as one line
    CASES.append(case("launch", "--accelerator", UNAVAILABLE, SCRIPT, says=f"accelerator='{UNAVAILABLE}' cannot"))
    CASES.append(case("demo", "--accelerator", UNAVAILABLE, says="Accelerators available here"))


def test_the_sweep_covers_every_command_with_forty_cases() -> None:
    assert len(CASES) >= 40
    assert {c.args[0] for c in CASES if c.args} >= {"list", "env", "config", "launch", "demo"}


@pytest.mark.parametrize("bad", CASES, ids=str)
def test_bad_input_exits_2_with_one_error_line(cli: RunCli, tmp_path: Path, bad: Case) -> None:
    script = tmp_path / "train.py"
    script.write_text("raise SystemExit('the script must never run in these cases')\n")
    replace = {SCRIPT: str(script), FOLDER: str(tmp_path)}
    temporary = tmp_path / "tmp"  # the command's temporary folder: a refused command leaves nothing there
    temporary.mkdir()
    env = {"TMPDIR": str(temporary), **bad.env}
    if bad.config is not None:
        config = tmp_path / "config.toml"
        config.write_text(bad.config)
        env["ACCELPLUG_CONFIG_FILE"] = str(config)
    result = cli(*(replace.get(a, a) for a in bad.args), env=env, input="", timeout=60)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("accelplug: error: ")
    assert bad.says in lines[0]
    assert not list(temporary.iterdir()), "a refused command left files in the temporary folder"
