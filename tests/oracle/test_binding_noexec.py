"""A binding cache on a ``noexec`` ``/tmp``, for every release: the real Nx fails or falls back as doctor predicts.

Up to 24.0.2 Nx's loader catches only ``EACCES``/``EPERM`` from the copy it
cannot map, so ``native-bindings.js`` exports nothing and every command fails
with ``WorkspaceContext is not a constructor``; from 24.0.5 it catches
``ERR_DLOPEN_FAILED`` and loads the binding in place.  For each release the
state is built for real (a tmpfs ``/tmp`` remounted ``noexec`` in a private
mount namespace, a workspace of the user's), doctor is asked, the real
``nx show projects`` runs, and where doctor gives a command it is pasted as a
user pastes it (the scenario pastes it after the first run; the test then
checks it is the command doctor gave) and the same Nx command runs again.
``doctor --json`` and ``paths --json`` carry the same verdict as the finding.

24.0.6 with ``node_modules`` mounted ``noexec`` as well fails like the older
releases: neither the copy nor the binding maps.  There doctor gives no
command (nxsock remounts nothing) and says what works; ``--explain`` on what Nx
printed names that cause; the scenario does what the words say (remounts
``node_modules`` with exec, as root) and the same Nx command works.
"""
from __future__ import annotations

import shlex

import pytest
from documents import parsed
from harness import USER, as_user_prefix, install_nx, run_as_user, stage_nxsock

from nxsock.core.releases import KNOWN_RELEASES, rules_for

WS = f"/home/u{USER}/ws"
SKIP = "export NX_SKIP_NATIVE_FILE_CACHE=true"


def _state(release: str) -> str:
    nx = install_nx(release)
    return (
        "mount -o remount,noexec /tmp; "
        f"install -d -o {USER} {WS}/node_modules; echo '{{}}' > {WS}/nx.json; echo "
        f"'{{\"name\":\"ws\"}}' > {WS}/package.json; "
        f"ln -s {nx}/node_modules/nx {WS}/node_modules/nx; chown -R {USER} {WS}"
    )


def _nx(prefix: str = "") -> str:
    """The real ``nx show projects`` as the user, in the workspace, its last lines and exit code marked."""
    run = f"{prefix}node node_modules/nx/dist/bin/nx.js show projects"
    return f"cd {WS} && {as_user_prefix()} sh -c {shlex.quote(run)} 2>&1 | tail -n 3; echo \"NX-RC ${{PIPESTATUS[0]}}\""


@pytest.mark.parametrize("release", KNOWN_RELEASES)
def test_a_noexec_cache_is_judged_as_the_release_loads_and_the_remedy_makes_nx_work(release: str) -> None:
    falls_back = rules_for(release).cache_dlopen_falls_back
    result = run_as_user(_state(release), ["doctor", "--json", "--only", "native-cache"], cwd=WS,
                         post=f"{_nx()}; echo PASTED; {_nx(f'{SKIP}; ')}")
    document = parsed(result.stdout, "doctor")
    findings = [f for f in document["findings"] if "mounted noexec" in f["message"]]
    assert len(findings) == 1, result.stdout
    (finding,) = findings
    verdict = document["binding"]  # the verdict paths --json carries too
    assert verdict["state"] == "ok" and verdict["noexec_cache_mount"] == "/tmp"
    assert verdict["loadable"] is falls_back and verdict["loads_from"] == ("in-place" if falls_back else "cache")
    before, pasted = result.post.split("PASTED", 1)
    if falls_back:
        assert finding["severity"] == "info" and finding["remedy"] is None
        assert "NX-RC 0" in before  # 24.0.5 and later load the binding in place
        return
    assert finding["severity"] == "error" and "WorkspaceContext is not a constructor" in finding["message"]
    assert "WorkspaceContext is not a constructor" in before and "NX-RC 1" in before  # as predicted
    assert finding["remedy"] == SKIP  # what the scenario pasted before the second run
    assert "NX-RC 0" in pasted, pasted  # the remedy, pasted, makes the same Nx command work


def _nxsock(args: str) -> str:
    """nxsock as the user, from the staged copy the scenario's uid can read."""
    python, pythonpath = stage_nxsock()
    return (f"{as_user_prefix()} PYTHONPATH={shlex.quote(pythonpath)} PYTHONDONTWRITEBYTECODE=1 "
            f"{shlex.quote(python)} -m nxsock {args}")


def test_node_modules_noexec_too_fails_24_0_6_explain_names_it_and_remounting_exec_makes_nx_work() -> None:
    nx = install_nx("24.0.6") / "node_modules"
    state = _state("24.0.6") + f"; mount --bind {nx} {nx}; mount -o remount,bind,noexec {nx}"
    out = f"/home/u{USER}/nx-output.txt"
    post = (
        f"cd {WS} && {as_user_prefix()} sh -c "
        f"{shlex.quote(f'node node_modules/nx/dist/bin/nx.js show projects > {out} 2>&1')}; "
        f"echo \"NX-RC $?\"; cat {out}; echo EXPLAIN; {_nxsock('doctor --json --explain -')} < {out}; "
        f"echo PATHS; {_nxsock('paths --json')}; echo REMOUNTED; mount -o remount,bind,exec {nx}; {_nx()}"
    )
    result = run_as_user(state, ["doctor", "--json", "--only", "native-cache"], cwd=WS, post=post)
    (finding,) = [f for f in parsed(result.stdout, "doctor")["findings"] if "mounted noexec" in f["message"]]
    assert finding["severity"] == "error" and finding["remedy"] is None and f"remount {nx} with exec" in finding["hint"]
    before, rest = result.post.split("EXPLAIN", 1)
    explained, rest = rest.split("PATHS", 1)
    paths, after = rest.split("REMOUNTED", 1)
    assert "WorkspaceContext is not a constructor" in before and "NX-RC 1" in before, before  # as predicted
    (message,) = parsed(explained, "doctor")["messages"]
    assert message["remedy_source"] == "this machine" and message["remedy"] is None
    assert (
        message["cause"].startswith("On this machine: Nx's binding lies on")
        and "NX_SKIP_NATIVE_FILE_CACHE" not in explained
    )
    verdict = parsed(paths, "paths")["binding"]
    assert (verdict["noexec"], verdict["loadable"], verdict["noexec_binding_mount"]) == (
        "binding-noexec",
        False,
        str(nx),
    )
    assert "NX-RC 0" in after, after  # node_modules remounted exec, as the words say: the same Nx command works
