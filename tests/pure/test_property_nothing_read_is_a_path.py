"""Nothing read from disk or the environment becomes a path to act on (Hypothesis, issue 21).

Hostile inputs are generated — the installed ``version``, the daemon's
record, the values of the variables nxsock reads (as the environment or the
user's own ``.env`` sets them), links at Nx's levels — and the whole audit runs
over them as ``doctor`` does.  Every remedy the policy lets through (what is
printed, and what ``--fix`` would apply, which asks the same policy again) is
then judged by rules written out here: each step that changes the disk names
a path within the acting user's own Nx levels (or the one missing temp
directory this shell names), never beneath a target the attacker aimed at,
and ``/tmp/.nx`` only ever keeps ``1777`` and root.
"""

from __future__ import annotations

import json

from conftest import PEER, USER, machine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nxsock.core.wording as wording
from nxsock.audit.checks_levels import (
    check_configuration,
    check_container,
    check_environment,
    check_levels,
    check_outcome,
    check_path_budget,
    check_tmpdir,
)
from nxsock.audit.checks_sockets import check_daemon, check_sockets, survey_sockets
from nxsock.audit.findings import Context
from nxsock.audit.repair import make_plan
from nxsock.core._pathname import dirname, join, normalize
from nxsock.core.environment import Variable
from nxsock.core.fsview import Entry, MemoryView
from nxsock.core.host import host_environment
from nxsock.core.remedy import Policy, Remedy, Step, render, vet
from nxsock.core.resolver import resolve
from pure.test_remedy_properties import Recorder, _beneath  # one recorder of what the policy lets through

WS = "/home/ada/acme"
HOME = "/home/ada"
#: What the attacker aims at: none of it may ever be named by a step that changes the disk.
TARGETS = ("/etc", "/home/ada/.ssh", "/root", "/usr", "/srv/victim")
CLIMBS = [
    "../..", "../../..", "../../../../etc/nologin/x", "../../../../home/ada/.ssh/authorized_keys/x", "..", ".", "",
    "24.0.6/../..", "24.0.6/../../../../etc", "/etc/nologin", "24.0.6/x", "24.0.6\n", " 24.0.6", "24.0.6\x1b]0;x\x07",
    "../../../../srv/victim/x", "../../../../root/.ssh/x", "..%2f..", "24.0.6\\..\\..", "v../..", "=../..",
]
versions = st.one_of(
    st.sampled_from(CLIMBS),
    st.sampled_from(["24.0.6", "23.3.2", "23.1.1", "25.0.0-beta.1+b7"]),
    st.lists(st.sampled_from(["..", ".", "etc", "nologin", "x", "24.0.6", "", ".ssh"]), min_size=1, max_size=7).map(
        "/".join
    ),
    st.text(alphabet="./-+v=0123456789abe\\\n", max_size=24),
)
#: Values a variable could hold, from the environment or the user's own .env: climbs, system paths, Nx's own levels.
values = st.sampled_from([
    None, "/etc", "/etc/nologin", "/tmp/.nx", "/tmp/.nx/1000/../../../etc", "../../../etc", "/tmp", "/",
    "/home/ada/.ssh", "/home/ada/.ssh/authorized_keys", "/tmp/.nx/1000/sockets", "/home/ada/.nx", "/srv/victim/x",
    f"{WS}/../../../etc/x", "/tmp/missing", "/home/ada/tmp", "",
])
socket_paths = st.sampled_from([
    None, "/etc/x.sock", "/tmp/.nx/1000/sockets/../../../../etc/d.sock", "/home/ada/.ssh/d.sock",
    "/tmp/.nx/1000/sockets/0123456789abcdef0123/d.sock", "/srv/victim/0123456789abcdef0123/d.sock", "relative/d.sock",
    "/tmp/.nx/d.sock", "/etc/0123456789abcdef0123/d.sock",
])
owners = st.sampled_from([USER, PEER, 0])
#: A link at one of Nx's levels, pointing at a target, owned by the user, the peer or root.
link_levels = st.sampled_from([None, "/tmp/.nx/1000", "/tmp/.nx/1000/native-cache", "/tmp/.nx/1000/sockets",
                               "/home/ada/.nx", f"{WS}/.nx", f"{WS}/.nx/workspace-data/d"])
link_targets = st.sampled_from(["/etc", "/home/ada/.ssh", "/srv/victim", "/tmp/.nx", "../.."])
container_modes = st.sampled_from([None, 0o1777, 0o777, 0o755, 0o700])


def view_of(version: str | None, record: tuple[str | None, int, str] | None, link: tuple[str, str, int] | None,
            container: int | None, container_owner: int) -> MemoryView:
    """The machine: a provisioned (or odd) container, the user's levels, precious targets, the hostile files."""
    entries = {
        "/etc": Entry("dir", 0, 0, 0o755),
        "/etc/passwd": Entry("file", 0, 0, 0o644),
        "/home/ada/.ssh": Entry("dir", USER, USER, 0o700),
        "/home/ada/.ssh/authorized_keys": Entry("file", USER, USER, 0o600),
        "/srv/victim": Entry("dir", USER, USER, 0o755),
        "/root": Entry("dir", 0, 0, 0o700),
        "/tmp/.nx/1000/native-cache": Entry("dir", USER, USER, 0o700),
        "/tmp/.nx/1000/sockets": Entry("dir", USER, USER, 0o700),
        "/tmp/.nx/1000": Entry("dir", USER, USER, 0o700),
        f"{WS}/.nx": Entry("dir", USER, USER, 0o755),
        f"{WS}/.nx/workspace-data": Entry("dir", USER, USER, 0o755),
        f"{WS}/.nx/workspace-data/d": Entry("dir", USER, USER, 0o700),
        f"{WS}/node_modules": Entry("dir", PEER, PEER, 0o755),
        f"{WS}/node_modules/nx": Entry("dir", PEER, PEER, 0o755),
    }
    if container is not None:
        entries["/tmp/.nx"] = Entry("dir", container_owner, container_owner, container)
    else:
        entries = {k: v for k, v in entries.items() if not k.startswith("/tmp/.nx")}
    files: dict[str, str] = {}
    if version is not None:
        files[f"{WS}/node_modules/nx/package.json"] = json.dumps({"name": "nx", "version": version})
        entries[f"{WS}/node_modules/nx/package.json"] = Entry("file", PEER, PEER, 0o644)
    if record is not None:
        socket_path, pid, nx_version = record
        files[f"{WS}/.nx/workspace-data/d/server-process.json"] = json.dumps(
            {"processId": pid, "socketPath": socket_path, "nxVersion": nx_version})
        entries[f"{WS}/.nx/workspace-data/d/server-process.json"] = Entry("file", USER, USER, 0o644)
        if socket_path and socket_path.startswith("/"):
            entries[normalize(socket_path)] = Entry("socket", PEER, PEER, 0o600)
            entries.setdefault(dirname(normalize(socket_path)), Entry("dir", PEER, PEER, 0o755))
    links = {}
    if link is not None:
        level, target, owner = link
        entries = {k: v for k, v in entries.items() if not (k == level or k.startswith(level + "/"))}
        entries[level] = Entry("link", owner, owner, 0o777)
        links[level] = target
    return machine(entries, links, files=files)




def judge(step: Step, policy: Policy) -> list[str]:
    """The rule written out again: where a step that changes the disk may point, and what the container may become."""
    if step.verb not in ("remove", "remove-tree", "create", "chown", "chmod"):
        return []
    path = step.path or ""
    problems = []
    own = [f"/tmp/.nx/{policy.uid}", policy.daemon_dir, f"{WS}/.nx"] + ([policy.home_nx] if policy.home_nx else [])
    in_configured = any(
        dirname(path) in (d, real) and path.endswith((".sock", ".node")) for _, d, real in policy.configured
    )
    temp = step.verb == "create" and path == policy.temp_dir and step.owner is None
    if not (path == "/tmp/.nx" or any(_beneath(path, top) for top in own) or in_configured or temp):
        problems.append(f"{step.verb} outside the user's Nx levels: {path!r}")
    for target in TARGETS:  # a socket Nx binds in the directory the user's own NX_SOCKET_DIR names is Nx's, wherever
        if (_beneath(path, target) or _beneath(target, path)) and not in_configured:
            problems.append(f"{step.verb} names the target {target}: {path!r}")
    if in_configured and dirname(path) in ("/", "/etc", "/tmp", "/usr", "/root"):
        problems.append(f"a system directory taken for a configured one: {path!r}")
    if path == "/tmp/.nx":
        if step.verb == "chmod" and step.mode != 0o1777:
            problems.append(f"lowers /tmp/.nx to {step.mode:04o}")
        if step.verb == "chown" and (step.owner, step.group) != (0, 0):
            problems.append(f"hands /tmp/.nx to {step.owner}:{step.group}")
        if step.verb == "create" and step.mode != 0o1777:
            problems.append("creates /tmp/.nx other than 1777")
        if step.verb == "remove-tree":
            problems.append("removes every user's container")
    if normalize(path) != path:
        problems.append(f"not a plain path: {path!r}")
    return problems


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    version=st.one_of(st.none(), versions),
    record=st.one_of(st.none(), st.tuples(socket_paths, st.integers(2, 99999), versions)),
    link=st.one_of(st.none(), st.tuples(link_levels.filter(bool), link_targets, owners)),  # type: ignore[arg-type]
    container=container_modes,
    container_owner=st.sampled_from([0, USER, PEER]),
    socket_dir=values, cache_dir=values, data_dir=values, tmpdir=values,
    from_dotenv=st.booleans(),
    uid=st.sampled_from([USER, USER, 0]),
    past_the_snapshot=st.booleans(),
)
def test_no_remedy_and_no_act_names_a_path_read_from_disk(
    version: str | None, record: tuple[str | None, int, str] | None, link: tuple[str, str, int] | None,
    container: int | None, container_owner: int, socket_dir: str | None, cache_dir: str | None, data_dir: str | None,
    tmpdir: str | None, from_dotenv: bool, uid: int, past_the_snapshot: bool,
) -> None:
    """Whatever the checkout, the record, the variables and the links say, every step stays on the user's own levels."""
    view = view_of(version, record, link, container, container_owner)
    environ = {"HOME": HOME}
    for name, value in (("NX_SOCKET_DIR", socket_dir), ("NX_NATIVE_FILE_CACHE_DIRECTORY", cache_dir),
                        ("NX_WORKSPACE_DATA_DIRECTORY", data_dir), ("TMPDIR", tmpdir)):
        if value is not None:
            environ[name] = value
    env = host_environment(view, environ=environ, cwd=WS, uid=uid, username="ada")
    if from_dotenv:  # the user's own .env set them: read the same, judged the same
        env = env._replace(
            variables={k: Variable(v.value, f"{WS}/.env") if k != "HOME" else v for k, v in env.variables.items()}
        )
    if version is not None and env.nx_version is not None:
        assert env.nx_version == version and "/" not in version and ".." not in version
    if past_the_snapshot and version:  # a caller's own Environment: the resolver and the policy must hold without it
        env = env._replace(nx_version=version, nx_version_rejected=None)
    recorder = Recorder()
    original = wording.vet
    wording.vet = recorder  # type: ignore[assignment]
    try:
        resolution = resolve(env, view)
        remedies = wording.context_for(resolution, view)
        ctx = Context(resolution, view, remedies, None, 0, (), (), survey_sockets(resolution, view))
        findings = [
            f
            for check in (
                check_environment,
                check_tmpdir,
                check_container,
                check_levels,
                check_outcome,
                check_configuration,
                check_path_budget,
                check_sockets,
                check_daemon,
            )
            for f in check(ctx)
        ]
    finally:
        wording.vet = original  # type: ignore[assignment]
    cache = resolution.native_cache
    if cache.dir is not None and not cache.configured and resolution.rules.current_layout:
        assert dirname(cache.dir) == cache.root == join("/tmp/.nx", str(uid), "native-cache"), cache
    for remedy, policy in recorder.shown:
        for step in remedy.steps:
            assert judge(step, policy) == [], (render(remedy), judge(step, policy))
    plan = make_plan(findings)  # what --fix would apply: each step is asked of the same policy again, then acted on
    policy = remedies.policy
    for item in (*plan.apply, *plan.for_you):
        for step in item.steps:
            again = vet(Remedy((step,), ""), policy)
            if isinstance(again, Remedy):
                assert judge(again.steps[0], policy) == [], (render(again), judge(again.steps[0], policy))
    for finding in findings if not past_the_snapshot else ():  # what the snapshot read is said in one line
        assert "\n" not in finding.message and "\x1b" not in finding.message, finding.message
