"""What creating a record class costs: ``@dataclass`` against accelplug's ``@record``, on the same class bodies.

    python benchmarks/record_cost.py              # 3, 10 and 40 fields, mutable and frozen, 15 rounds

Each round builds a fresh class of ``n`` fields (annotations as strings, as under ``from __future__ import
annotations``, every field with a default) once with each decorator, in alternating order; the figure is the
median time per class. This is the cost every record on the start-up path pays once per process
(``benchmarks/import_time.py`` times the whole path).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections.abc import Callable
from typing import Any

from accelplug._record import record


def _body(fields: int) -> dict[str, Any]:
    annotations = {f"field_{i}": "int | None" for i in range(fields)}
    return {"__annotations__": annotations, **{name: None for name in annotations}, "__module__": __name__}


def _time(decorate: Callable[[type], type], fields: int) -> float:
    cls = type(f"Record{fields}", (), _body(fields))
    start = time.perf_counter()
    decorate(cls)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print(f"{'fields':>6} {'frozen':>6} {'@dataclass ms':>14} {'@record ms':>11} {'ratio':>6}")
    for fields in (3, 10, 40):
        for frozen in (False, True):
            makers: dict[str, Callable[[type], type]] = {
                "dataclass": dataclasses.dataclass(frozen=frozen),
                "record": record(frozen=frozen),
            }
            times: dict[str, list[float]] = {name: [] for name in makers}
            for round_ in range(args.rounds):
                order = list(makers) if round_ % 2 == 0 else list(reversed(makers))
                for name in order:
                    times[name].append(_time(makers[name], fields))
            plain, ours = (statistics.median(times[name]) * 1000 for name in ("dataclass", "record"))
            print(f"{fields:>6} {frozen!s:>6} {plain:>14.3f} {ours:>11.3f} {plain / ours:>5.1f}x")


if __name__ == "__main__":
    main()
