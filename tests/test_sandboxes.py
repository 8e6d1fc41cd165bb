"""Proof in a real sandbox: Nx works inside bubblewrap configured only with what ``paths --format bwrap`` printed.

As an unprivileged uid, in a private mount namespace, after ``nxsock
provision`` (on a fresh /tmp, and under a root-provisioned container): the
real Nx resolves its daemon socket inside ``bwrap`` given only nxsock's
entries, listens there and accepts a connection; the same run with
bubblewrap's defaults alone (everything read-only) fails.
"""

from __future__ import annotations

import hashlib
import shlex
import shutil

import pytest
from harness import (
    NX_VERSIONS,
    REPO,
    USER,
    as_user_prefix,
    cache_dir,
    install_nx,
    missing_node,
    missing_privileges,
    missing_readable_python,
    run_as_user,
    stage_nxsock,
)

pytestmark = [
    pytest.mark.skipif(missing_privileges() is not None, reason=str(missing_privileges())),
    pytest.mark.skipif(missing_readable_python() is not None, reason=str(missing_readable_python())),
    pytest.mark.skipif(missing_node() is not None, reason=str(missing_node())),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (Debian package bubblewrap)"),
]

WS = f"/home/u{USER}/ws"


def _listener() -> str:
    source = (REPO / "tests" / "oracle" / "listen.js").read_bytes()
    target = cache_dir() / f"listen-{hashlib.sha256(source).hexdigest()[:16]}.js"
    if not target.exists():
        target.write_bytes(source)
        target.chmod(0o644)
    return str(target)


@pytest.mark.parametrize("generation", ["native", "ts"])
@pytest.mark.parametrize("container", ["fresh", "root-provisioned"])
def test_nx_listens_inside_bwrap_with_exactly_the_printed_entries(generation: str, container: str) -> None:
    nx = install_nx(NX_VERSIONS[generation])
    python, pylib = stage_nxsock()
    nxsock = f"{as_user_prefix()} PYTHONPATH={pylib} {python} -m nxsock"
    root_provision = f"env PYTHONPATH={pylib} {python} -m nxsock provision >/dev/null; " if container == "root-provisioned" else ""
    setup = (
        f"install -d -o {USER} {WS}/node_modules; echo '{{}}' > {WS}/nx.json; "
        f"ln -s {nx}/node_modules/nx {WS}/node_modules/nx; chown -R {USER} {WS}; "
        f"{root_provision}cd {WS} && {nxsock} provision >/dev/null; cd /"
    )
    listen = f"node {shlex.quote(_listener())} {shlex.quote(str(nx))} {generation}"
    bwrap = "bwrap --ro-bind / / --dev /dev --proc /proc --unshare-user --die-with-parent"
    # The defaults-only run goes first, on the untouched state, so it cannot fail on leftovers.
    post = (
        f"cd {WS}; ARGS=$({nxsock} paths --format bwrap 2>/dev/null); echo \"@@ARGS $ARGS\"; "
        f"echo '@@WITHOUT'; {as_user_prefix()} {bwrap} --chdir {WS} {listen} 2>/dev/null; echo \"@@RC $?\"; "
        f"echo '@@WITH'; eval \"{as_user_prefix()} {bwrap} $ARGS --chdir {WS} {listen}\" 2>/dev/null; echo \"@@RC $?\""
    )
    result = run_as_user(setup, ["--version"], post=post)
    without, with_entries = result.post.split("@@WITHOUT\n")[1].split("@@WITH\n")
    args = result.post.split("@@ARGS ")[1].splitlines()[0]
    assert "--bind" in args and " / " not in f" {args} " and "--bind /tmp " not in args, args
    assert with_entries.startswith("OK ") and "@@RC 0" in with_entries, (args, with_entries)
    assert "@@RC 0" not in without and "EADDRINUSE" not in without, without
    assert without.startswith(("RESOLVE-FAILED", "LISTEN-FAILED")), without
