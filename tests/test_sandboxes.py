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
import typing as t

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

SRT_VERSION = "0.0.83"
CODEX_VERSION = "0.171.0"

WS = f"/home/u{USER}/ws"


def _listener() -> str:
    source = (REPO / "tests" / "oracle" / "listen.js").read_bytes()
    target = cache_dir() / f"listen-{hashlib.sha256(source).hexdigest()[:16]}.js"
    if not target.exists():
        target.write_bytes(source)
        target.chmod(0o644)
    return str(target)


class Stage(t.NamedTuple):
    setup: str  # root's shell: the workspace with Nx, and nxsock provision (as root first, if asked)
    nxsock: str  # nxsock as the user
    listen: str  # the listener, to run inside a sandbox


def _stage(generation: str, container: str, extra_dirs: str = "") -> Stage:
    """A workspace with the real Nx, provisioned by nxsock as the user (after root, for a root-provisioned /tmp/.nx)."""
    nx = install_nx(NX_VERSIONS[generation])
    python, pylib = stage_nxsock()
    nxsock = f"{as_user_prefix()} PYTHONPATH={pylib} {python} -m nxsock"
    root_provision = f"env PYTHONPATH={pylib} {python} -m nxsock provision >/dev/null; " if container == "root-provisioned" else ""
    setup = (
        f"install -d -o {USER} {WS}/node_modules {extra_dirs}; echo '{{}}' > {WS}/nx.json; "
        f"ln -s {nx}/node_modules/nx {WS}/node_modules/nx; chown -R {USER} {WS}; "
        f"{root_provision}cd {WS} && {nxsock} provision >/dev/null; cd /"
    )
    return Stage(setup, nxsock, f"node {shlex.quote(_listener())} {shlex.quote(str(nx))} {generation}")


@pytest.mark.parametrize("generation", ["native", "ts"])
@pytest.mark.parametrize("container", ["fresh", "root-provisioned"])
def test_nx_listens_inside_bwrap_with_exactly_the_printed_entries(generation: str, container: str) -> None:
    setup, nxsock, listen = _stage(generation, container)
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


def _install_tool(package: str, version: str, command: str) -> str | None:
    """An npm sandbox tool installed once into the readable cache; its path, or None where npm fails."""
    import subprocess

    target = cache_dir() / f"{command}-{version}"
    binary = target / "node_modules" / ".bin" / command
    if not binary.exists():
        target.mkdir(mode=0o755, exist_ok=True)
        (target / "package.json").write_text('{"private": true}\n')
        result = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", f"{package}@{version}"],
            cwd=target, capture_output=True, timeout=600, check=False,
        )
        if result.returncode != 0:
            return None
        subprocess.run(["chmod", "-R", "o+rX", str(target)], check=False)
    return str(binary)


def _install_srt() -> str | None:
    return _install_tool("@anthropic-ai/sandbox-runtime", SRT_VERSION, "srt")


@pytest.mark.skipif(shutil.which("socat") is None, reason="srt needs socat (Debian package socat) on Linux")
@pytest.mark.parametrize("generation", ["native", "ts"])
@pytest.mark.parametrize("container", ["fresh", "root-provisioned"])
def test_nx_listens_inside_srt_with_exactly_the_printed_settings(generation: str, container: str) -> None:
    """srt run with only nxsock's settings file (and its stderr advice followed) lets Nx's daemon socket work."""
    srt = _install_srt()
    if srt is None:
        pytest.skip("npm could not install @anthropic-ai/sandbox-runtime")
    setup, nxsock, listen = _stage(generation, container)
    settings = f"/home/u{USER}/srt.json"
    post = (
        f"cd {WS}; echo '@@WITHOUT'; {as_user_prefix()} {srt} -- {listen} 2>/dev/null | tail -1; "
        f"{nxsock} paths --format srt > {settings} 2>/home/u{USER}/advice; echo '@@ADVICE'; cat /home/u{USER}/advice; "
        # Follow the advice nxsock printed: the one command it names, if any.
        f"grep -o 'mkdir -p [^`]*' /home/u{USER}/advice | while read -r cmd; do {as_user_prefix()} sh -c \"$cmd\"; done; "
        f"echo '@@WITH'; {as_user_prefix()} {srt} --settings {settings} -- {listen} 2>/dev/null | tail -1"
    )
    result = run_as_user(setup, ["--version"], post=post)
    without = result.post.split("@@WITHOUT\n")[1].split("@@ADVICE")[0]
    advice = result.post.split("@@ADVICE\n")[1].split("@@WITH")[0]
    with_settings = result.post.split("@@WITH\n")[1]
    assert without.startswith(("RESOLVE-FAILED", "LISTEN-FAILED")), without
    assert with_settings.startswith("OK "), (advice, with_settings)
    assert "allows all of them" in advice  # srt on Linux cannot name socket paths
    if generation == "ts":
        assert "mkdir -p /tmp/claude" in advice


@pytest.mark.parametrize("generation", ["native", "ts"])
@pytest.mark.parametrize("container", ["fresh", "root-provisioned"])
def test_nx_listens_inside_codex_sandbox_with_exactly_the_printed_profile(generation: str, container: str) -> None:
    """`codex sandbox -P nx` with only nxsock's permission profile lets Nx's daemon socket work; `:workspace` does not."""
    codex = _install_tool("@openai/codex", CODEX_VERSION, "codex")
    if codex is None:
        pytest.skip("npm could not install @openai/codex")
    home = f"/home/u{USER}"
    setup, nxsock, listen = _stage(generation, container, extra_dirs=f"{home}/with {home}/without")
    with_home = as_user_prefix(env={"CODEX_HOME": f"{home}/with"})
    without_home = as_user_prefix(env={"CODEX_HOME": f"{home}/without"})
    post = (
        # codex's own default, the built-in :workspace profile, with nothing of nxsock's.
        f"cd {WS}; echo '@@WITHOUT'; {without_home} timeout 60 {codex} sandbox -P :workspace -C {WS} -- {listen} 2>/dev/null | tail -1; "
        f"{nxsock} paths --format codex-profile > {home}/with/config.toml 2>/dev/null; "
        f"echo '@@WITH'; {with_home} timeout 60 {codex} sandbox -P nx -C {WS} -- {listen} 2>/dev/null | tail -1"
    )
    result = run_as_user(setup, ["--version"], post=post)
    without, with_profile = result.post.split("@@WITHOUT\n")[1].split("@@WITH\n")
    assert without.startswith(("RESOLVE-FAILED", "LISTEN-FAILED")), without
    assert with_profile.startswith("OK "), with_profile
