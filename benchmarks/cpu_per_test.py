"""CPU seconds per test: a pytest plugin that writes them, and a summary of what it wrote.

The suite is CPU-bound on a small machine, and wall time there depends on whatever else runs: CPU seconds (user +
system, of the pytest process and of every child it waited for: the namespaces, Nx, its daemons, nxsock) say what a
test costs.  Run as root from the checkout::

    CPU_PER_TEST=/tmp/cpu PYTHONPATH=benchmarks python -m pytest tests/oracle -n 2 -p cpu_per_test
    python benchmarks/cpu_per_test.py /tmp/cpu            # per file, then the 40 dearest tests

Each worker appends one JSON line per test to ``<dir>/<worker>.jsonl``: its node id, CPU seconds of the process
itself and of its reaped children, wall seconds and start time.  A child is counted when it is reaped, so a proof
started in a thread by one test and awaited by another (``tests/oracle/test_explain.py``) is counted where it ended;
per file the figures hold.
"""

from __future__ import annotations

import collections
import json
import os
import resource
import sys
import time
import typing as t
from pathlib import Path

import pytest


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> t.Generator[None, object, object]:
    own, children = _cpu()
    started, wall = time.time(), time.monotonic()
    try:
        return (yield)
    finally:
        own_after, children_after = _cpu()
        directory = Path(os.environ.get("CPU_PER_TEST", "cpu-per-test"))
        directory.mkdir(parents=True, exist_ok=True)
        line = {"id": item.nodeid, "self": round(own_after - own, 3), "child": round(children_after - children, 3),
                "wall": round(time.monotonic() - wall, 3), "start": started}
        with open(directory / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a") as out:
            out.write(json.dumps(line) + "\n")


def main(argv: list[str]) -> int:
    rows = [json.loads(line) for path in sorted(Path(argv[0]).glob("*.jsonl")) for line in path.open()]
    top = int(argv[1]) if len(argv) > 1 else 40
    print(f"{len(rows)} tests, {sum(r['self'] + r['child'] for r in rows):.0f} CPU-s")
    files: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for row in rows:
        entry = files[row["id"].split("::")[0]]
        entry[0] += 1
        entry[1] += row["self"] + row["child"]
        entry[2] += row["wall"]
    for name, (count, cpu, wall) in sorted(files.items(), key=lambda kv: -kv[1][1]):
        print(f"{cpu:8.1f} CPU-s {wall:8.1f} wall-s {count:5.0f} tests  {name}")
    print()
    for row in sorted(rows, key=lambda r: -(r["self"] + r["child"]))[:top]:
        print(f"{row['self'] + row['child']:7.1f} CPU-s {row['wall']:7.1f} wall-s  {row['id']}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # piped into head: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
