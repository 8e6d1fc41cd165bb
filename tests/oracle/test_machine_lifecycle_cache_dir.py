"""An untrusted ``NX_CACHE_DIRECTORY``, for every release: the real Nx stops where nxsock predicts, and the remedy
works.

Nx 24.0.6 judges a configured task cache when ``utils/cache-directory.js`` is
imported (every command): a directory someone other than the user, root or
the workspace's owner could replace stops it with ``UntrustedDataDirectoryError``
unless ``NX_ALLOW_INSECURE_DIRECTORIES=true``.  Earlier releases use it.  For
each release the state is built for real (a ``0777`` non-sticky ``/tmp/shared``
made by root, the cache under it, the user another uid), ``paths --json`` and
``doctor --json`` are asked, the real ``nx show projects`` runs, and where doctor
gives a command it is pasted as a user pastes it before the same command runs again.
"""
from __future__ import annotations

import shlex

import pytest
from documents import parsed
from harness import USER, as_user_prefix, install_nx, run_as_user, stage_nxsock

from nxsock.core.releases import KNOWN_RELEASES, rules_for

WS = f"/home/u{USER}/ws"
CACHE = "/tmp/shared/cache"
ENV = {"NX_CACHE_DIRECTORY": CACHE, "NX_DAEMON": "false"}


def _state(release: str, nx_json: str = "{}") -> str:
    nx = install_nx(release)
    return (
        "install -d -m 0777 /tmp/shared; "
        f"install -d -o {USER} {WS}/node_modules; echo {shlex.quote(nx_json)} > {WS}/nx.json; "
        f"echo '{{\"name\":\"ws\"}}' > {WS}/package.json; "
        f"ln -s {nx}/node_modules/nx {WS}/node_modules/nx; chown -R {USER} {WS}"
    )


def _nx(env: dict[str, str], prefix: str = "") -> str:
    """The real ``nx show projects`` as the user, in the workspace, its last lines and exit code marked."""
    run = f"{prefix}node node_modules/nx/dist/bin/nx.js show projects"
    return (
        f"cd {WS} && {as_user_prefix(USER, env)} sh -c {shlex.quote(run)} 2>&1 | grep -m1 -o 'UntrustedData[A-Za-z]*' ;"
        f" echo \"NX-RC ${{PIPESTATUS[0]}}\""
    )


@pytest.mark.parametrize("release", KNOWN_RELEASES)
def test_an_untrusted_task_cache_stops_the_releases_that_judge_it_and_unsetting_it_works(release: str) -> None:
    judged = rules_for(release).untrusted_data_dir_refused
    python, pythonpath = stage_nxsock()
    paths = (f"cd {WS} && {as_user_prefix(USER, ENV)} PYTHONPATH={shlex.quote(pythonpath)} {shlex.quote(python)} "
             "-m nxsock paths --json; echo \"PATHS-RC $?\"")
    result = run_as_user(_state(release), ["doctor", "--json", "--only", "cache-directory"], env=ENV, cwd=WS,
                         post=f"{paths}; echo NX; {_nx(ENV)}; echo PASTED; {_nx(ENV, 'unset NX_CACHE_DIRECTORY; ')}")
    predicted, nx_runs = result.post.split("\nNX\n", 1)
    document, rc = predicted.rsplit("PATHS-RC ", 1)
    cache = parsed(document, "paths")["cache_directory"]
    assert cache["dir"] == CACHE and cache["source"] == "NX_CACHE_DIRECTORY (environment)"
    assert cache["refused"] is judged and int(rc) == (78 if judged else 0), predicted
    findings = parsed(result.stdout, "doctor")["findings"]
    before, pasted = nx_runs.split("PASTED", 1)
    if not judged:
        assert findings == [] and result.returncode == 0
        assert "NX-RC 0" in before and "UntrustedData" not in before, before  # this release uses it
        return
    (finding,) = findings
    assert finding["severity"] == "error" and "UntrustedDataDirectoryError" in finding["message"]
    assert "/tmp/shared is writable by other users and not sticky" in finding["message"]
    assert "UntrustedDataDirectoryError" in before and "NX-RC 1" in before, before  # as predicted
    assert finding["remedy"] == "unset NX_CACHE_DIRECTORY"  # what the scenario pasted
    assert "NX-RC 0" in pasted and "UntrustedData" not in pasted, pasted


def test_nx_json_cache_directory_is_judged_too_and_allowing_insecure_directories_is_not_an_error() -> None:
    """24.0.6 reads nx.json's cacheDirectory the same way: an error with the file to change (nxsock edits no
    nx.json)."""
    state = _state("24.0.6", '{"cacheDirectory": "/tmp/shared/cache"}')
    env = {"NX_DAEMON": "false"}
    result = run_as_user(state, ["doctor", "--json", "--only", "cache-directory"], env=env, cwd=WS,
                         post=f"{_nx(env)}; echo ALLOWED; {_nx({**env, 'NX_ALLOW_INSECURE_DIRECTORIES': 'true'})}")
    (finding,) = parsed(result.stdout, "doctor")["findings"]
    assert finding["severity"] == "error" and finding["remedy"] is None and "nx.json" in finding["hint"]
    before, allowed = result.post.split("ALLOWED", 1)
    assert "UntrustedDataDirectoryError" in before and "NX-RC 1" in before, before
    assert "NX-RC 0" in allowed, allowed
    permitted = run_as_user(state, ["paths", "--json"], env={**env, "NX_ALLOW_INSECURE_DIRECTORIES": "true"}, cwd=WS)
    cache = parsed(permitted.stdout, "paths")["cache_directory"]
    assert cache["source"] == "nx.json cacheDirectory" and cache["refused"] is False and cache["untrusted_reason"]
    assert permitted.returncode == 0
