"""How long ``nxsock paths --json`` (every form), ``--help`` and completion take, as ratios to baselines
measured in the same run.

Baselines: ``python -c "import click"`` on the same interpreter, and Nx's own
resolver (``nx@24.0.6``'s four socket resolvers) called from node.  Runs are
interleaved round by round so that machine noise lands on all three alike;
the medians are compared.  No absolute time is asserted anywhere.

    python benchmarks/startup.py [--rounds 40]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from harness import install_nx

NODE_RESOLVER = """
const n = require(require.resolve('nx/src/native', { paths: [process.argv[1]] }));
const ws = process.cwd();
process.stdout.write(JSON.stringify([n.resolveDaemonSocketPath(ws), n.resolvePluginSocketPath(ws, '1-1-abcdef01'),
  n.resolveForkedProcessSocketPath(ws, '1-1'), n.resolveNxConsoleSocketPath(ws)]));
"""


BASELINE = 'python -c "import click"'
NODE = "Nx's resolver from node"


def timed(command: list[str], cwd: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()

    nx = install_nx("24.0.6")
    # An installed package has its bytecode compiled (pip does it); an editable
    # checkout under PYTHONDONTWRITEBYTECODE would not, and would measure the compiler.
    import compileall

    import nxsock

    compileall.compile_dir(Path(nxsock.__file__).parent, quiet=1)
    script = shutil.which("nxsock")
    nxsock = [sys.executable, script] if script else [sys.executable, "-m", "nxsock"]
    with tempfile.TemporaryDirectory() as ws, tempfile.TemporaryDirectory() as sockets:
        Path(ws, "nx.json").write_text("{}")
        Path(ws, "node_modules").mkdir()
        Path(ws, "node_modules", "nx").symlink_to(nx / "node_modules" / "nx")
        # Nx's resolver creates a per-run directory on every call: both sides resolve into a
        # private NX_SOCKET_DIR, so the benchmark leaves nothing behind in /tmp/.nx.
        env = dict(os.environ, NX_SKIP_NATIVE_FILE_CACHE="true", NX_SOCKET_DIR=sockets)
        commands = {
            "paths --json": [*nxsock, "paths", "--json"],
            "paths --json --workspace DIR": [*nxsock, "paths", "--json", "--workspace", ws],
            "paths --format=json --uid N": [*nxsock, "paths", "--format=json", "--uid", str(os.getuid())],
            "paths --json --platform darwin": [
                *nxsock,
                "paths",
                "--json",
                "--platform",
                "darwin",
                "--nx-version",
                "24.0.6",
            ],
            "nxsock --help": [*nxsock, "--help"],
            "completion (nxsock ch<TAB>)": [*nxsock],
            BASELINE: [sys.executable, "-c", "import click"],
            NODE: ["node", "-e", NODE_RESOLVER, str(nx)],
        }
        completing = dict(env, _NXSOCK_COMPLETE="bash_complete", COMP_WORDS="nxsock ch", COMP_CWORD="1")
        envs = {name: completing if name.startswith("completion") else env for name in commands}
        for name, command in commands.items():  # warm the page cache
            timed(command, ws, envs[name])
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                samples[name].append(timed(command, ws, envs[name]))

    medians = {name: statistics.median(values) for name, values in samples.items()}
    print(f"{args.rounds} interleaved rounds, medians on {sys.executable} ({sys.version.split()[0]}):")
    for name, median in medians.items():
        print(f"  {name:34} {median * 1000:7.1f} ms")
    print(f"ratios to {BASELINE} (goal for every paths --json form: <= 0.85x):")
    for name, median in medians.items():
        if name not in (BASELINE, NODE):
            print(f"  {name:34} {median / medians[BASELINE]:5.2f}x")
    print(f"paths --json / {NODE}: {medians['paths --json'] / medians[NODE]:.2f}x")


if __name__ == "__main__":
    main()
