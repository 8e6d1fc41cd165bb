"""Properties of the resolver over generated machines and environments (Hypothesis)."""

from __future__ import annotations

import typing as t

from conftest import PEER, USER, environment, machine
from documents import parsed
from hypothesis import given, settings
from hypothesis import strategies as st

from nxsock.core.fsview import Entry, MemoryView, UserNamespaceView
from nxsock.core.resolver import Resolution, resolve
from nxsock.output.emit import dumps
from nxsock.output.paths_json import paths_document

LEVELS = [
    "/tmp/.nx", "/tmp/.nx/1000", "/tmp/.nx/1000/sockets", "/tmp/.nx/1000/native-cache",
    "/home/ada/.nx", "/home/ada/.nx/sockets", "/home/ada/acme/.nx", "/home/ada/acme/.nx/workspace-data",
    "/home/ada/acme/.nx/workspace-data/d", "/tmp/.nx/1000/sockets/f9a8e3fc", "/srv", "/srv/s",
]
MODES = [0o700, 0o755, 0o750, 0o777, 0o1777, 0o000, 0o711]

entries = st.one_of(
    st.none(),
    st.builds(Entry, st.sampled_from(["dir", "dir", "dir", "file", "fifo", "link", "socket"]),
              st.sampled_from([USER, PEER, 0]), st.sampled_from([USER, PEER, 0]), st.sampled_from(MODES)),
)
states = st.fixed_dictionaries(dict.fromkeys(LEVELS, entries))
envs = st.fixed_dictionaries(
    {
        "HOME": st.sampled_from(["/home/ada", None, "", "/tmp", "relative", "/srv/s", "/home/ada/"]),
        "NX_SOCKET_DIR": st.sampled_from(
            [None, "", "/tmp", "/srv/s", "/tmp/.nx", "s/../t", "/home/ada/.nx/sockets", "/srv/s/deep"]
        ),
        "TMPDIR": st.sampled_from([None, "/tmp/missing", "/tmp", "/srv/s"]),
        "NX_SKIP_NATIVE_FILE_CACHE": st.sampled_from([None, "true"]),
    }
)
versions = st.sampled_from(["23.1.1", "23.3.2", "24.0.6", None])


def build(state: t.Mapping[str, Entry | None], read_only: bool) -> MemoryView:
    present = {k: v for k, v in state.items() if v is not None}
    links = {k: "/srv" for k, v in present.items() if v.kind == "link"}
    return machine(present, links, read_only_roots=["/tmp"] if read_only else [])


def apply(view: MemoryView, result: Resolution) -> MemoryView:
    """The machine after Nx has done what the resolution predicts."""
    current = dict(view._entries)
    for action in result.actions:
        parent, name = action.path.rsplit("/", 1)
        real_parent = view.realpath(parent or "/")
        path = (real_parent if isinstance(real_parent, str) else parent).rstrip("/") + "/" + name
        if action.verb == "create":
            current[path] = Entry("dir", USER, USER, action.mode)
            view = MemoryView(current, view._links, view._read_only)
        else:
            current[path] = current[path]._replace(mode=action.mode)
    return MemoryView(current, view._links, view._read_only)


def summary(result: Resolution) -> tuple[t.Any, ...]:
    root = result.socket_root
    return (root.tier, root.root, root.demoted_from, root.refused_configured_dir, root.invalid,
            tuple((k, p.tier, p.dir) for k, p in result.sockets.items()), result.native_cache.dir)


@settings(max_examples=400, deadline=None)
@given(states, envs, versions, st.booleans(), st.booleans())
def test_resolution_is_total_consistent_and_idempotent(state, env_vars, version, read_only, namespaced) -> None:  # type: ignore[no-untyped-def]
    """Never raises; JSON round-trips; nothing chosen was refused; after Nx acts, Nx has nothing left to do."""
    view = build(state, read_only)
    env = environment(env_vars, nx_version=version)
    seen = UserNamespaceView(view, USER, USER) if namespaced else view
    result = resolve(env, seen)

    document = paths_document(result)
    assert parsed(dumps(document), "paths") == document

    for placement in result.sockets.values():
        refused = {r.dir for r in result.socket_root.refusals + placement.refusals}
        if placement.dir is not None and placement.tier != "workspace":
            assert placement.dir not in refused
        if placement.placed:  # no directory exactly when refused everywhere or configured invalidly
            assert (placement.tier is None) == (placement.failure is not None or result.socket_root.invalid is not None)

    after = apply(view, result)
    again = resolve(env, UserNamespaceView(after, USER, USER) if namespaced else after)
    assert summary(again) == summary(result)
    assert again.actions == ()
