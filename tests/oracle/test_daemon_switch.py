"""nxsock's daemon verdict agrees with each release's own ``DaemonClient.enabled()``, cell by cell.

For every release of :data:`nxsock.core.releases.KNOWN_RELEASES` (or those ``NXSOCK_RELEASES`` names), one private mount
namespace builds a grid of workspaces (``nx.json`` with and without
``useDaemonProcess``, with comments, unparsable, absent, extended; the
``disabled`` marker; no installed Nx), and runs, as an unprivileged user, the
release's client over every cell in one node process
(``tests/oracle/daemon_switch.js``) and ``nxsock paths --json`` over every cell in
one Python process (``tests/oracle/daemon_driver.py``), each cell with its own
environment (none, ``CI=true``, ``CI=false`` + ``GITHUB_ACTIONS=true``,
``NX_DAEMON=true``/``false``/``TRUE``/``1``, ``BUILD_ID``, a sandbox's variable…).
It does so twice: on the host as it is (here a container with ``/.dockerenv``),
then chrooted into a copy of ``/`` made of bind mounts that lacks ``/.dockerenv``.
``daemon.enabled`` must equal the release's answer in every cell, and each
reason must be backed by the release's own predicate.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import typing as t
from pathlib import Path

import pytest
from documents import checked
from harness import USER, as_user_prefix, install_nx, stage_nxsock, stage_oracle

from oracle.test_conformance import selected_releases

ORACLE = Path(__file__).with_name("daemon_switch.js")
DRIVER = Path(__file__).with_name("daemon_driver.py")

ENVS: tuple[dict[str, str], ...] = (
    {},
    {"CI": "true"},
    {"CI": "false", "GITHUB_ACTIONS": "true"},
    {"NX_DAEMON": "true"},
    {"NX_DAEMON": "false"},
    {"NX_DAEMON": "TRUE"},
    {"NX_DAEMON": "1"},
    {"BUILD_ID": "42"},
    {"SANDBOX_RUNTIME": "1"},
    {"CI": "true", "NX_DAEMON": "true"},
    {"CODEX_SANDBOX_NETWORK_DISABLED": "1", "NX_DAEMON": "true"},
    {"CI": "0"},
    {"GITHUB_ACTIONS": "TRUE"},
)
NX_JSONS: dict[str, str | None] = {
    "plain": "{}\n",
    "useDaemonProcess true": '{"useDaemonProcess": true}\n',
    "useDaemonProcess false": '{"useDaemonProcess": false}\n',
    "false, with comments": '// the workspace\n{\n  /* off */ "useDaemonProcess": false, // here\n}\n',
    'the string "false"': '{"useDaemonProcess": "false"}\n',
    "unparsable": '{"useDaemonProcess": false\n',
    "absent": None,
}


class Cell(t.NamedTuple):
    name: str
    env: dict[str, str]
    nx_json: str | None
    installed: bool = True
    marker: bool = False
    files: tuple[tuple[str, str], ...] = ()


def _cells(full: bool) -> list[Cell]:
    """The grid: every environment against every nx.json (with the host's /.dockerenv); fewer without it."""
    jsons = NX_JSONS if full else {k: NX_JSONS[k] for k in ("plain", "useDaemonProcess false")}
    cells = [Cell(f"{env} / {name}", env, text) for env in ENVS for name, text in jsons.items()]
    cells += [
        Cell("disabled marker", {}, "{}\n", marker=True),
        Cell("disabled marker, NX_DAEMON=true", {"NX_DAEMON": "true"}, "{}\n", marker=True),
        Cell("no Nx installed", {"NX_DAEMON": "true"}, "{}\n", installed=False),
        Cell("no Nx installed, no nx.json", {}, None, installed=False),
        Cell("extends a base that turns it off", {"NX_DAEMON": "false"}, '{"extends": "./base.json"}\n',
             files=(("base.json", '{"useDaemonProcess": false}\n'),)),
        Cell("extends a base that does not resolve", {}, '{"extends": "./nowhere.json", "useDaemonProcess": false}\n'),
        Cell("a comma after no value", {}, '{"useDaemonProcess": false, "a": [,]}\n'),
        Cell("useDaemonProcess null, NX_DAEMON=false", {"NX_DAEMON": "false"}, '{"useDaemonProcess": null}\n'),
    ]
    return cells


#: Run as root by python3: one workspace per cell under /tmp/c, the user's, and the cells' list (one process, not
#: hundreds of mkdir and printf).
_BUILD = """
import json, os, sys
spec, nx, uid = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
listing = []
for index, cell in enumerate(spec):
    ws = f"/tmp/c/{index}"
    os.makedirs(ws)
    files = dict(cell["files"])
    if cell["nx_json"] is not None:
        files["nx.json"] = cell["nx_json"]
    if cell["marker"]:
        os.makedirs(f"{ws}/.nx/workspace-data/d")
        files[".nx/workspace-data/d/disabled"] = "failed to start\\n"
    for name, text in files.items():
        with open(f"{ws}/{name}", "w") as f:
            f.write(text)
    if cell["installed"]:
        os.mkdir(f"{ws}/node_modules")
        os.symlink(f"{nx}/node_modules/nx", f"{ws}/node_modules/nx")
    for root, dirs, names in os.walk(ws):
        for name in [*dirs, *names]:
            os.lchown(os.path.join(root, name), uid, uid)
    os.lchown(ws, uid, uid)
    listing.append({"ws": ws, "env": cell["env"]})
os.chown("/tmp/c", uid, uid)
with open("/tmp/cells.json", "w") as f:
    json.dump(listing, f)
os.chmod("/tmp/cells.json", 0o644)
"""


def _setup(cells: t.Sequence[Cell], nx: Path) -> str:
    """Shell, as root: build every cell's workspace (:data:`_BUILD`)."""
    spec = [{"env": c.env, "nx_json": c.nx_json, "installed": c.installed, "marker": c.marker, "files": list(c.files)}
            for c in cells]
    return (f"mkdir -p /tmp/c && python3 -c {shlex.quote(_BUILD)} {shlex.quote(json.dumps(spec))} "
            f"{shlex.quote(str(nx))} {USER}")


# Into /srv, a tmpfs in this namespace: every top-level entry of / but /.dockerenv, each directory bind-mounted.
CHROOT_WITHOUT_DOCKERENV = """
mount -t tmpfs -o mode=0755 tmpfs /srv
for entry in /* /.[!.]*; do
  name=${entry#/}
  case "$name" in srv|.dockerenv|'.[!.]*') continue;; esac
  if [ -L "$entry" ]; then ln -s "$(readlink "$entry")" "/srv/$name"
  elif [ -d "$entry" ]; then mkdir "/srv/$name" && mount --rbind "$entry" "/srv/$name"
  elif [ -f "$entry" ]; then : > "/srv/$name" && mount --bind "$entry" "/srv/$name"
  fi
done
"""


def _run(release: str, cells_full: list[Cell], cells_hidden: list[Cell]) -> dict[str, t.Any]:
    nx = install_nx(release)
    python, pythonpath = stage_nxsock()
    oracle, driver = stage_oracle(ORACLE), stage_oracle(DRIVER)
    as_user = as_user_prefix(USER, {"PYTHONPATH": pythonpath, "PYTHONDONTWRITEBYTECODE": "1"})
    q = shlex.quote

    def both(prefix: str, tag: str) -> str:
        return f"""cd /
echo '<<<{tag} DOCKER'
{prefix} sh -c 'test -e /.dockerenv && echo dockerenv; grep -q docker /proc/self/cgroup && echo cgroup; true'
echo '<<<{tag} NXSOCK'; {prefix} {as_user} {q(python)} {q(str(driver))} /tmp/cells.json
echo '<<<{tag} NODE'; {prefix} {as_user} node {q(str(oracle))} {q(str(nx))} /tmp/cells.json
"""

    script = f"""set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {USER} -g {USER} /home/u{USER}
{_setup(cells_full, nx)}
set +e
{both("", "HOST")}
rm -rf /tmp/c /tmp/cells.json
set -e
{_setup(cells_hidden, nx)}
{CHROOT_WITHOUT_DOCKERENV}
set +e
{both("chroot /srv", "HIDDEN")}
"""
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script],
                          cwd="/", capture_output=True, stdin=subprocess.DEVNULL, timeout=300)
    sections: dict[str, str] = {}
    for chunk in proc.stdout.decode("utf-8", "replace").split("<<<")[1:]:
        head, _, body = chunk.partition("\n")
        if head.startswith(("HOST ", "HIDDEN ")):
            sections[head] = body
        elif head.startswith("CELL "):
            last = list(sections)[-1]
            sections[last] += "<<<" + chunk
    return {"sections": sections, "stderr": proc.stderr.decode("utf-8", "replace")[-3000:]}


def _answers(text: str) -> dict[int, dict[str, t.Any]]:
    found = {}
    for chunk in text.split("<<<CELL ")[1:]:
        index, _, body = chunk.strip().partition(" ")
        found[int(index)] = json.loads(body)
    return found


def _check(mode: str, cells: list[Cell], sections: dict[str, str], release: str, stderr: str) -> list[str]:
    docker_here = sections.get(f"{mode} DOCKER", "").split()
    ours, theirs = _answers(sections.get(f"{mode} NXSOCK", "")), _answers(sections.get(f"{mode} NODE", ""))
    if len(ours) != len(cells) or len(theirs) != len(cells):
        return [f"{mode}: {len(ours)} nxsock and {len(theirs)} Nx answers for {len(cells)} cells; stderr: {stderr}"]
    if mode == "HIDDEN" and "dockerenv" in docker_here:
        return ["HIDDEN: /.dockerenv is still there"]
    wrong = []
    for index, cell in enumerate(cells):
        mine, nx = ours[index], theirs[index]
        if "error" in mine or "error" in nx:
            wrong.append(f"{mode} {cell.name}: nxsock {mine.get('error')} / Nx {nx.get('error')}")
            continue
        daemon, reasons = mine["daemon"], set(mine["daemon"]["reasons"])
        if index == 0:
            checked(mine["document"], "paths")
        forced = cell.env.get("NX_DAEMON") == "true"
        expected = {
            "enabled": nx["enabled"],
            "ci": nx["ci"] and not forced,
            "sandbox": "sandbox" in reasons
            and nx["sandbox"],  # backed by isSandbox(); the release decides if it counts
            "docker": bool(docker_here) and not forced,
            "disabled-marker": nx["disabled"],
            "no-nx-json": not nx["has_nx_json"],
            "version-mismatch": nx["mismatch"],
            "daemon_dir": nx["daemon_dir"],
        }
        got = {
            "enabled": daemon["enabled"],
            "ci": "ci" in reasons,
            "sandbox": "sandbox" in reasons,
            "docker": "docker" in reasons,
            "disabled-marker": "disabled-marker" in reasons,
            "no-nx-json": "no-nx-json" in reasons,
            "version-mismatch": "version-mismatch" in reasons,
            "daemon_dir": mine["daemon_dir"],
        }
        if got != expected or daemon["enabled"] == bool(reasons):
            diff = {k: (got[k], expected[k]) for k in got if got[k] != expected[k]}
            wrong.append(f"{mode} {release} {cell.name}: nxsock {daemon} vs Nx {nx['enabled']} ({nx}); differs: {diff}")
        if cell.installed and mine["nx_version"] != release:
            wrong.append(f"{mode} {cell.name}: nxsock read Nx {mine['nx_version']}, not {release}")
    return wrong


@pytest.mark.parametrize("release", selected_releases())  # NXSOCK_RELEASES=24.0.5,24.0.6 narrows it
def test_daemon_verdict_matches_the_release(release: str) -> None:
    full, hidden = _cells(True), _cells(False)
    run = _run(release, full, hidden)
    wrong = _check("HOST", full, run["sections"], release, run["stderr"])
    wrong += _check("HIDDEN", hidden, run["sections"], release, run["stderr"])
    assert not wrong, "\n".join(wrong[:20])
