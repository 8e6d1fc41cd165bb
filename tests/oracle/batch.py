"""Every conformance state of one Nx release, answered by one nxsock process and one Nx process.

:func:`run_release_batch` is what ``test_conformance.py`` and ``conformance.py`` run: the same states, the
same fresh tmpfs ``/tmp`` and ``/home`` for each, the same uid and environment for each side, and the same
:class:`~harness.Outcome` as :func:`harness.run_release_batch` — which starts a shell, two Pythons and a node
for every state, where this starts them once per release (``batch_driver.py`` says how; the servers are
``nxsock_server.py`` and ``resolve.js --serve``). ``NXSOCK_CONFORMANCE_PER_PROCESS=1`` runs the per-process
batch instead, the reference this one was proven against cell by cell (``python tests/oracle/batch.py``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import threading
import typing as t
from pathlib import Path

if __name__ == "__main__":
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parents[2])]

import harness
from harness import USER, Outcome, Scenario

from nxsock.core.releases import rules_for

HERE = Path(__file__).resolve().parent
DRIVER, NXSOCK_SERVER = HERE / "batch_driver.py", HERE / "nxsock_server.py"
#: What nxsock's server imports before its first fork: the modules ``paths --json`` loads, and for the human
#: output the click application (its rendering loads on first use, in each child).
PRELOAD_JSON = ("nxsock.commands.options", "nxsock.core.snapshot", "nxsock.output.paths_json")
PRELOAD_TEXT = ("nxsock.app",)
#: The environment the native binding (Nx ≥ 24) reads once per process and keeps: ``resolve.js --serve`` answers the
#: states of one value of these in one process (``python tests/oracle/batch.py 24.0.6`` proves it cell by cell).
NATIVE_KEEPS = ("HOME",)


def _environment(overrides: t.Mapping[str, str | None], uid: int = USER) -> dict[str, str]:
    """The environment ``harness.as_user_prefix(uid, overrides)`` gives a command (``env -i …``), as a dict."""
    return dict(word.split("=", 1) for word in shlex.split(harness.env_words(overrides, uid=uid)))


def _spec(release: str, scenarios: t.Sequence[Scenario], text: bool) -> dict[str, t.Any]:
    nx = harness.install_nx(release)
    python, pythonpath = harness.stage_nxsock()
    python_env = {"PYTHONPATH": pythonpath, "PYTHONDONTWRITEBYTECODE": "1"}
    as_user = shlex.split(harness.as_user_prefix(USER))  # setpriv … env -i PATH HOME LANG
    # The native binding of the later releases reads HOME once and keeps it for the life of its process (see
    # batch_driver.py): their resolver answers, in one process, only the states that share one HOME.
    keeps = NATIVE_KEEPS if rules_for(release).generation == "native" else ()
    preload = PRELOAD_JSON + (PRELOAD_TEXT if text else ())
    states = []
    for scenario in scenarios:
        env = _environment(scenario.env)
        cwd = scenario.cwd or scenario.workspace
        states.append({
            "setup": harness._workspace_setup(scenario, nx, f"/home/u{USER}"),
            "cwd": cwd.encode("utf-8", "surrogateescape").hex(),
            "nxsock_env": {**env, **python_env},
            "node_env": env,
            "text": text,
        })
    return {
        "nxsock_server": [*as_user, *(f"{k}={v}" for k, v in python_env.items()), python,
                          str(harness.stage_oracle(NXSOCK_SERVER)), *preload],
        "node_server": [*as_user, "node", str(harness.stage_oracle()), "--serve", str(nx)],
        "node_server_keeps": list(keeps),
        "states": states,
    }


def _outcome(result: dict[str, t.Any] | None, text: bool, stderr: str) -> Outcome:
    """One state's :class:`~harness.Outcome` from what the driver printed for it (``None``: it printed nothing)."""
    if result is None:
        return Outcome(None, -1, "the batch stopped before this state:\n" + stderr[-3000:], None, -1, "", "", "",
                       stderr)
    ours, human, theirs = (result.get(k) or {} for k in ("nxsock", "text", "oracle"))
    failures = "".join(f"{side['failure']}\n" for side in (ours, human, theirs) if "failure" in side)
    nxsock_stderr = result["setup_output"] + failures + ours.get("stderr", "")
    if result["setup_failed"]:
        nxsock_stderr = "the state could not be built:\n" + nxsock_stderr
    rc = ours.get("rc", -1)
    return Outcome(
        nxsock=harness._document_or_none(ours.get("stdout", ""), "paths"),
        nxsock_rc=rc,
        nxsock_stderr=nxsock_stderr,
        oracle=harness._json_or_none(theirs.get("stdout", "")),
        text_rc=human.get("rc", -1) if text else rc,
        text_stderr=human.get("stderr", ""),
        tree_before=result.get("tree_before", ""),
        tree_after=result.get("tree_after", ""),
        raw=json.dumps(result, indent=1)[-6000:],
    )


def run_release_batch(
    release: str, scenarios: t.Sequence[Scenario], *, text: bool | None = None, timeout: float = 1500
) -> list[Outcome]:
    """Every state of *scenarios* against one release, in one private mount namespace: one Outcome each, in order.

    Each state gets its own fresh tmpfs ``/tmp`` and ``/home``; nothing on disk carries over from one to the
    next, and each nxsock run is a process of its own (forked from one that ran nothing).
    """
    if text is None:  # the human output too, once per generation: its exit code must match the JSON's
        text = release in harness.NX_VERSIONS.values()
    if os.environ.get("NXSOCK_CONFORMANCE_PER_PROCESS") == "1":
        return harness.run_release_batch(release, scenarios, text=text, timeout=timeout)
    spec = _spec(release, scenarios, text)
    python = harness.stage_nxsock()[0]
    # The states name the test uid's environment; the file is root's alone, and removed afterwards.
    path = harness.cache_dir() / f"batch-{release}-{os.getpid()}-{threading.get_ident()}.json"
    path.write_text(json.dumps(spec))
    path.chmod(0o600)
    try:
        proc = subprocess.run(
            ["unshare", "-m", "--propagation", "private", python, str(harness.stage_oracle(DRIVER)), str(path)],
            cwd="/",  # never a working directory inside the /tmp or /home that the states replace
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
        )
    finally:
        path.unlink(missing_ok=True)
    stderr = proc.stderr.decode("utf-8", "replace")
    results: dict[int, dict[str, t.Any]] = {}
    for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
        result = json.loads(line)
        results[result["index"]] = result
    return [_outcome(results.get(index), text, stderr) for index in range(len(scenarios))]


PER_RUN = re.compile(r"/[0-9a-f]{20}(?=[/\"])")  # the native binding's per-process socket directory


def _differences(old: Outcome, new: Outcome) -> list[str]:
    """Where two outcomes of one state differ in anything a test reads (the Nx process id aside)."""
    found = []
    theirs_old, theirs_new = (PER_RUN.sub("/<per-run>", json.dumps({k: v for k, v in (o or {}).items() if k != "pid"}))
                              for o in (old.oracle, new.oracle))
    if theirs_old != theirs_new:
        found.append(f"Nx: {theirs_old} / {theirs_new}")
    for field in ("nxsock", "nxsock_rc", "text_rc"):
        if getattr(old, field) != getattr(new, field):
            found.append(f"{field}: {getattr(old, field)} / {getattr(new, field)}")
    for field in ("nxsock_stderr", "text_stderr"):
        if ("Traceback" in getattr(old, field)) != ("Traceback" in getattr(new, field)):
            found.append(f"{field}: {getattr(old, field)!r} / {getattr(new, field)!r}")
    if (old.tree_before == old.tree_after) != (new.tree_before == new.tree_after):
        found.append(
            f"tree unchanged: per process {old.tree_before == old.tree_after} / batch "
            f"{new.tree_before == new.tree_after}"
        )
    return found


def main(argv: list[str]) -> int:
    """``python tests/oracle/batch.py [RELEASE …]``: both batches on every state; each cell where they differ."""
    from oracle.test_conformance import selected_releases, states_for

    total = differing = 0
    for release in argv or selected_releases():
        states = states_for(release)
        text = release in harness.NX_VERSIONS.values()  # as the tests run it
        old = harness.run_release_batch(release, states, text=text)
        new = run_release_batch(release, states, text=text)
        for scenario, before, after in zip(states, old, new, strict=True):
            total += 1
            found = _differences(before, after)
            if found:
                differing += 1
                print(f"{release}: {scenario.name}\n  " + "\n  ".join(x[:2000] for x in found))
        print(f"{release}: {len(states)} states compared", file=sys.stderr, flush=True)
    print(f"{total - differing}/{total} cells answered alike by the per-process batch and the one-process batch")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
