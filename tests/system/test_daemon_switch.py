"""The ``docker`` reason, judged on real root filesystems: this host as it is, and copies of ``/`` without or with a
``/.dockerenv``.

Each copy is a tmpfs in a private mount namespace holding every top-level
entry of ``/`` bind-mounted, but ``/.dockerenv`` left out or planted as an empty
file, a directory or a link to nothing; ``nxsock paths --json`` runs chrooted
into it as an unprivileged user.  Nx's ``isDocker()`` counts ``/.dockerenv`` of
any kind that ``stat`` reaches, so a link to nothing is no container.  The same
judgement against the real Nx of every release is in ``tests/oracle/test_daemon_switch.py``.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import typing as t

from documents import checked
from harness import USER, as_user_prefix, stage_nxsock

WS = f"/home/u{USER}/ws"

PLANT = {
    "absent": "",
    "an empty file": ": > /srv/.dockerenv",
    "a directory": "mkdir /srv/.dockerenv",
    "a link to nothing": "ln -s /nowhere /srv/.dockerenv",
}


def _copy_of_root(plant: str) -> str:
    return f"""
mount -t tmpfs -o mode=0755 tmpfs /srv
for entry in /* /.[!.]*; do
  name=${{entry#/}}
  case "$name" in srv|.dockerenv|'.[!.]*') continue;; esac
  if [ -L "$entry" ]; then ln -s "$(readlink "$entry")" "/srv/$name"
  elif [ -d "$entry" ]; then mkdir "/srv/$name" && mount --rbind "$entry" "/srv/$name"
  elif [ -f "$entry" ]; then : > "/srv/$name" && mount --bind "$entry" "/srv/$name"
  fi
done
{plant}
"""


def _verdicts(
    plants: t.Sequence[str | None], envs: t.Sequence[dict[str, str]]
) -> tuple[list[list[dict[str, t.Any]]], bool]:
    """``daemon`` of ``paths --json`` for each plant (``None``: the host as it is; else a copy of / with it planted) and
    each environment, all in one namespace; and whether /proc/self/cgroup names docker (which Nx counts too)."""
    python, pythonpath = stage_nxsock()
    parts = [f"""set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {USER} -g {USER} /home/u{USER} {WS}
echo '{{}}' > {WS}/nx.json; chown {USER} {WS}/nx.json
grep -q docker /proc/self/cgroup && echo '<<<CGROUP' || true"""]
    for i, plant in enumerate(plants):
        if plant is not None:
            parts.append(_copy_of_root(plant))
        for j, env in enumerate(envs):
            user = as_user_prefix(USER, {"PYTHONPATH": pythonpath, "PYTHONDONTWRITEBYTECODE": "1", **env})
            parts.append(f"echo '<<<OUT {i} {j}'; {'' if plant is None else 'chroot /srv'} {user} "
                         f"sh -c 'cd {WS} && exec {shlex.quote(python)} -m nxsock paths --json'")
        if plant is not None:
            parts.append("umount -R /srv")
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", "\n".join(parts)],
                          cwd="/", capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-2000:]
    text = proc.stdout.decode("utf-8", "replace")
    found: list[list[dict[str, t.Any]]] = [[{} for _ in envs] for _ in plants]
    for chunk in text.split("<<<OUT ")[1:]:
        head, _, body = chunk.partition("\n")
        i, j = map(int, head.split())
        found[i][j] = checked(json.loads(body), "paths")["daemon"]
    return found, "<<<CGROUP" in text


ENVS = ({}, {"NX_DAEMON": "true"})


def test_docker_as_nx_judges_it_here_and_in_copies_of_root() -> None:
    """Here: /.dockerenv as this host has it.  In each copy: absent, an empty file, a directory, a link to nothing."""
    plants: list[str | None] = [None, *PLANT.values()]
    found, cgroup = _verdicts(plants, ENVS)
    here = os.path.exists("/.dockerenv")  # stat follows a link, as Nx's statSync does
    for name, plant, verdicts in zip(["here", *PLANT], plants, found, strict=True):
        counts = cgroup or (here if plant is None else name in ("an empty file", "a directory"))
        for env, daemon in zip(ENVS, verdicts, strict=True):
            overridden = env.get("NX_DAEMON") == "true"
            assert ("docker" in daemon["reasons"]) is (counts and not overridden), (name, env, daemon)
