"""Rerun the conformance states against Nx releases and print the table release × states.

usage (as root, from the checkout):
    python tests/oracle/conformance.py                      # every known release
    python tests/oracle/conformance.py --release 24.1.0     # one release, a new one included
    python tests/oracle/conformance.py --release 24.0.5 --release 24.0.6 --jobs 2 --details

Each release is installed from npm on first use (into the shared test cache),
then every state of its generation is built in a private mount namespace and
nxsock's ``paths --json`` is compared with that release's own resolver, as
``tests/oracle/test_conformance.py`` does.  Exit 0 when every state agrees.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(TESTS), str(TESTS.parent)]


from nxsock.core.releases import rules_for  # noqa: E402
from oracle.batch import run_release_batch  # noqa: E402
from oracle.test_conformance import SCENARIOS, disagreements, selected_releases, states_for  # noqa: E402


def _verdicts(release: str) -> tuple[str, dict[str, list[str]], float]:
    started = time.monotonic()
    states = states_for(release)
    outcomes = run_release_batch(release, states)
    found: dict[str, list[str]] = {}
    for scenario, outcome in zip(states, outcomes, strict=True):
        problems = disagreements(outcome, rules_for(release).generation, scenario)
        if outcome.tree_before != outcome.tree_after:
            problems.append("nxsock paths changed the filesystem")
        if "Traceback" in outcome.nxsock_stderr or "Traceback" in outcome.text_stderr:
            problems.append("a traceback")
        if outcome.text_rc != outcome.nxsock_rc:
            problems.append(f"human output exits {outcome.text_rc}, JSON {outcome.nxsock_rc}")
        found[scenario.name] = problems
    return release, found, time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", action="append", help="an Nx release (repeatable); default: every known one")
    parser.add_argument("--jobs", type=int, default=2, help="releases run side by side (default 2)")
    parser.add_argument("--details", action="store_true", help="print every disagreement in full")
    args = parser.parse_args(argv)
    releases = tuple(args.release or selected_releases())
    results: dict[str, dict[str, list[str]]] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for release, found, seconds in pool.map(_verdicts, releases):
            results[release] = found
            agree = sum(1 for p in found.values() if not p)
            assumed = f" (rules of {rules_for(release).release} assumed)" if rules_for(release).assumed else ""
            print(f"{release}: {agree}/{len(found)} states agree, {seconds:.0f} s{assumed}", file=sys.stderr)
    names = [s.name for s in SCENARIOS]
    width = max(len(n) for n in names)
    print("state".ljust(width) + " | " + " | ".join(r.ljust(7) for r in releases))
    print("-" * width + "-|-" + "-|-".join("-" * 7 for _ in releases))
    for name in names:
        cells = []
        for release in releases:
            problems = results[release].get(name)
            cells.append(("-" if problems is None else "agree" if not problems else "DIFFER").ljust(7))
        print(name.ljust(width) + " | " + " | ".join(cells))
    failed = [(r, n, p) for r, found in results.items() for n, p in found.items() if p]
    total = sum(len(found) for found in results.values())
    print(f"\n{total - len(failed)}/{total} release × state cells agree ({len(releases)} releases).")
    for release, name, problems in failed if args.details else failed[:20]:
        print(f"\n{release}: {name}")
        for problem in problems:
            print(f"  - {problem[:1500]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
