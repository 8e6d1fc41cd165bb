"""Inside one state's namespace, as root: Nx's command, ``doctor --explain`` on what it printed, the remedies applied,
Nx again.

Run by :func:`capture.prove` (never by hand): its one argument is a JSON
object naming the commands.  It prints one JSON document with what Nx printed
before and after, the doctor's document, and how each remedy was applied.

A remedy whose every step is ``sudo …`` runs as root (without ``sudo``);
``nxsock paths --format …`` — the sandbox's allowlist — is run to show it
prints the entries, and "applied" means the rerun is outside that sandbox's
refusal (the corpus's seccomp filter has no allowlist to write them into);
any other remedy runs as the user in the same shell as the rerun, so that an
``export`` or ``unset`` is in force for it (an ``export NAME=…`` also replaces
the command line's own ``NAME=…``: that is what following it means).

Mode ``after-run``: the state as Nx left it after printing — what the user
pastes from.  Mode ``fresh``: the state as built, before Nx ran, given the
text Nx printed in it (from another run); the rerun is then Nx's first.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

#: A plugin worker that exited cleanly while its host still needed it: "exited unexpectedly (exit code 0)" once
#: connected, "exited (exit code 0) before the connection was established" before (23.3.2's
#: foreign-socket-dir, once in a whole run; eight copies of that proof side by side never showed it).
CLEAN_WORKER_EXIT = re.compile(r'Plugin worker (?:for )?"[^"\n]*" exited (?:unexpectedly )?\(exit code 0\)')


def run(argv: list[str], timeout: float, stdin: str | None = None, cwd: str | None = None) -> tuple[str, int]:
    try:
        proc = subprocess.run(argv, input=(stdin or "").encode(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired as exc:
        return (exc.output or b"").decode("utf-8", "surrogateescape") + "\n<<<TIMEOUT", 124
    return proc.stdout.decode("utf-8", "surrogateescape"), proc.returncode


def main() -> int:
    spec = json.loads(sys.argv[1])
    as_user = shlex.split(spec["as_user"])
    ws, timeout = spec["workspace"], spec["timeout"]
    if spec["mode"] == "fresh":
        before, before_rc = spec["text"], None
    else:
        before, before_rc = run([*as_user, "bash", "-c", spec["nx"]], timeout, cwd=ws)
    doctor_argv = [
        *as_user,
        *shlex.split(spec["wrap"]),
        *shlex.split(spec["nxsock"]),
        "doctor",
        "--explain",
        "-",
        "--json",
    ]
    doctor_out, doctor_rc = run(doctor_argv, 60, stdin=before, cwd=ws)
    try:
        document = json.loads(doctor_out)
    except ValueError:
        document = None
    only = spec.get("only")  # one kind's command alone: what a user who pastes only that message runs
    remedies = list(dict.fromkeys(m["remedy"] for m in (document or {}).get("messages", [])  # None: no safe command
                                  if m["remedy"] and (only is None or m["matched"] == only)))
    applied, in_shell, nx = [], [], spec["nx"]
    for remedy in remedies:
        steps = [s.strip() for s in remedy.split("&&")]
        if remedy.startswith("nxsock paths --format"):
            out, rc = run([*as_user, "bash", "-c", remedy], 60, cwd=ws)
            applied.append({"remedy": remedy, "as": "user", "rc": rc, "output": out})
            nx = spec["nx_unwrapped"]
        elif all(s.startswith("sudo ") for s in steps):
            root = " && ".join(s[len("sudo "):] for s in steps)
            out, rc = run(["bash", "-c", root], 60, cwd=ws)
            applied.append({"remedy": remedy, "as": "root", "rc": rc, "output": out})
        else:
            in_shell.append(remedy)
            for name in re.findall(r"(?:^|&&|;)\s*export\s+([A-Z_][A-Z0-9_]*)=", remedy):
                nx = re.sub(rf"(?:^|(?<=\s)){name}=\S+\s+", "", nx)
            applied.append({"remedy": remedy, "as": "user, before the rerun", "rc": None, "output": None})
    # What the remedies print in that shell is theirs, not Nx's (nxsock reset quotes the marker's reason, which is the
    # message itself): only what follows the mark is the rerun's.
    mark = "<<<nxsock-proof: the Nx command again>>>"
    rerun = [*as_user, "bash", "-c", "; ".join([*in_shell, f"echo '{mark}'", nx])]
    after, after_rc = run(rerun, timeout, cwd=ws)
    after = after.split(mark + "\n", 1)[-1]
    retried = after_rc != 0 and CLEAN_WORKER_EXIT.search(after) is not None
    if retried:
        # Nx's plugin workers, started by the graph, give up when a loaded machine is slow to answer them,
        # and exit cleanly: that says nothing of the remedy. Once more; a second failure stands.
        after, after_rc = run(rerun, timeout, cwd=ws)
        after = after.split(mark + "\n", 1)[-1]
    daemon_dir = os.path.join(ws, ".nx", "workspace-data", "d")
    try:  # whether the daemon runs after the rerun: its record's pid is alive
        with open(os.path.join(daemon_dir, "server-process.json")) as record:
            os.kill(int(json.load(record)["processId"]), 0)
        daemon_after = True
    except (OSError, ValueError, KeyError, TypeError):
        daemon_after = False
    json.dump(
        {
            "marker_after": os.path.exists(os.path.join(daemon_dir, "disabled")),
            "daemon_after": daemon_after,
            "before": before,
            "before_rc": before_rc,
            "doctor": document,
            "doctor_rc": doctor_rc,
            "doctor_raw": doctor_out,
            "applied": applied,
            "after": after,
            "after_rc": after_rc,
            "after_retried": retried,
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
