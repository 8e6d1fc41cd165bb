"""Every refusal kind has a sentence and a remedy that passes the one policy, or says why there is none."""

from __future__ import annotations

import os
import shlex
import subprocess
import typing as t

import pytest
from conftest import PEER, USER, environment, machine, mine

from nxsock.core.fsview import Entry
from nxsock.core.guards import Refusal
from nxsock.core.remedy import Export, Remedy, Remove, RemoveTree, Withheld, check, render, shell_quote, vet
from nxsock.core.resolver import resolve
from nxsock.core.wording import PROVISION_COMMAND, context_for, describe, remedy_for, remedy_for_invalid
from nxsock.output.paths_json import fix_line

ROOT_STICKY = Entry("dir", 0, 0, 0o1777)


def context(extra: t.Mapping[str, Entry] = {}, variables: t.Mapping[str, str] = {}, links: t.Mapping[str, str] = {},
            **kwargs: t.Any) -> t.Any:
    view = machine(extra, links, **kwargs)
    env = environment(variables)
    return context_for(resolve(env, view), view), view


STATES: list[tuple[Refusal, dict[str, Entry]]] = [
    (Refusal("not-created", "/tmp/.nx", errno="EACCES"), {}),
    (Refusal("not-a-directory", "/tmp/.nx", uid=PEER, symlink=True), {"/tmp/.nx": Entry("link", PEER, PEER, 0o777)}),
    (Refusal("not-a-directory", "/tmp/.nx/1000", uid=USER, symlink=False),
     {"/tmp/.nx": ROOT_STICKY, "/tmp/.nx/1000": Entry("file", USER, USER, 0o644)}),
    (Refusal("foreign-owner", "/tmp/.nx/1000", uid=PEER), {"/tmp/.nx": ROOT_STICKY, "/tmp/.nx/1000": mine(uid=PEER)}),
    (Refusal("foreign-shared-container", "/tmp/.nx", uid=PEER), {"/tmp/.nx": Entry("dir", PEER, PEER, 0o1777)}),
    (Refusal("not-tightenable", "/tmp/.nx/1000", mode=0o755), {"/tmp/.nx": ROOT_STICKY, "/tmp/.nx/1000": mine(0o755)}),
    (Refusal("peer-writable-not-sticky", "/tmp/.nx", mode=0o777), {"/tmp/.nx": Entry("dir", 0, 0, 0o777)}),
]


@pytest.mark.parametrize(("refusal", "extra"), STATES, ids=lambda v: v.kind + v.dir if isinstance(v, Refusal) else "")
def test_every_refusal_of_nx_levels_has_a_sentence_and_a_remedy_that_parses(
    refusal: Refusal, extra: dict[str, Entry]
) -> None:
    """The sentence names the directory; the remedy is one line a POSIX shell accepts as it is."""
    ctx, _ = context(extra)
    assert refusal.dir in describe(refusal)
    advice = remedy_for(refusal, ctx)
    assert advice.command is not None and "\n" not in advice.command, advice
    assert subprocess.run(["bash", "-n", "-c", advice.command]).returncode == 0


def test_the_shared_root_remedies_are_the_provisioning_commands() -> None:
    assert PROVISION_COMMAND == "sudo install -d -m 1777 -o root -g root /tmp/.nx"
    ctx, _ = context()
    assert remedy_for(Refusal("not-created", "/tmp/.nx", errno="EACCES"), ctx).command == PROVISION_COMMAND
    ctx, _ = context({"/tmp/.nx": Entry("dir", PEER, PEER, 0o1777)})
    peer = remedy_for(Refusal("foreign-shared-container", "/tmp/.nx", uid=PEER), ctx)
    # chown -h: a link the peer swapped in is re-owned itself; the chmod runs only on what root now owns
    assert peer.command == "sudo chown -h root:root -- /tmp/.nx && test ! -L /tmp/.nx && sudo chmod 1777 -- /tmp/.nx"


def test_a_squatted_directory_is_removed_never_chowned_to_its_victim() -> None:
    ctx, _ = context({"/tmp/.nx": ROOT_STICKY, "/tmp/.nx/1000": mine(uid=PEER)})
    advice = remedy_for(Refusal("foreign-owner", "/tmp/.nx/1000", uid=PEER), ctx)
    assert advice.command == "sudo rm -rf -- /tmp/.nx/1000" and "chown" not in advice.command


@pytest.mark.parametrize("configured", ["/srv/data", "/", "/usr", "/home/bob", "/tmp"])
def test_a_configured_directory_is_fixed_in_the_configuration_never_removed(configured: str) -> None:
    """NX_SOCKET_DIR=/srv/data, /, /usr, another user's home: unset it, never ``sudo rm -rf`` it."""
    extra = {"/srv/data": Entry("dir", 0, 0, 0o755), "/usr": Entry("dir", 0, 0, 0o755), "/home/bob": mine(0o755, PEER)}
    ctx, _view = context(extra, {"NX_SOCKET_DIR": configured})
    refusal = Refusal("foreign-owner", configured, uid=0)
    advice = remedy_for(refusal, ctx)
    assert advice.command == "unset NX_SOCKET_DIR"
    assert "rm " not in (advice.hint or "") and "chown" not in (advice.hint or "")


def test_a_refused_cache_directory_speaks_of_the_cache_and_is_unset() -> None:
    ctx, _ = context(variables={"NX_NATIVE_FILE_CACHE_DIRECTORY": "/tmp"})
    refusal = Refusal("foreign-owner", "/tmp", uid=0)
    assert "binding cache" in describe(refusal, "cache") and "sockets" not in describe(refusal, "cache")
    assert remedy_for(refusal, ctx, "cache").command == "unset NX_NATIVE_FILE_CACHE_DIRECTORY"


@pytest.mark.parametrize(("path", "entry"), [("/lib", Entry("link", 0, 0, 0o777)), ("/bin", Entry("link", 0, 0, 0o777)),
                                              ("/etc/passwd", Entry("file", 0, 0, 0o644))])
def test_system_paths_get_no_command(path: str, entry: Entry) -> None:
    """``check-root /lib``, ``/bin``, ``/etc/passwd``: no rm, no mv — why there is none instead."""
    ctx, _ = context({path: entry})
    advice = remedy_for(Refusal("not-a-directory", path, uid=0, symlink=entry.is_link), ctx)
    assert advice.command is None and "not one of Nx's own directories" in (advice.hint or "")


def test_a_foreign_socket_in_your_own_non_sticky_directory_needs_no_sudo() -> None:
    leaf = "/tmp/.nx/1000/sockets/0123456789abcdef0123"
    ctx, _ = context({"/tmp/.nx": ROOT_STICKY, "/tmp/.nx/1000": mine(), "/tmp/.nx/1000/sockets": mine(), leaf: mine(),
                      f"{leaf}/d.sock": Entry("socket", PEER, PEER, 0o600)})
    verdict = vet(Remedy((Remove(f"{leaf}/d.sock", needs_root=True),), "x"), ctx.policy)
    assert isinstance(verdict, Remedy) and render(verdict) == f"rm -- {leaf}/d.sock"


def test_nothing_acts_through_a_link_in_the_workspace() -> None:
    """A workspace whose ``.nx`` is a link: removing its data directory would act on the link's target."""
    ctx, _ = context({"/srv/etc/workspace-data/d": Entry("dir", 0, 0, 0o755)}, links={"/home/ada/acme/.nx": "/srv/etc"})
    verdict = vet(Remedy((RemoveTree("/home/ada/acme/.nx/workspace-data/d", needs_root=True),), "x"), ctx.policy)
    assert isinstance(verdict, Withheld) and "symlink" in verdict.reason


def test_root_auditing_another_user_trusts_no_level_that_user_owns() -> None:
    """``doctor --user``: root pastes; the audited uid could swap its own levels between the audit and the paste."""
    view = machine({"/home/ada/acme/.nx": mine(0o755), "/home/ada/acme/.nx/workspace-data": Entry("dir", 0, 0, 0o755)})
    res = resolve(environment(), view)
    ours = context_for(res, view)
    roots = context_for(res, view, pasted_by_root=True)
    steps = Remedy((RemoveTree("/home/ada/acme/.nx/workspace-data", needs_root=True),), "x")
    assert isinstance(vet(steps, ours.policy), Remedy)
    assert isinstance(vet(steps, roots.policy), Withheld)


def test_a_suggested_socket_directory_is_never_squattable() -> None:
    """``/tmp/nx-<uid>`` is anyone's to create first; the suggestion lives under $XDG_RUNTIME_DIR or the home."""
    ctx, _ = context({"/run/user/1000": mine()}, {"XDG_RUNTIME_DIR": "/run/user/1000"})
    assert ctx.socket_dir_suggestion == "/run/user/1000/nx"
    squat = Remedy((Export(variable="NX_SOCKET_DIR", value="/tmp/nx-1000"),), "x")
    assert isinstance(vet(squat, ctx.policy), Withheld)
    ctx, _ = context({"/run/user/1000": Entry("dir", 0, 0, 0o1777)}, {"XDG_RUNTIME_DIR": "/run/user/1000"})
    assert ctx.socket_dir_suggestion == "/home/ada/.nxs"


def test_a_variable_set_in_a_dotenv_file_is_removed_from_that_file(tmp_path: t.Any) -> None:
    """The remedy for a refused NX_SOCKET_DIR names the file and line, and edits only those lines."""
    dotenv = tmp_path / ".env"
    dotenv.write_text("A=1\nexport NX_SOCKET_DIR=/tmp\nB=2\n")
    from nxsock.core.environment import Variable

    env = environment()
    env = env._replace(variables={**env.variables, "NX_SOCKET_DIR": Variable("/tmp", str(dotenv))})
    view = machine({str(dotenv): Entry("file", USER, USER, 0o644), str(tmp_path): mine()},
                   files={str(dotenv): dotenv.read_text()})
    ctx = context_for(resolve(env, view), view)
    advice = remedy_for_invalid("NX_SOCKET_DIR", ctx)
    assert advice.command is not None and f"line 2 of {dotenv}" in (advice.hint or "")
    subprocess.run(["bash", "-c", advice.command], check=True)
    assert dotenv.read_text() == "A=1\nB=2\n"
    plain, _ = context(variables={"NX_SOCKET_DIR": "/tmp"})
    assert remedy_for_invalid("NX_SOCKET_DIR", plain).command == "unset NX_SOCKET_DIR"


def test_a_dotenv_file_of_another_user_is_not_edited_for_them() -> None:
    from nxsock.core.environment import Variable

    env = environment()
    env = env._replace(variables={**env.variables, "NX_SOCKET_DIR": Variable("/tmp", "/home/ada/acme/.env")})
    view = machine(
        {"/home/ada/acme/.env": Entry("file", PEER, PEER, 0o644)}, files={"/home/ada/acme/.env": "NX_SOCKET_DIR=/tmp\n"}
    )
    ctx = context_for(resolve(env, view), view)
    advice = remedy_for_invalid("NX_SOCKET_DIR", ctx)
    assert advice.command is None or "sed" not in advice.command
    assert "belongs to uid 1001" in (advice.hint or "")


def test_quoting_survives_a_quote_and_a_space() -> None:
    assert shell_quote("/home/o'brien/.nx") == "'/home/o'\\''brien/.nx'"
    assert shlex.split(shell_quote("/a b/c'd")) == ["/a b/c'd"]


@pytest.mark.parametrize(
    "name",
    [
        "/tmp/a\u0085b",
        "/tmp/\x1b]0;x\x07",
        "/tmp/caf\udce9",
        "/tmp/a\nb",
        "/tmp/\u202eevil",
        "/tmp/back\\slash'q",
        "/tmp/\u00a0nbsp",
        "/tmp/$(id)`x`",
    ],
)
def test_the_quoted_text_is_exactly_the_bytes_of_the_path(name: str) -> None:
    """C1, control, format and non-UTF-8 bytes are written as ``$'\\xHH'``: what is pasted is the real path."""
    quoted = shell_quote(name)
    assert all(ch.isprintable() for ch in quoted), quoted
    out = subprocess.run(["bash", "-c", f"printf %s {quoted}"], capture_output=True, check=True).stdout
    assert out == os.fsencode(name)


def test_check_is_the_policy_a_shown_remedy_must_pass() -> None:
    ctx, _ = context({"/tmp/.nx": ROOT_STICKY, "/tmp/.nx/1000": mine(uid=PEER)})
    assert check(Remedy((RemoveTree("/tmp/.nx/1000", needs_root=True),), "x"), ctx.policy) is None
    assert check(Remedy((RemoveTree("/tmp/.nx/1000"),), "x"), ctx.policy) is not None  # it needs root
    assert check(Remedy((RemoveTree("/usr", needs_root=True),), "x"), ctx.policy) is not None


def _daemon_machine(owner: int, pid: int = 77) -> t.Any:
    from nxsock.core.layout import per_run_leaf

    leaf = per_run_leaf("/home/ada/acme", pid)
    files = {
        "/proc/net/unix": "Num RefCount Protocol Flags Type St Inode Path\n0: 2 0 10000 1 01 1 "
                          f"/tmp/.nx/{owner}/sockets/{leaf}/d.sock\n",
        f"/proc/{pid}/cmdline": "/usr/bin/node\0/x/node_modules/nx/dist/src/daemon/server/start.js\0",
        f"/proc/{pid}/status": f"Name:\tnode\nUid:\t{owner}\t{owner}\t{owner}\t{owner}\n",
    }
    extra = {"/proc": Entry("dir", 0, 0, 0o555), f"/proc/{pid}": Entry("dir", owner, owner, 0o555),
             "/home/ada/acme/.nx": Entry("dir", owner, owner, 0o755)}
    return machine(extra, files=files)


@pytest.mark.parametrize("owner", [0, PEER])
def test_a_daemon_of_another_uid_serving_this_workspace_is_named_and_only_roots_is_stopped(owner: int) -> None:
    """``sudo nx daemon --start`` leaves root's daemon: its pid and owner are named and it is stopped; a peer's is never
    killed."""
    from nxsock.audit.checks_sockets import check_root_leftovers
    from nxsock.audit.findings import Context

    view = _daemon_machine(owner)
    resolution = resolve(environment(), view)
    findings = check_root_leftovers(Context(resolution, view, context_for(resolution, view), None, 0, (), (), ()))
    assert len(findings) == 1 and "pid 77" in findings[0].message
    remedy = fix_line(findings[0].advice) or ""
    if owner == 0:
        assert "a daemon of root" in findings[0].message
        assert remedy == "sudo kill -- 77 && sudo rm -rf -- /home/ada/acme/.nx"
    else:
        assert "kill" not in remedy and "ask them to stop it" in (findings[0].hint or "")
