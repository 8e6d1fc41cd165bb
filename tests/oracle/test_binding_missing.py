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
import shlex

import pytest
from documents import parsed
from harness import USER, as_user_prefix, install_nx, pack_nx_binding, run_as_user

WS = f"/home/u{USER}/ws"
VERSION = "24.0.6"
LOCK = {"name": "ws", "lockfileVersion": 3, "requires": True, "packages": {
    "": {"name": "ws", "devDependencies": {"nx": VERSION}},
    "node_modules/nx": {"version": VERSION, "dev": True, "optionalDependencies": {"@nx/nx-linux-x64-gnu": VERSION}},
    "node_modules/@nx/nx-linux-x64-gnu": {"version": VERSION, "dev": True, "optional": True, "os": ["linux"], "cpu": ["x64"]}}}
REMEDY = f"npm install --no-save @nx/nx-linux-x64-gnu@{VERSION}"


def _unpack(triple: str) -> str:
    """The package ``npm pack`` fetched, unpacked as the user where npm installs it (``package/`` stripped)."""
    tarball = pack_nx_binding(triple, VERSION)
    target = f"{WS}/node_modules/@nx/nx-{triple}"
    return (f"{as_user_prefix()} sh -c {shlex.quote(f'mkdir -p {target} && tar -xzf {tarball} --strip-components=1 -C {target}')}")


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
def test_a_missing_binding_fails_nx_as_doctor_says_and_its_remedy_makes_nx_work(lockfile: bool, musl_only: bool, says: str) -> None:
    result = run_as_user(_state(lockfile, musl_only), ["doctor", "--json", "--only", "binding"], cwd=WS,
                         post=f"{_nx()}; echo PASTED; {_unpack('linux-x64-gnu')}; {_nx()}")
    document = parsed(result.stdout, "doctor")
    (finding,) = document["findings"]
    assert finding["id"] == "binding" and finding["severity"] == "error" and document["status"] == "error", result.stdout
    assert "@nx/nx-linux-x64-gnu" in finding["message"] and "WorkspaceContext is not a constructor" in finding["message"]
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
