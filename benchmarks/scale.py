"""How doctor, ``reset --dry-run`` and ``cache list`` scale: 1,000 to 10,000 per-run directories, 100 to 1,000 cache
entries.

Each size is built in a private mount namespace (root needed) and each command
run as an unprivileged uid; the script prints wall times and the time per
item, which stays flat when the work is linear.  No threshold is asserted.

    sudo python benchmarks/scale.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from harness import USER, as_user_prefix, missing_privileges, run_as_user, stage_nxsock

SIZES = [(1000, 100), (5000, 500), (10000, 1000)]
COMMANDS = [["doctor", "--json"], ["reset", "--dry-run", "--json"], ["cache", "list", "--json"]]


def main() -> None:
    reason = missing_privileges()
    if reason:
        sys.exit(f"scale benchmark: {reason}")
    python, pylib = stage_nxsock()
    socks = f"/tmp/.nx/{USER}/sockets"
    cache = f"/tmp/.nx/{USER}/native-cache"
    print(f"{'per-run dirs':>12} {'cache entries':>13}  " + "  ".join(f"{' '.join(c[:2]):>22}" for c in COMMANDS))
    for dirs, entries in SIZES:
        setup = (
            f"install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {USER} /tmp/.nx/{USER} {socks} {cache}; "
            f"cd {socks} && seq -f '%020g' 1 {dirs} | xargs mkdir -m 0700 && touch -d 2000-01-01 *; "
            f"for v in $(seq 1 {entries}); do install -d -m 0700 {cache}/23.$v.0; "
            f"echo x > {cache}/23.$v.0/23.$v.0-0123456789ab-nx.linux-x64-gnu.node; done; "
            f"chown -R {USER} /tmp/.nx/{USER}; cd /"
        )
        timings = []
        for command in COMMANDS:
            run = (f"cd /home/u{USER}; TIMEFORMAT=%R; {{ time {as_user_prefix()} PYTHONPATH={pylib} {python} -m nxsock "
                   f"{' '.join(command)} > /dev/null; }} 2>&1")
            result = run_as_user(setup, ["--version"], post=run)
            seconds = float(result.post.split()[-1])
            items = entries if command[0] == "cache" else dirs
            timings.append(f"{seconds:6.2f} s {seconds / items * 1e6:7.0f} µs/item")
        print(f"{dirs:>12} {entries:>13}  " + "  ".join(f"{t:>22}" for t in timings))


if __name__ == "__main__":
    main()
