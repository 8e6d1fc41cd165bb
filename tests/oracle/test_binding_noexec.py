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
"""
from __future__ import annotations

import shlex

import pytest
from documents import parsed
from harness import USER, as_user_prefix, install_nx, run_as_user

from nxsock.core.releases import KNOWN_RELEASES, rules_for

WS = f"/home/u{USER}/ws"
SKIP = "export NX_SKIP_NATIVE_FILE_CACHE=true"


def _state(release: str) -> str:
    nx = install_nx(release)
    return (
        "mount -o remount,noexec /tmp; "
        f"install -d -o {USER} {WS}/node_modules; echo '{{}}' > {WS}/nx.json; echo '{{\"name\":\"ws\"}}' > {WS}/package.json; "
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
    findings = [f for f in parsed(result.stdout, "doctor")["findings"] if "mounted noexec" in f["message"]]
    assert len(findings) == 1, result.stdout
    (finding,) = findings
    before, pasted = result.post.split("PASTED", 1)
    if falls_back:
        assert finding["severity"] == "info" and finding["remedy"] is None
        assert "NX-RC 0" in before  # 24.0.5 and later load the binding in place
        return
    assert finding["severity"] == "error" and "WorkspaceContext is not a constructor" in finding["message"]
    assert "WorkspaceContext is not a constructor" in before and "NX-RC 1" in before  # as predicted
    assert finding["remedy"] == SKIP  # what the scenario pasted before the second run
    assert "NX-RC 0" in pasted, pasted  # the remedy, pasted, makes the same Nx command work
