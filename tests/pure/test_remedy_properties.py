"""No remedy nxsock shows ever breaks the policy, over generated states and hostile names (Hypothesis).

The policy is docs/remedy-policy.md.

Every remedy that reaches the user passes through :func:`nxsock.core.remedy.vet`;
these properties record each one that passes and judge it again by rules
written out here, independently of the module: Nx's own levels only, no
link on the way, never a configured directory or an ancestor of one, never a
system path, ``sudo`` exactly where the user could not do it — and its shell
text names exactly the bytes of the real path.
"""

from __future__ import annotations

import os
import subprocess
import typing as t

from conftest import PEER, USER, environment, machine
from documents import checked
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nxsock.core.wording as wording
from nxsock.core.environment import Variable
from nxsock.core.fsview import Entry, MemoryView
from nxsock.core.remedy import (
    Chmod,
    Chown,
    Create,
    Policy,
    Remedy,
    Remove,
    RemoveTree,
    Withheld,
    render,
    shell_quote,
    vet,
)
from nxsock.core.resolver import resolve
from nxsock.output.paths_json import fix_line, paths_document

WS = "/home/ada/acme"
SYSTEM = {"/", "/usr", "/etc", "/srv", "/tmp", "/home", "/bin", "/lib", "/var", "/home/ada", "/home/bob"}
HOSTILE = [
    "x\u0085y",
    "\x1b]8;;http://e/\x1b\\",
    "o'brien",
    "a b",
    "caf\udce9",
    "$(id)",
    "`x`",
    "\n",
    "\u202e",
    "\\x41",
]

names = st.sampled_from(HOSTILE)
levels = [
    "/tmp/.nx", "/tmp/.nx/1000", "/tmp/.nx/1000/sockets", "/tmp/.nx/1000/native-cache", "/home/ada/.nx",
    "/home/ada/.nx/sockets", f"{WS}/.nx", f"{WS}/.nx/workspace-data", f"{WS}/.nx/workspace-data/d", "/srv/data", "/usr",
    "/home/bob", "/home/ada",
]
owners = st.sampled_from([USER, PEER, 0])
entries = st.one_of(
    st.none(),
    st.builds(Entry, st.sampled_from(["dir", "dir", "dir", "file", "link", "socket"]), owners, owners,
              st.sampled_from([0o700, 0o755, 0o777, 0o1777, 0o000, 0o555])),
)
configured = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "/",
            "/usr",
            "/srv/data",
            "/tmp",
            "/home/bob",
            "/tmp/.nx/1000/sockets",
            f"{WS}/.nx/workspace-data/d",
            f"{WS}/.nx/link/s",
            "/home/ada/.nx",
            "/tmp/.nx",
        ]
    ),
    names.map(lambda n: f"/tmp/{n}"),
    names.map(lambda n: f"/home/ada/{n}/s"),
)


def build(state: t.Mapping[str, Entry | None], hostile: str) -> MemoryView:
    present = {k: v for k, v in state.items() if v is not None and k != "/home/ada"}
    if state.get("/home/ada") is not None and state["/home/ada"].kind == "dir":  # type: ignore[union-attr]
        present["/home/ada"] = state["/home/ada"]  # type: ignore[assignment]
    # a hostile name planted where Nx keeps sockets, a link of the peer's through the workspace
    present[f"/tmp/.nx/1000/sockets/{hostile}"] = Entry("socket", PEER, PEER, 0o600)
    present[f"{WS}/.nx/link"] = Entry("link", PEER, PEER, 0o777)
    present["/srv/etc"] = Entry("dir", 0, 0, 0o755)
    links = {k: "/srv/etc" for k, v in present.items() if v.kind == "link"}
    return machine(present, links)


class Recorder:
    """Every remedy :func:`vet` lets through, with the policy it passed."""

    def __init__(self) -> None:
        self.shown: list[tuple[Remedy, Policy]] = []

    def __call__(self, remedy: Remedy, policy: Policy) -> Remedy | Withheld:
        verdict = vet(remedy, policy)
        if isinstance(verdict, Remedy):
            self.shown.append((verdict, policy))
        return verdict


def _beneath(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def nx_roots(policy: Policy) -> list[str]:
    roots = [f"/tmp/.nx/{policy.uid}", f"{policy.data_dir}/d"]
    if policy.home_nx:
        roots.append(policy.home_nx)
    return roots


def _who(uid: int) -> str:
    return "root" if uid == 0 else f"uid {uid}"


def judge(remedy: Remedy, policy: Policy) -> list[str]:
    """The policy written out again, independently of the module: every way *remedy* could break it."""
    problems = []
    view = policy.view
    for step in remedy.steps:
        if step.verb not in ("remove", "remove-tree", "chown", "chmod", "create"):
            if step.verb == "export" and step.value is not None:
                if step.value.startswith("/tmp/") and not step.value.startswith("/tmp/xdg"):
                    problems.append(f"squattable suggestion {step.value}")
            if step.verb == "edit-env-file" and policy.pasted_by_root:
                problems.append("root is asked to edit a file the audited user owns")
            continue
        path = step.path or ""
        acts = step.verb != "create" or step.owner is not None
        if acts:
            workspace_nx = f"{WS}/.nx"
            ok = (
                path == "/tmp/.nx"
                or any(_beneath(path, r) for r in nx_roots(policy))
                or (
                    step.verb in ("remove", "remove-tree")
                    and _beneath(path, workspace_nx)
                    and not policy.data_dir_configured
                    and _beneath(policy.data_dir, path)
                )
            )
            in_configured_dir = any(
                os.path.dirname(path) in (d, real) and path.endswith((".sock", ".node"))
                for _, d, real in policy.configured
            )
            if not ok and not (step.verb == "remove" and in_configured_dir):
                problems.append(f"{step.verb} outside Nx's levels: {path!r}")
            if path in SYSTEM:
                problems.append(f"{step.verb} of a system path {path!r}")
            if path == "/tmp/.nx" and step.verb == "remove-tree":
                problems.append("removes every user's container")
            for _, directory, real in policy.configured:
                for candidate in (directory, real):
                    if _beneath(candidate, path) and not (step.verb == "remove" and in_configured_dir):
                        problems.append(f"{step.verb} {path!r} is or is above the configured {candidate!r}")
        # no link on the way below the top level, none of another user's anywhere
        parts = [p for p in path.split("/") if p]
        for depth in range(1, len(parts)):
            level = "/" + "/".join(parts[:depth])
            entry = view.lstat(level)
            if (
                isinstance(entry, Entry)
                and entry.is_link
                and (entry.uid not in (0, policy.uid) or level.startswith(("/tmp/.nx", WS + "/.nx", "/home/ada/.nx")))
            ):
                problems.append(f"{step.verb} {path!r} passes through the link {level!r}")
            if isinstance(entry, Entry) and entry.uid not in (0, policy.uid):
                problems.append(f"{step.verb} {path!r} lies beneath {level!r} of uid {entry.uid}")
            if isinstance(entry, Entry) and policy.pasted_by_root and entry.uid != 0:
                problems.append(f"root's paste of {path!r} rests on {level!r} of uid {entry.uid}")
        target = view.lstat(path)
        if step.verb in ("chown", "chmod") and isinstance(target, Entry) and target.is_link:
            problems.append(f"{step.verb} follows the link {path!r}")
        if step.needs_root and policy.uid == 0:
            problems.append("sudo for root")
        if step.verb in ("chown", "chmod") and isinstance(target, Entry) and policy.uid != 0:
            owner = next(
                (
                    s.owner
                    for s in reversed(remedy.steps[: remedy.steps.index(step)])
                    if s.verb == "chown" and s.path == path
                ),
                target.uid,
            )
            if owner != policy.uid and not step.needs_root:
                problems.append(f"{step.verb} of {_who(owner)}'s {path!r} without sudo")
        if (
            step.verb in ("remove", "remove-tree")
            and isinstance(target, Entry)
            and target.uid != policy.uid
            and policy.uid != 0
        ):
            parent = view.lstat(os.path.dirname(path))
            if (
                isinstance(parent, Entry)
                and parent.mode & 0o1000
                and policy.uid not in (parent.uid,)
                and not step.needs_root
            ):
                problems.append(f"removes another user's {path!r} from a sticky directory without sudo")
    return problems


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    state=st.fixed_dictionaries(dict.fromkeys(levels, entries)),
    socket_dir=configured,
    cache_dir=configured,
    data_dir=st.sampled_from([None, "/srv/data", f"{WS}/data", "/tmp/.nx/1000/data"]),
    hostile=names,
    home=st.sampled_from(["/home/ada", "/home/bob/ada", ""]),
    xdg=st.sampled_from([None, "/run/user/1000", "/tmp"]),
    version=st.sampled_from(["24.0.6", "23.3.2"]),
    by_root=st.booleans(),
    from_dotenv=st.booleans(),
    uid=st.sampled_from([USER, USER, PEER]),
)
def test_no_remedy_shown_breaks_the_policy(
    state: dict[str, Entry | None], socket_dir: str | None, cache_dir: str | None, data_dir: str | None, hostile: str,
    home: str, xdg: str | None, version: str, by_root: bool, from_dotenv: bool, uid: int,
) -> None:
    """Over any state: every remedy a user is shown stays on Nx's own levels, off links and off configured
    directories."""
    view = build(state, hostile)
    if xdg == "/run/user/1000":
        view = MemoryView({**view._entries, "/run": Entry("dir", 0, 0, 0o755), "/run/user": Entry("dir", 0, 0, 0o755),
                           xdg: Entry("dir", USER, USER, 0o700)}, view._links)
    variables: dict[str, str | None] = {"HOME": home, "XDG_RUNTIME_DIR": xdg}
    env = environment(variables, nx_version=version, uid=uid, gid=uid)
    extra = {}
    source = f"{WS}/.env" if from_dotenv else "environment"
    for name, value in (("NX_SOCKET_DIR", socket_dir), ("NX_NATIVE_FILE_CACHE_DIRECTORY", cache_dir),
                        ("NX_WORKSPACE_DATA_DIRECTORY", data_dir)):
        if value is not None:
            extra[name] = Variable(value, source)
    env = env._replace(variables={**env.variables, **extra})
    recorder = Recorder()
    original = wording.vet
    wording.vet = recorder  # type: ignore[assignment]
    try:
        resolution = resolve(env, view)
        context = wording.context_for(resolution, view, pasted_by_root=by_root)
        document = checked(paths_document(resolution, view), "paths")
        from nxsock.audit.checks_levels import (
            check_configuration,
            check_container,
            check_levels,
            check_outcome,
            check_path_budget,
        )
        from nxsock.audit.findings import Context

        doctor = Context(resolution, view, context, None, 0, (), (), ())
        findings = [
            f
            for check in (check_container, check_levels, check_outcome, check_configuration, check_path_budget)
            for f in check(doctor)
        ]
    finally:
        wording.vet = original  # type: ignore[assignment]
    for remedy, policy in recorder.shown:
        assert judge(remedy, policy) == [], (render(remedy), judge(remedy, policy))
    shown = [r["remedy"] for r in document["socket_root"]["refusals"] if r["remedy"]] + [
        fix_line(f.advice) for f in findings if fix_line(f.advice)
    ]
    for text in shown:
        assert "/tmp/nx-" not in text and "\n" not in text
    for finding in findings:
        if finding.severity in ("warn", "error"):
            assert fix_line(finding.advice) or finding.hint, finding  # a remedy, or why there is none
        if fix_line(finding.advice):  # the text is the rendering of the values a doctor --fix would apply
            assert render(Remedy(finding.steps, "")) == fix_line(finding.advice), finding
    for refusal in document["socket_root"]["refusals"]:
        assert (refusal["remedy"] is None) == (refusal["remedy_steps"] is None), refusal


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(
            alphabet=st.characters(codec="utf-8") | st.sampled_from(["\udc80", "\udcff", "\udce9"]),
            min_size=1,
            max_size=12,
        ),
        min_size=1,
        max_size=20,
    )
)
def test_the_shell_text_names_exactly_the_bytes(paths: list[str]) -> None:
    """Quoted, any name — control, C1, format and undecodable bytes, quotes — evaluates in bash to its exact bytes."""
    texts = ["/tmp/" + p.replace("\0", "") for p in paths]
    script = " ".join(f"printf '%s\\0' {shell_quote(text)};" for text in texts)
    for text in texts:
        assert all(ch.isprintable() for ch in shell_quote(text)), shell_quote(text)
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout
    assert out.split(b"\0")[:-1] == [os.fsencode(text) for text in texts]


@settings(max_examples=300, deadline=None)
@given(
    verb=st.sampled_from(["remove", "remove-tree", "chown", "chmod", "create"]),
    path=st.sampled_from(
        [
            "/",
            "/usr",
            "/tmp",
            "/tmp/.nx",
            "/tmp/.nx/1000",
            "/home/ada",
            "/home/ada/.nx",
            f"{WS}/.nx/link/d",
            "/srv/data",
            "/etc/passwd",
            f"{WS}/.nx/workspace-data/d",
            "/home/bob/.nx",
        ]
    )
    | names.map(lambda n: f"/tmp/.nx/1000/{n}"),
    needs_root=st.booleans(),
    state=st.fixed_dictionaries(dict.fromkeys(levels, entries)),
    hostile=names,
)
def test_any_step_the_policy_passes_is_safe(
    verb: t.Any, path: str, needs_root: bool, state: dict[str, Entry | None], hostile: str
) -> None:
    """Whatever a builder asks for, what :func:`vet` lets through obeys the written-out policy."""
    view = build(state, hostile)
    resolution = resolve(environment(), view)
    policy = wording.context_for(resolution, view).policy
    step = {
        "remove": Remove(path, needs_root=needs_root),
        "remove-tree": RemoveTree(path, needs_root=needs_root),
        "chown": Chown(path, owner=0, group=0, needs_root=needs_root),
        "chmod": Chmod(path, mode=0o1777, needs_root=needs_root),
        "create": Create(path, mode=0o1777, owner=0, group=0, needs_root=needs_root),
    }[verb]
    verdict = vet(Remedy((step,), "x"), policy)
    if isinstance(verdict, Remedy):
        assert judge(verdict, policy) == [], (render(verdict), judge(verdict, policy))
