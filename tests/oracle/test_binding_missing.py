"""The binding this host needs, missing: the real Nx fails as doctor predicts, and doctor's remedy makes it work.

Each state is built for real: a workspace of the user's with a real copy of
``nx`` 24.0.6 (``cp -a`` of the cached install, its dependencies linked) but
without ``@nx/nx-linux-x64-gnu`` — as after an install that skipped optional
dependencies — or holding only ``@nx/nx-linux-x64-musl`` (the package of the
other C library, as from a ``node_modules`` installed on Alpine).  Doctor is
asked, the real ``node node_modules/nx/dist/bin/nx.js show projects`` runs and
fails with ``WorkspaceContext is not a constructor``, then the remedy is
applied and the same Nx command runs again.

The command doctor prints, ``npm install --no-save @nx/nx-linux-x64-gnu@24.0.6``,
fetches the package from the registry; a test has no network after its first
run, so the scenario applies its exact equivalent from the local tarball
``npm pack`` fetched once into the test cache (:func:`harness.pack_nx_binding`):
the package's files unpacked, as the user, into
``node_modules/@nx/nx-linux-x64-gnu`` — where npm installs it.  (The package
has no install scripts.)  The test checks the printed command is that one.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import typing as t
from pathlib import Path

import pytest
from documents import parsed
from harness import USER, as_user_prefix, cache_dir, install_nx, pack_nx_binding, run_as_user

WS = f"/home/u{USER}/ws"
VERSION = "24.0.6"
LOCK = {
    "name": "ws",
    "lockfileVersion": 3,
    "requires": True,
    "packages": {
        "": {"name": "ws", "devDependencies": {"nx": VERSION}},
        "node_modules/nx": {"version": VERSION, "dev": True, "optionalDependencies": {"@nx/nx-linux-x64-gnu": VERSION}},
        "node_modules/@nx/nx-linux-x64-gnu": {
            "version": VERSION,
            "dev": True,
            "optional": True,
            "os": ["linux"],
            "cpu": ["x64"],
        },
    },
}
REMEDY = f"npm install --no-save @nx/nx-linux-x64-gnu@{VERSION}"


def _unpack(triple: str) -> str:
    """The package ``npm pack`` fetched, unpacked as the user where npm installs it (``package/`` stripped)."""
    tarball = pack_nx_binding(triple, VERSION)
    target = f"{WS}/node_modules/@nx/nx-{triple}"
    return (
        f"{as_user_prefix()} sh -c "
        f"{shlex.quote(f'mkdir -p {target} && tar -xzf {tarball} --strip-components=1 -C {target}')}"
    )


def _state(lockfile: bool, musl_only: bool) -> str:
    nx = install_nx(VERSION) / "node_modules"
    state = (f"install -d -o {USER} {WS}/node_modules/@nx; echo '{{}}' > {WS}/nx.json; "
             f"echo '{{\"name\":\"ws\",\"devDependencies\":{{\"nx\":\"{VERSION}\"}}}}' > {WS}/package.json; "
             f"cp -a {nx}/nx {WS}/node_modules/nx; "
             f"for dep in {nx}/*; do [ -e {WS}/node_modules/${{dep##*/}} ] || ln -s $dep {WS}/node_modules/; done; ")
    if lockfile:  # an npm lockfile that lists the optional package, as npm writes it (Nx parses it, so it is whole)
        state += f"echo {shlex.quote(json.dumps(LOCK))} > {WS}/package-lock.json; "
    state += f"chown -R {USER} {WS}; "
    if musl_only:
        state += _unpack("linux-x64-musl") + "; "
    return state


def _nx() -> str:
    """The real ``nx show projects`` as the user, in the workspace, its last lines and exit code marked."""
    run = "node node_modules/nx/dist/bin/nx.js show projects"
    return f"cd {WS} && {as_user_prefix()} sh -c {shlex.quote(run)} 2>&1 | tail -n 3; echo \"NX-RC ${{PIPESTATUS[0]}}\""


@pytest.mark.parametrize(("lockfile", "musl_only", "says"), [
    (True, False, "package-lock.json lists it: the install skipped optional dependencies"),
    (False, True, "Installed instead: @nx/nx-linux-x64-musl, the musl build"),
])
def test_a_missing_binding_fails_nx_as_doctor_says_and_its_remedy_makes_nx_work(
    lockfile: bool, musl_only: bool, says: str
) -> None:
    result = run_as_user(_state(lockfile, musl_only), ["doctor", "--json", "--only", "binding"], cwd=WS,
                         post=f"{_nx()}; echo PASTED; {_unpack('linux-x64-gnu')}; {_nx()}")
    document = parsed(result.stdout, "doctor")
    (finding,) = document["findings"]
    assert finding["id"] == "binding" and finding["severity"] == "error" and document["status"] == "error", (
        result.stdout
    )
    assert (
        "@nx/nx-linux-x64-gnu" in finding["message"] and "WorkspaceContext is not a constructor" in finding["message"]
    )
    assert says in finding["message"], finding["message"]
    assert finding["remedy"] == REMEDY  # the command whose equivalent the scenario applied
    assert [s["verb"] for s in finding["remedy_steps"]] == ["install-package"]
    verdict = document["binding"]  # the verdict paths --json carries too
    assert (verdict["state"], verdict["present"], verdict["loadable"]) == ("missing", False, False)
    assert verdict["package"] == "@nx/nx-linux-x64-gnu" and verdict["locked"] is (True if lockfile else None)
    assert verdict["instead"] == (["@nx/nx-linux-x64-musl"] if musl_only else [])
    before, after = result.post.split("PASTED", 1)
    assert "WorkspaceContext is not a constructor" in before and "NX-RC 1" in before, before  # as predicted
    assert "NX-RC 0" in after, after  # the package restored, the same Nx command works


# -- pnpm and yarn 1: their own command, run as printed ------------------------------------------------------------
#
# The workspace is installed once by the real package manager, as the user, into the test cache (the network is
# needed for that first run only): the tree, the lockfile and the manager's own store or cache, under the user's
# home as the manager made them.  Each run unpacks it, removes the binding package the way the manager lays it out,
# and runs the remedy exactly as doctor prints it, as the user, in a network namespace of its own: no network.

MANAGERS = {
    "pnpm": (f"{WS}/node_modules/.pnpm/@nx+nx-linux-x64-gnu@{VERSION}", "pnpm-lock.yaml", "pnpm install"),
    "yarn": (f"{WS}/node_modules/@nx/nx-linux-x64-gnu", "yarn.lock", "yarn install --ignore-scripts"),
}


def _manager_tools() -> Path:
    """pnpm 9 and yarn 1 installed once into the test cache (never the machine's global prefix); their bin folder."""
    tools = cache_dir() / "pm-tools"
    with _locked():
        if not (tools / ".installed").exists():
            subprocess.run(
                ["npm", "install", "-g", "--no-audit", "--no-fund", "--prefix", str(tools), "pnpm@9", "yarn@1"],
                check=True,
                capture_output=True,
                timeout=600,
            )
            (tools / ".installed").write_text("pnpm@9 yarn@1\n")
    return tools / "bin"


def _locked() -> t.Any:
    import contextlib
    import fcntl

    @contextlib.contextmanager
    def held() -> t.Iterator[None]:
        with open(cache_dir() / ".lock-pm", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    return held()


#: ``pnpm install --force`` installs every optional package, each platform's binding too: offline, pnpm fetches
#: the nine not in its store from a registry it cannot reach, retrying for over a minute, and warns.  The seed's
#: store holds them (``pnpm store add``, once, with the network), as a store does once anything fetched them:
#: the remedy then runs from the store alone, in seconds.  (The workspace's node_modules is as ``pnpm install`` made
#: it: the other platforms' packages are in the store only.)
OTHER_BINDINGS = " ".join(
    f"@nx/nx-{triple}@{VERSION}" for triple in (
        "darwin-arm64", "darwin-x64", "freebsd-x64", "linux-arm-gnueabihf", "linux-arm64-gnu", "linux-arm64-musl",
        "linux-x64-musl", "win32-arm64-msvc", "win32-x64-msvc",
    )
)
#: What the seeding runs after the install, per manager; a change here names a new seed (its ``-v`` suffix).
SEED_EXTRA = {"pnpm": (f"pnpm store add {OTHER_BINDINGS}", "v2"), "yarn": ("true", "")}


def _seeded(manager: str) -> Path:
    """The user's home after ``<manager> install`` of nx@VERSION in the workspace, as a tarball in the test cache."""
    bin_dir = _manager_tools()
    extra, revision = SEED_EXTRA[manager]
    seed = cache_dir() / f"seed-{manager}-nx-{VERSION}-u{USER}{'-' + revision if revision else ''}.tar"
    with _locked():
        if not seed.exists():
            user = as_user_prefix(env={"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin"})
            install = MANAGERS[manager][2]
            # A fresh /tmp too: pnpm runs nx's postinstall, which loads the binding and so copies it into
            # /tmp/.nx/<uid>/native-cache — on the machine's own /tmp without it (issue #20).
            script = (
                f"set -e; mount -t tmpfs -o mode=1777 tmpfs /tmp; mount -t tmpfs -o mode=0755 tmpfs /home; "
                f"install -d -o {USER} -g {USER} /home/u{USER} {WS}; "
                f"echo '{{}}' > {WS}/nx.json; "
                "echo "
                f"'{{\"name\":\"ws\",\"private\":true,\"devDependencies\":{{\"nx\":\"{VERSION}\"}}}}' > "
                f"{WS}/package.json; "
                f"chown -R {USER} {WS}; cd {WS}; {user} {install} >/dev/null; {user} {extra} >/dev/null; "
                f"tar -C /home -cf {seed}.partial u{USER}"
            )
            subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script], check=True, timeout=900)
            os.replace(f"{seed}.partial", seed)
    return seed


@pytest.mark.parametrize("manager", sorted(MANAGERS))
def test_pnpm_and_yarn_get_their_own_command_and_it_restores_the_binding(manager: str) -> None:
    package_dir, lockfile, _ = MANAGERS[manager]
    seed, bin_dir = _seeded(manager), _manager_tools()
    user = as_user_prefix(env={"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin"})
    result = run_as_user(
        f"tar -C /home -xf {seed}; rm -rf {package_dir}",
        ["doctor", "--json", "--only", "binding"],
        cwd=WS,
        post=f"{_nx()}; echo PASTED; cd {WS} && out=$(unshare -n {user} {manager} install --force 2>&1); "
        f"echo \"REMEDY-RC $?\"; printf '%s\\n' \"$out\" | grep -c -i 'fetch.* failed' | sed 's/^/FETCH-FAILED /'; "
        f"{_nx()}",
        timeout=600,
    )  # a hang guard: the tree is large
    document = parsed(result.stdout, "doctor")
    (finding,) = document["findings"]
    assert finding["severity"] == "error" and f"{lockfile} lists it" in finding["message"], finding["message"]
    assert finding["remedy"] == f"{manager} install --force"
    assert document["binding"]["package_manager"] == manager and document["binding"]["locked"] is True
    before, after = result.post.split("PASTED", 1)
    assert "WorkspaceContext is not a constructor" in before and "NX-RC 1" in before, before
    assert "REMEDY-RC 0" in after and "NX-RC 0" in after, after  # the printed command, offline, restored it
    assert "FETCH-FAILED 0" in after, after  # from the store alone: no fetch it retried for a minute, then skipped
