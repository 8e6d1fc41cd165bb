"""Container markers, from fixtures: each one nxsock's container verdict reads, against what Nx itself checks.

Nx's client turns its daemon off in Docker only, and tells Docker by two
signs (``isDocker()`` in ``daemon/client/client.js``, the same in 23.1.1 and
24.0.6): ``/.dockerenv`` exists, or ``/proc/self/cgroup`` says ``docker``.
nxsock's daemon verdict mirrors exactly that (``docker_evidence``); its
container verdict — which judges whether ``/tmp`` may be shared with other
containers — reads more: podman, containerd and Kubernetes markers too. This
machine runs in one container only, so each runtime is a fixture here; the
shared-``/tmp`` collision itself is proven for real in
``tests/oracle/test_machine_lifecycle_collision.py``.
"""

from __future__ import annotations

import typing as t

import pytest
from conftest import environment, machine

from nxsock.audit.checks_host import check_shared_tmp
from nxsock.audit.findings import Context
from nxsock.core.containers import judge_container
from nxsock.core.daemon_switch import docker_evidence
from nxsock.core.fsview import Entry
from nxsock.core.mounts import MOUNTINFO
from nxsock.core.resolver import resolve
from nxsock.core.wording import context_for
from nxsock.output.paths_json import fix_line

LOCAL = "20 1 8:1 / / rw,relatime - overlay overlay rw\n21 20 0:30 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw\n"
#: cgroup v2 inside a container: nothing to read there.
CGROUP_V2 = "0::/\n"
FILE = Entry("file", 0, 0, 0o644)


def _mountinfo_with(root: str) -> str:
    return LOCAL + f"40 20 8:1 {root} /etc/hosts rw,relatime - ext4 /dev/sda1 rw\n"


#: (what the fixture holds, environment variables, the runtime nxsock names, the marker it reports, Nx's isDocker())
MARKERS: list[tuple[str, dict[str, t.Any], dict[str, str], str, str, bool]] = [
    ("/.dockerenv", {"extra": {"/.dockerenv": FILE}}, {}, "docker", "/.dockerenv", True),
    ("/run/.containerenv", {"extra": {"/run/.containerenv": FILE}}, {}, "podman", "/run/.containerenv", False),
    (
        "KUBERNETES_SERVICE_HOST",
        {},
        {"KUBERNETES_SERVICE_HOST": "10.96.0.1"},
        "kubernetes",
        "KUBERNETES_SERVICE_HOST",
        False,
    ),
    (
        "service-account secrets",
        {"extra": {"/var/run/secrets/kubernetes.io": Entry("dir", 0, 0, 0o755)}},
        {},
        "kubernetes",
        "/var/run/secrets/kubernetes.io",
        False,
    ),
    (
        "cgroup v1 kubepods",
        {"files": {"/proc/self/cgroup": "11:memory:/kubepods/burstable/pod1/abc\n"}},
        {},
        "kubernetes",
        "/proc/self/cgroup (kubepods)",
        False,
    ),
    (
        "cgroup v1 docker",
        {"files": {"/proc/self/cgroup": "11:memory:/docker/0123abcd\n"}},
        {},
        "docker",
        "/proc/self/cgroup (docker)",
        True,
    ),
    (
        "cgroup v1 libpod",
        {"files": {"/proc/self/cgroup": "11:memory:/machine.slice/libpod-0123.scope\n"}},
        {},
        "podman",
        "/proc/self/cgroup (libpod)",
        False,
    ),
    (
        "cgroup v1 containerd",
        {"files": {"/proc/self/cgroup": "11:memory:/system.slice/containerd.service/x\n"}},
        {},
        "containerd",
        "/proc/self/cgroup (containerd)",
        False,
    ),
    ("container=podman", {}, {"container": "podman"}, "podman", "container=podman", False),
    ("container=lxc", {}, {"container": "lxc"}, "container", "container=lxc", False),
    (
        "mountinfo kubelet",
        {"files": {MOUNTINFO: _mountinfo_with("/var/lib/kubelet/pods/p1/etc-hosts"), "/proc/self/cgroup": CGROUP_V2}},
        {},
        "kubernetes",
        "/proc/self/mountinfo (var/lib/kubelet/pods)",
        False,
    ),
    (
        "mountinfo docker",
        {
            "files": {
                MOUNTINFO: _mountinfo_with("/var/lib/docker/containers/0123/hosts"),
                "/proc/self/cgroup": CGROUP_V2,
            }
        },
        {},
        "docker",
        "/proc/self/mountinfo (var/lib/docker/containers)",
        False,
    ),
    (
        "mountinfo podman",
        {
            "files": {
                MOUNTINFO: _mountinfo_with("/var/lib/containers/storage/overlay-containers/0123/userdata/hosts"),
                "/proc/self/cgroup": CGROUP_V2,
            }
        },
        {},
        "podman",
        "/proc/self/mountinfo (containers/storage/overlay-containers)",
        False,
    ),
    (
        "mountinfo containerd",
        {
            "files": {
                MOUNTINFO: _mountinfo_with("/var/lib/nerdctl/1935db59/etchosts/default/0123/hosts"),
                "/proc/self/cgroup": CGROUP_V2,
            }
        },
        {},
        "containerd",
        "/proc/self/mountinfo (var/lib/nerdctl)",
        False,
    ),
]


@pytest.mark.parametrize(("fixture", "variables", "runtime", "marker", "nx_docker"),
                         [pytest.param(*m[1:], id=m[0]) for m in MARKERS])
def test_each_marker_names_its_runtime_and_only_docker_s_two_turn_nx_s_daemon_off(
        fixture: dict[str, t.Any], variables: dict[str, str], runtime: str, marker: str, nx_docker: bool) -> None:
    view = machine(fixture.get("extra", {}), files=fixture.get("files", {}))
    verdict = judge_container(view, variables.get, None)
    assert verdict.runtime == runtime and marker in verdict.markers, verdict
    assert (docker_evidence(view) is not None) == nx_docker  # Nx's isDocker(): /.dockerenv or "docker" in the cgroup


def test_a_healthy_host_has_no_container_and_no_shared_tmp_warning() -> None:
    view = machine(files={MOUNTINFO: "20 1 8:1 / / rw - ext4 /dev/sda1 rw\n21 20 0:30 / /tmp rw - tmpfs tmpfs rw\n",
                          "/proc/self/cgroup": "0::/user.slice/user-1000.slice/session-2.scope\n"})
    res = resolve(environment(), view)
    assert res.container is not None and res.container.runtime is None and res.container.markers == ()
    assert check_shared_tmp(Context(res, view, context_for(res, view), None, 0, (), ())) == []


@pytest.mark.parametrize("tmp_line", ["21 20 0:30 / /tmp rw - tmpfs tmpfs rw",  # docker run --tmpfs /tmp
                                      "21 20 8:1 / /tmp rw - overlay overlay rw"])  # the image's own /tmp
def test_a_container_with_a_private_tmp_gains_no_shared_tmp_warning(tmp_line: str) -> None:
    view = machine({"/.dockerenv": FILE}, files={MOUNTINFO: f"20 1 8:1 / / rw - overlay overlay rw\n{tmp_line}\n"})
    res = resolve(environment(), view)
    assert res.container is not None and res.container.runtime == "docker" and not res.container.shared_socket_root
    assert check_shared_tmp(Context(res, view, context_for(res, view), None, 0, (), ())) == []


@pytest.mark.parametrize(("variables", "extra"), [({"KUBERNETES_SERVICE_HOST": "10.96.0.1"}, {}),
                                                  ({}, {"/run/.containerenv": FILE})], ids=["kubernetes", "podman"])
def test_a_tmp_bound_in_from_the_host_is_shared_in_every_runtime_with_a_per_container_remedy(
        variables: dict[str, str], extra: dict[str, Entry]) -> None:
    """A hostPath volume (Kubernetes) or ``-v /tmp:/tmp`` (podman): the socket root is shared beyond this container."""
    view = machine(extra, files={MOUNTINFO: "20 1 8:1 / / rw - overlay overlay rw\n"
                                            "21 20 8:1 /tmp /tmp rw - ext4 /dev/sda1 rw\n"})
    res = resolve(environment(variables), view)
    assert res.container is not None and res.container.shared_socket_root, res.container
    (finding,) = check_shared_tmp(Context(res, view, context_for(res, view), None, 0, (), ()))
    assert finding.severity == "warn" and "bound into this" in finding.message
    assert "NX_DAEMON" not in (fix_line(finding.advice) or "") and "emptyDir" in (finding.hint or "")
