"""accelplug's start-up cost on top of ``import torch``: whole processes in interleaved pairs, then where it goes.

    python benchmarks/import_time.py                          # 9 pairs per command
    python benchmarks/import_time.py --pairs 40 --only-tail   # the whole-process tails only, many pairs
    python benchmarks/import_time.py --pairs 15 --baseline-src ../before/src
    python benchmarks/import_time.py --peers                  # Lightning and Accelerate too, when installed
    python benchmarks/import_time.py --instructions 3 --baseline-src ../before/src   # counted, under valgrind

**Whole process, in pairs.** Each command runs in a fresh interpreter right beside a fresh ``import torch``
(the order alternating from pair to pair), and the figure is the difference within each pair: drift in the
machine's load, which moves a 1.5 s process by hundreds of milliseconds on a shared box, hits both halves
of a pair alike. The median of the differences is reported with their spread (quartiles, then extremes), in
wall time (what a user waits) and in the CPU time the process used (user + system), which a loaded machine
disturbs far less than the wall clock.
``--baseline-src`` times another checkout's ``src`` folder (``git worktree add ../before main``) the same
way in the same rounds, so a before/after comparison comes from one sitting.

**Whole process, `import torch` excluded.** ``import torch`` itself varies by hundreds of milliseconds from one
process to the next (on the 2-core machine 1.9 to 2.6 s within a minute), which buries a 30 ms difference under
any practical number of pairs. So each pair is also run as two processes that both start with ``import torch``
and mark the monotonic clock (``time.perf_counter``, shared by every process on the machine) right after it; one
then runs the snippet, the other nothing, and both exit normally. The parent reads the clock when each process
has exited, so a process's *tail* is everything after ``import torch``: the snippet, and the interpreter's
shutdown, which walks the larger heap the snippet leaves. The difference of the two tails is the whole-process
cost with ``import torch``'s variance left out. Importing torch before ``accelplug`` instead of through it loads
the same modules; what differs is only the order.

**Whole process, counted.** ``--instructions N`` runs each whole process (``python -c "import torch"`` and
``python -c SNIPPET``) under valgrind's cachegrind, which counts the instructions the process executes, with the
hash seeds 0 .. N-1 (``PYTHONHASHSEED``: string hashing moves dict and set layouts, and with them some
instructions). A count does not depend on the machine's load or speed, so it settles in one pair what timed pairs
cannot; the report gives the snippet's extra instructions as a share of ``import torch``'s, and what that share
is in milliseconds of an ``import torch`` timed here (median of five) or given (``--torch-ms``). It is the
instructions' share, not the time's: the same count of the interpreter's work and of the dynamic loader's need
not take the same time. Each process runs about 25 times slower under valgrind (a minute for ``import torch``).

**In one process.** The same snippet timed with ``perf_counter`` after ``import torch``, and the part of it
spent in full (generation 2) garbage collections. ``import torch`` leaves a large heap, which a full collection
walks, and the objects a few thousand more allocations leave behind trigger one: any script that goes on to do
real work pays it once, and a snippet either pays it or not, whatever else it costs. The figures say which.

**Where it goes.** ``python -X importtime`` of the snippet (median of three), counting only modules that
``import torch`` alone does not load, grouped by package (accelplug by room); ``via`` is the last line of
accelplug in the chain that brought each group in, from ``scripts/import_chain.py``. A full collection lands in
whichever module is importing at that moment and inflates its self time.

accelplug's modules are byte-compiled first, as ``pip install`` does for an installed package: an editable
install run with ``PYTHONDONTWRITEBYTECODE=1`` (set on the project's machines) would otherwise recompile
every module in every process, which no installed copy does.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TORCH = "import torch"
#: What issue 28 measures: the plugin registry's listing, then a Trainer on whatever this machine has.
SNIPPET = "import accelplug; accelplug.get_registry().available(); accelplug.Trainer(accelerator='auto')"
#: label -> (code, the code timed beside it): ``import accelplug`` loads no torch, so it is paired with ``pass``.
COMMANDS: dict[str, tuple[str, str]] = {
    "import accelplug (no torch, no plugins), minus `python -c pass`": ("import accelplug", "pass"),
    "import accelplug; get_registry().available(); Trainer(accelerator='auto')": (SNIPPET, TORCH),
}
PEERS: dict[str, tuple[str, str]] = {
    "Lightning: Trainer(accelerator='auto')": (
        "lightning",
        "from lightning.pytorch import Trainer; Trainer(accelerator='auto', logger=False, enable_progress_bar=False)",
    ),
    "Accelerate: Accelerator()": ("accelerate", "from accelerate import Accelerator; Accelerator()"),
}

_IN_PROCESS = """
import gc, json, time
full = []
def watch(phase, info, started=[0.0]):
    if phase == "start":
        started[0] = time.perf_counter()
    elif info["generation"] == 2:
        full.append(time.perf_counter() - started[0])
import torch
gc.callbacks.append(watch)
start, cpu = time.perf_counter(), time.process_time()
exec(SNIPPET)
took, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps([took, sum(full), len(full), cpu]))
"""


def _env(src: str | None) -> dict[str, str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    return env


def _wall(code: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds of ``python -c code``, and the CPU seconds (user + system) the process used."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", code], env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise subprocess.CalledProcessError(child.returncode, code)
    return wall, usage.ru_utime + usage.ru_stime


def _pair(code: str, partner: str, env: dict[str, str], partner_first: bool) -> tuple[float, float]:
    """``code`` minus ``partner`` (wall, CPU seconds), run back to back in that order or the other."""
    if partner_first:
        partner_s = _wall(partner, env)
        code_s = _wall(code, env)
    else:
        code_s = _wall(code, env)
        partner_s = _wall(partner, env)
    return code_s[0] - partner_s[0], code_s[1] - partner_s[1]


_MARK = "import torch, os, time\nos.write(1, repr((time.perf_counter(), time.process_time())).encode())\n"


def _tail(code: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds a process spends after its ``import torch``: ``code``, then its exit."""
    child = subprocess.Popen(
        [sys.executable, "-c", _MARK + code], env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert child.stdout is not None
    marked = child.stdout.read()  # to EOF: the child's stdout closes when it exits
    _, status, usage = os.wait4(child.pid, 0)
    end = time.perf_counter()
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise subprocess.CalledProcessError(child.returncode, code)
    mark_wall, mark_cpu = (float(v) for v in marked.decode().strip("()").split(","))
    # process_time at the mark and rusage both count user + system time since the child started
    return end - mark_wall, usage.ru_utime + usage.ru_stime - mark_cpu


def _tail_pair(code: str, env: dict[str, str], bare_first: bool) -> tuple[float, float]:
    """The tail of ``code`` minus the tail of a process that imports torch and exits (wall, CPU seconds)."""
    runs = [("pass", env), (code, env)] if bare_first else [(code, env), ("pass", env)]
    tails = {c: _tail(c, e) for c, e in runs}
    return tails[code][0] - tails["pass"][0], tails[code][1] - tails["pass"][1]


_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def _instructions(code: str, env: dict[str, str], seed: int) -> int:
    """Instructions the whole process ``python -c code`` executes, counted by valgrind's cachegrind."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    out = subprocess.run(
        [*command, sys.executable, "-c", code],
        env={**env, "PYTHONHASHSEED": str(seed)},
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    found = _REFS.search(out.stderr)
    if found is None:
        raise RuntimeError(f"valgrind printed no instruction count:\n{out.stderr[-2000:]}")
    return int(found[1].replace(",", ""))


def instructions_report(trees: dict[str, dict[str, str]], seeds: int, torch_ms: float | None) -> dict[str, Any]:
    """Print (and return) the snippet's extra instructions over ``import torch``, whole processes, per seed."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    if torch_ms is None:
        torch_ms = statistics.median(_wall(TORCH, trees["this tree"])[0] for _ in range(5)) * 1000
    rows: dict[str, list[tuple[int, int]]] = {label: [] for label in trees}
    for seed in range(seeds):
        for label, env in trees.items():
            rows[label].append((_instructions(TORCH, env, seed), _instructions(SNIPPET, env, seed)))
    print(f"\nwhole process, instructions (valgrind), {SNIPPET} minus import torch; import torch: {torch_ms:.0f} ms")
    for label, pairs in rows.items():
        for seed, (bare, snippet) in enumerate(pairs):
            share = (snippet - bare) / bare
            print(
                f"  {label:10} PYTHONHASHSEED={seed}: import torch {bare / 1e9:.3f} G, snippet {snippet / 1e9:.3f} G, "
                f"+{(snippet - bare) / 1e6:.1f} M = {share:.2%} of import torch = {share * torch_ms:.1f} ms of it"
            )
    return {"torch_ms": torch_ms, "instructions": rows}


def _in_process(env: dict[str, str]) -> list[float]:
    code = _IN_PROCESS.replace("exec(SNIPPET)", SNIPPET.replace("; ", "\n"))
    out = subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True, text=True, cwd=REPO)
    return [float(v) for v in json.loads(out.stdout.strip().splitlines()[-1])]


def _accelplug_folder(env: dict[str, str]) -> str:
    code = "import accelplug, os; print(os.path.dirname(accelplug.__file__))"
    out = subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True, text=True, cwd=REPO)
    return out.stdout.strip()


def _spread(ms: list[float]) -> str:
    q1, _, q3 = statistics.quantiles(ms, n=4) if len(ms) > 1 else (ms[0], 0, ms[0])
    median = statistics.median(ms)
    return f"{median:+7.0f} ms   quartiles {q1:+.0f} .. {q3:+.0f}   extremes {min(ms):+.0f} .. {max(ms):+.0f}"


# ---- where the time goes ---------------------------------------------------------------------------------
_IMPORTTIME = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def _self_times(env: dict[str, str], runs: int = 3) -> dict[str, float]:
    """Median self time (ms) of each module ``SNIPPET`` imports on top of ``import torch``."""
    code = f"import torch, sys; before = set(sys.modules)\n{SNIPPET.replace('; ', chr(10))}\n"
    code += "print('\\n'.join(sorted(set(sys.modules) - before)))"
    samples: dict[str, list[float]] = defaultdict(list)
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code], check=True, env=env, capture_output=True, text=True
        )
        added = set(out.stdout.split())
        for match in _IMPORTTIME.finditer(out.stderr):
            if match[4] in added:
                samples[match[4]].append(int(match[1]) / 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


def _group(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] in ("accelplug", "torch") else parts[0]


def _via(chain: list[str]) -> str:
    """The last line of accelplug in an import chain (the one a developer edits), else the first line."""
    ours = [frame for frame in chain if frame.startswith("accelplug")]
    return (ours or chain or ["?"])[-1]


def offenders(env: dict[str, str], top: int) -> list[tuple[str, float, int, str]]:
    """(group, self ms, modules, via) for the ``top`` costliest groups of modules ``SNIPPET`` adds."""
    times = _self_times(env)
    script = str(REPO / "scripts" / "import_chain.py")
    out = subprocess.run([sys.executable, script, "--json", SNIPPET], check=True, env=env, capture_output=True)
    chains: dict[str, list[str]] = json.loads(out.stdout)
    groups: dict[str, list[str]] = defaultdict(list)
    for module in times:
        groups[_group(module)].append(module)
    rows = []
    for group, modules in groups.items():
        first = next((m for m in chains if _group(m) == group), modules[0])
        rows.append((group, sum(times[m] for m in modules), len(modules), _via(chains.get(first, []))))
    rows.sort(key=lambda row: -row[1])
    return rows[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=9, help="pairs per command (default 9)")
    parser.add_argument("--baseline-src", help="another checkout's src folder, timed in the same rounds")
    parser.add_argument("--peers", action="store_true", help="time Lightning and Accelerate too, when installed")
    parser.add_argument("--top", type=int, default=12, help="groups of modules listed under 'where it goes'")
    parser.add_argument("--json", dest="json_path", help="write every sample to this file")
    parser.add_argument("--only-tail", action="store_true", help="only the whole-process tails (no other figures)")
    parser.add_argument("--instructions", type=int, metavar="N", help="only count instructions, hash seeds 0..N-1")
    parser.add_argument("--torch-ms", type=float, help="with --instructions: the import torch time to scale to")
    args = parser.parse_args()

    trees: dict[str, dict[str, str]] = {"this tree": _env(None)}
    if args.baseline_src:
        trees["baseline"] = _env(os.path.abspath(args.baseline_src))
    for label, env in trees.items():
        folder = _accelplug_folder(env)
        print(f"{label}: accelplug from {folder}")
        compileall.compile_dir(folder, quiet=1)
    if args.instructions:
        report = instructions_report(trees, args.instructions, args.torch_ms)
        if args.json_path:
            Path(args.json_path).write_text(json.dumps(report, indent=2))
        return
    runs: list[tuple[str, str, str, dict[str, str]]] = [
        (f"{label}: {name}" if len(trees) > 1 else name, code, partner, env)
        for name, (code, partner) in COMMANDS.items()
        for label, env in trees.items()
    ]
    if args.peers:
        here = trees["this tree"]
        runs += [(n, code, TORCH, here) for n, (pkg, code) in PEERS.items() if importlib.util.find_spec(pkg)]

    for _, code, partner, env in runs:  # warm the page cache once, untimed
        _wall(code, env)
        _wall(partner, env)
    differences: dict[str, list[float]] = {label: [] for label, _, _, _ in runs}
    cpu_differences: dict[str, list[float]] = {label: [] for label, _, _, _ in runs}
    inside: dict[str, list[list[float]]] = {label: [] for label in trees}
    tails: dict[str, list[tuple[float, float]]] = {label: [] for label in trees}
    for round_ in range(args.pairs):
        for label, code, partner, env in [] if args.only_tail else runs:
            wall, cpu = _pair(code, partner, env, partner_first=round_ % 2 == 0)
            differences[label].append(wall * 1000)
            cpu_differences[label].append(cpu * 1000)
        for label, env in trees.items():
            wall, cpu = _tail_pair(SNIPPET.replace("; ", "\n"), env, bare_first=round_ % 2 == 0)
            tails[label].append((wall * 1000, cpu * 1000))
            if not args.only_tail:
                inside[label].append(_in_process(env))

    print(f"\n{args.pairs} interleaved pairs, {os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    if not args.only_tail:
        print("whole process, minus `import torch` run beside it (median, quartiles, extremes):")
    for label, pair_ms in differences.items() if not args.only_tail else ():
        print(f"  {label}\n    wall {_spread(pair_ms)}\n    CPU  {_spread(cpu_differences[label])}")
    print("\nwhole process after `import torch` (snippet + exit), minus a process that only imports torch:")
    for label, pairs in tails.items():
        print(f"  {label}\n    wall {_spread([w for w, _ in pairs])}\n    CPU  {_spread([c for _, c in pairs])}")
    if args.only_tail:
        inside = {}
    else:
        print(f"\nin one process, after `import torch`: {SNIPPET}")
    for label, samples in inside.items():
        took = [s[0] * 1000 for s in samples]
        cpu_ms = [s[3] * 1000 for s in samples]
        collecting = [s[1] * 1000 for s in samples]
        without = [t - c for t, c in zip(took, collecting, strict=True)]
        counts = sorted({int(s[2]) for s in samples})
        print(
            f"  {label}: wall {statistics.median(took):.1f} ms (extremes {min(took):.1f} .. {max(took):.1f}), "
            f"CPU {statistics.median(cpu_ms):.1f} ms; full collections {counts} per process, "
            f"{statistics.median(collecting):.1f} ms; wall without them {statistics.median(without):.1f} ms"
        )
    table: dict[str, list[tuple[str, float, int, str]]] = {}
    for label, env in trees.items() if args.top > 0 else ():
        table[label] = offenders(env, args.top)
        print(f"\nwhere it goes ({label}): python -X importtime, self ms, median of 3, beyond `import torch`")
        for group, ms, count, via in table[label]:
            print(f"  {ms:7.1f} ms  {count:3d} modules  {group:32} via {via}")
    if args.json_path:
        with open(args.json_path, "w") as fh:
            report = {"pairs_wall_ms": differences, "pairs_cpu_ms": cpu_differences, "in_process_s": inside}
            report["tail_pairs_wall_cpu_ms"] = tails
            json.dump({**report, "offenders": table}, fh, indent=2)


if __name__ == "__main__":
    main()
