"""The mount table under every level, from mountinfo fixtures: what the resolver predicts and doctor says there.

The real states (exFAT through FUSE, a read-only ``/tmp``, unwritable
workspaces) are proven with the real Nx in ``tests/oracle/test_machine_mounts.py``;
an NFS or CIFS home cannot be built on this machine, so it is judged here from
the mount table such a machine shows.
"""

from __future__ import annotations

import typing as t

from conftest import STICKY, environment, machine, mine

from nxsock.audit.checks_levels import check_filesystems, check_levels
from nxsock.audit.findings import Context
from nxsock.core.fsview import Entry
from nxsock.core.mounts import MOUNTINFO, listen_errno, parse_mountinfo
from nxsock.core.resolver import resolve
from nxsock.core.wording import context_for
from nxsock.output.paths_json import fix_line, paths_document, paths_exit_code

LOCAL = "20 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n21 20 0:30 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw\n"
NFS_HOME = LOCAL + "30 20 0:40 / /home/ada rw,relatime - nfs4 fileserver:/export/home/ada rw,vers=4.2\n"
FUSEBLK_HOME = LOCAL + "31 20 7:0 / /home/ada rw,nosuid,nodev - fuseblk /dev/loop0 rw,user_id=0,allow_other\n"
#: The same, with the checkout bound in from a local disk (a bind mount: its root is not ``/``).
FUSEBLK_HOME_LOCAL_WS = FUSEBLK_HOME + "32 31 8:1 /srv/acme /home/ada/acme rw - ext4 /dev/sda1 rw\n"
RO_TMP = "20 1 8:1 / / rw - ext4 /dev/sda1 rw\n21 20 0:30 / /tmp ro,nosuid - tmpfs tmpfs ro\n"
PEER_CONTAINER = {"/tmp/.nx": Entry("dir", 4102, 4102, 0o755)}


def _ctx(view: t.Any, env: t.Any = None) -> Context:
    res = resolve(env or environment(), view)
    return Context(res, view, context_for(res, view), None, 0, (), ())


def test_an_nfs_home_is_shown_as_a_network_filesystem_under_each_level_it_holds() -> None:
    """paths --json names the mount under every level: an NFS home is a network filesystem, its export the source."""
    view = machine(PEER_CONTAINER, files={MOUNTINFO: NFS_HOME})
    res = resolve(environment(), view)
    assert res.socket_root.tier == "home"  # a peer's container demotes Nx to ~/.nx, on NFS
    mounts = {m["level"]: m for m in paths_document(res, view)["mounts"]}
    root = mounts["socket-root"]
    assert root["fs_type"] == "nfs4" and root["network"] and root["source"] == "fileserver:/export/home/ada"
    assert root["mount_point"] == "/home/ada" and root["holds_sockets"] and root["keeps_modes"]
    assert mounts["workspace"]["network"] and not mounts["shared" if "shared" in mounts else "socket-root"]["read_only"]
    assert res.socket_root.listen_fails is None  # NFS binds local sockets: no error, only the facts


def test_a_home_on_a_modeless_filesystem_is_refused_as_not_tightenable_and_nx_falls_to_the_workspace() -> None:
    """exFAT/NTFS through FUSE keep no mode: ~/.nx stays 0777, so Nx refuses it and goes on to the workspace."""
    home = {"/home/ada": mine(0o777), "/home/ada/acme": mine(0o755)}
    view = machine({**PEER_CONTAINER, **home}, files={MOUNTINFO: FUSEBLK_HOME_LOCAL_WS})
    res = resolve(environment(nx_version="23.3.2"), view)
    assert res.socket_root.tier == "workspace", res.socket_root
    assert any(r.kind == "not-tightenable" and r.dir == "/home/ada/.nx" for r in res.socket_root.refusals)
    [finding] = [f for f in check_levels(_ctx(view, environment(nx_version="23.3.2"))) if f.path == "/home/ada/.nx"]
    assert "fuseblk (/dev/loop0) at /home/ada" in finding.message and "chmod" not in (fix_line(finding.advice) or "")
    workspace = {m["level"]: m for m in paths_document(res, view)["mounts"]}["workspace"]
    assert workspace["bind_root"] == "/srv/acme" and workspace["keeps_modes"]


def test_a_socket_root_on_a_filesystem_without_sockets_fails_with_the_errno_nx_meets() -> None:
    """With modes that pass the guards (umask=077), Nx settles on ~/.nx/sockets and its listen fails there: EIO."""
    home = {"/home/ada": mine(0o700), "/home/ada/acme": mine(0o700)}
    view = machine({**PEER_CONTAINER, **home}, files={MOUNTINFO: FUSEBLK_HOME})
    res = resolve(environment(), view)
    assert res.socket_root.tier == "home" and res.socket_root.listen_fails == "EIO"
    assert paths_exit_code(res) == 73
    [finding] = check_filesystems(_ctx(view))
    assert finding.severity == "error" and "fuseblk" in finding.message and "(EIO)" in finding.message


def test_a_read_only_tmp_is_never_answered_with_install() -> None:
    """/tmp/.nx cannot be made on a read-only /tmp: the remedy moves the sockets, never `install -d` there."""
    view = machine(files={MOUNTINFO: RO_TMP})
    ctx = _ctx(view)
    assert ctx.resolution.socket_root.tier == "home"
    refused = [f for f in check_levels(ctx) if f.path == "/tmp/.nx"]
    from nxsock.audit.checks_levels import check_container

    [container] = check_container(ctx) or refused
    assert "read-only" in container.message and "install" not in (fix_line(container.advice) or "")


def test_listen_errnos_follow_the_filesystem() -> None:
    table = parse_mountinfo("1 0 0:1 / /a rw - fuseblk /dev/loop0 rw\n2 0 0:2 / /b rw - vfat /dev/sdb1 rw\n"
                            "3 0 0:3 / /c rw - 9p drvfs rw\n")
    assert [listen_errno(m) for m in table] == ["EIO", "EPERM", "EOPNOTSUPP"]
    assert STICKY.mode == 0o1777
