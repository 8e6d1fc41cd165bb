"""Whether nxsock runs inside a container, and whether Nx's socket root is shared beyond this pid namespace.

Pids are small and repeat across pid namespaces, and Nx names a daemon's
per-run directory after the workspace path and the daemon's pid: two
containers (or a container and the host) that share one ``/tmp`` and run the
same checkout path collide there (``listen EADDRINUSE … fp<pid>-0.sock``).
Pure: the markers and the mount table are read through a view.
"""

from __future__ import annotations

import typing as t

from .fsview import Entry, FsView

if t.TYPE_CHECKING:
    from .mounts import Mount

__all__ = ["MOUNT_MARKERS", "ContainerVerdict", "judge_container", "peer_outside"]


class ContainerVerdict(t.NamedTuple):
    """The container nxsock runs in (as its markers tell), and whether the socket root reaches beyond it."""

    runtime: str | None  # "docker", "podman", "kubernetes", "containerd", "container" (another), or None: none seen
    markers: tuple[str, ...]  # what told it: "/.dockerenv", "/run/.containerenv", "KUBERNETES_SERVICE_HOST", …
    socket_root_mount: str | None  # the mount the socket root lies on: "<type> <source>[:<root>] at <mount point>"
    shared_socket_root: bool  # the socket root lies on a mount bound in from outside this container
    shared_reason: str | None  # why it is judged shared, or None


#: Where a runtime keeps the files it binds into a container (``/etc/hosts``, ``/etc/hostname``, ``resolv.conf``): seen
#: as the mounted root in ``/proc/self/mountinfo``, also under cgroup v2, whose ``/proc/self/cgroup`` reads ``0::/``.
MOUNT_MARKERS = (("/var/lib/kubelet/pods/", "kubernetes"), ("/var/lib/docker/containers/", "docker"),
                 ("/containers/storage/overlay-containers/", "podman"), ("/run/containerd/", "containerd"),
                 ("/var/lib/containerd/", "containerd"), ("/var/lib/nerdctl/", "containerd"))


def _markers(
    view: FsView, getenv: t.Callable[[str], str | None], mounts: t.Sequence[Mount] = ()
) -> list[tuple[str, str]]:
    """(runtime, marker) for each sign of a container: Nx's own test for Docker first."""
    found: list[tuple[str, str]] = []
    if isinstance(view.stat("/.dockerenv"), Entry):
        found.append(("docker", "/.dockerenv"))
    if isinstance(view.stat("/run/.containerenv"), Entry):
        found.append(("podman", "/run/.containerenv"))
    if getenv("KUBERNETES_SERVICE_HOST"):
        found.append(("kubernetes", "KUBERNETES_SERVICE_HOST"))
    if isinstance(view.stat("/var/run/secrets/kubernetes.io"), Entry):
        found.append(("kubernetes", "/var/run/secrets/kubernetes.io"))
    cgroup = view.read_text("/proc/self/cgroup", 1 << 16)
    if isinstance(cgroup, str):
        for word, runtime in (("kubepods", "kubernetes"), ("docker", "docker"), ("libpod", "podman"),
                              ("containerd", "containerd")):
            if word in cgroup:
                found.append((runtime, f"/proc/self/cgroup ({word})"))
    container = getenv("container")
    if container:
        found.append((container if container in ("docker", "podman") else "container", f"container={container}"))
    for word, runtime in MOUNT_MARKERS:
        if any(word in m.root or word in m.source for m in mounts):
            found.append((runtime, f"/proc/self/mountinfo ({word.strip('/')})"))
    return found


def judge_container(view: FsView, getenv: t.Callable[[str], str | None], socket_root: str | None) -> ContainerVerdict:
    """The container verdict for a socket root; outside a container nothing is shared by this test."""
    from .mounts import mount_of, parse_mountinfo

    text = view.read_text("/proc/self/mountinfo", 1 << 22)
    table = parse_mountinfo(text) if isinstance(text, str) else ()
    markers = _markers(view, getenv, table)
    runtime = next((r for r, _ in markers if r == "kubernetes"), markers[0][0] if markers else None)
    if socket_root is None:
        return ContainerVerdict(runtime, tuple(m for _, m in markers), None, False, None)
    mount = mount_of(table, socket_root) if table else None
    where = None
    shared, reason = False, None
    if mount is not None:
        origin = mount.source + (f":{mount.root}" if mount.bind else "")
        where = f"{mount.fs_type} {origin} at {mount.mount_point}"
        if runtime is not None and mount.mount_point != "/" and (mount.bind or mount.network):
            shared = True
            reason = (f"{socket_root} lies on {mount.mount_point}, bound into this {runtime} container from "
                      f"{origin} ({mount.fs_type}): other containers or the host can share it")
    return ContainerVerdict(runtime, tuple(m for _, m in markers), where, shared, reason)


def peer_outside(socket_path: str) -> bool | None:
    """Whether the process listening on *socket_path* is in a pid namespace this one cannot see.

    ``SO_PEERCRED`` gives the listener's pid as this namespace numbers it: 0
    when it has no number here (a sibling container, or the host seen from a
    container).  ``None`` where nothing answers.
    """
    import socket
    import struct

    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(0.5)
    try:
        probe.connect(socket_path)
        pid, _, _ = struct.unpack("3i", probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    except OSError:
        return None
    finally:
        probe.close()
    return bool(pid == 0)
