"""Shared fixtures, and the one place that decides what a test needs and whether it can run here.

Tests live in three tiers, by folder, and each test is marked with its folder's name:

- ``tests/pure``: no root, no namespaces, no Nx — in-memory machines and click's runner;
- ``tests/system``: real uids, private mount namespaces and real tools, as root — no Nx;
- ``tests/oracle``: the real Nx from npm as the reference (root, node and npm).

``pytest -m "not oracle"`` (or ``pytest tests/pure tests/system``) is the fast tier.  What a tier or a
``@pytest.mark.tool(...)`` needs is probed once per process, and a test that cannot run skips saying what to install.
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import shutil
import stat
import typing as t
from pathlib import Path

import pytest

# Each pytest-xdist worker takes its own hundred test uids above the base, before harness.py reads it, so
# that workers never share a uid that one's ``pkill -u`` or planted processes could reach in another.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _WORKER.startswith("gw") and _WORKER[2:].isdigit() and "NXSOCK_TEST_UID_BASE_0" not in os.environ:
    os.environ["NXSOCK_TEST_UID_BASE_0"] = os.environ.get("NXSOCK_TEST_UID_BASE", "4100")
    os.environ["NXSOCK_TEST_UID_BASE"] = str(int(os.environ["NXSOCK_TEST_UID_BASE_0"]) + 100 * int(_WORKER[2:]))

from click.testing import CliRunner  # noqa: E402
from hypothesis import settings  # noqa: E402

# No deadline per example: the suite runs beside other suites and workers on two cores, and a property is about what
# is computed, not how fast (hang guards and the benchmarks speak of time).
settings.register_profile("nxsock", deadline=None)
settings.load_profile("nxsock")
from documents import Runner  # noqa: E402

from nxsock.core.environment import Environment, Variable  # noqa: E402
from nxsock.core.fsview import Entry, MemoryView  # noqa: E402

TESTS = Path(__file__).resolve().parent
TIERS = ("pure", "system", "oracle")
#: What each tier needs beyond Python.
TIER_NEEDS: dict[str, tuple[str, ...]] = {"pure": (), "system": ("root",), "oracle": ("root", "node")}
#: The Debian package that brings each tool a test may name in ``@pytest.mark.tool``.
DEBIAN_PACKAGES = {
    "bwrap": "bubblewrap", "rg": "ripgrep", "man": "man-db", "systemd-tmpfiles": "systemd", "/dev/fuse": "fuse3",
    "promtool": "prometheus", "systemd-analyze": "systemd", "ip": "iproute2", "mkfs.exfat": "exfatprogs",
}


@functools.cache
def missing(need: str) -> str | None:
    """Why *need* (``root``, ``node`` or a tool) cannot be met here, or ``None``: probed once per process."""
    import harness

    if need == "root":
        return harness.missing_privileges() or harness.missing_readable_python()
    if need == "node":
        return harness.missing_node()
    if need == "fusepy":  # a FUSE filesystem the corpus serves (tests/corpus/nosockets.py): fusepy over libfuse 2
        try:
            import fuse  # noqa: F401
        except (ImportError, OSError) as exc:
            return f"needs fusepy (pip install -e '.[test]') and libfuse 2 (Debian package libfuse2): {exc}"
        return None
    present = os.path.exists(need) if need.startswith("/") else shutil.which(need) is not None
    return None if present else f"needs {need} (Debian package {DEBIAN_PACKAGES.get(need, need)})"


def tier_of(path: Path) -> str | None:
    try:
        relative = path.resolve().relative_to(TESTS)
    except ValueError:
        return None
    return relative.parts[0] if len(relative.parts) > 1 and relative.parts[0] in TIERS else None


@pytest.hookimpl(tryfirst=True)  # before -m deselects by the tier marks this adds
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its tier; skip, with what to install, each whose tier or tools are missing here."""
    for item in items:
        tier = tier_of(item.path) or "pure"  # the package's own doctests, and the harness's, are pure
        item.add_marker(tier)
        needs = list(TIER_NEEDS[tier])
        for mark in item.iter_markers("tool"):
            needs += mark.args
        reason = next((why for why in map(missing, needs) if why is not None), None)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


class _XdistGroups:
    """Registered by :func:`pytest_configure`: its hook must run after pytest-xdist's, while the tier marks must be
    in place before ``-m`` deselects, and a conftest holds one hook of a name."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        _keep_xdist_groups(config, items)
        if os.environ.get("PYTEST_XDIST_WORKER"):
            _long_first(items)


#: The order the workers take the tiers in: the slow proofs first, the thousands of quick pure tests last, where
#: they fill the workers evenly to the end instead of a long system test (a race, ansible) running alone.
TIER_ORDER = {"oracle": 0, "system": 1, "pure": 2}


def _long_first(items: list[pytest.Item]) -> None:
    """Reorder *items*, stably, by :data:`TIER_ORDER` (xdist hands out work in collection order; its groups go
    first)."""
    items.sort(key=lambda item: TIER_ORDER.get(tier_of(item.path) or "", len(TIER_ORDER)))


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_XdistGroups(), "nxsock-xdist-groups")
    config.pluginmanager.register(_MachineNxGuard(), "nxsock-machine-nx-guard")


#: The machine's own Nx directory.  A system or oracle test builds its state on a fresh tmpfs ``/tmp`` in a private
#: mount namespace (``harness.py``); one that ran Nx or nxsock as a test uid on this one (issue #20) changed what
#: later tests, and the machine's real users, see.
MACHINE_NX = Path("/tmp/.nx")


def own_test_uids() -> range:
    """This process's hundred test uids (an xdist worker's own, set at the top of this file): a subset of the run's.

    Not the whole run's: a worker's test runs only its worker's uids, so what one leaks is blamed on the test that
    leaked it, never on another worker's test that happened to be running then; another checkout's uids never count."""
    base = int(os.environ.get("NXSOCK_TEST_UID_BASE", "4100"))
    return range(base, base + 100)


def machine_nx_of(uids: range, top: Path = MACHINE_NX) -> frozenset[tuple[str, int, int]]:
    """(name, owner, inode) of *top* (named ``.``) and of each entry in it owned by or named for one of *uids*.

    Only ``lstat`` and one ``listdir``: links are never followed, and the check costs next to nothing a test."""
    found: set[tuple[str, int, int]] = set()
    try:
        status = os.lstat(top)
        names = os.listdir(top) if stat.S_ISDIR(status.st_mode) else []
    except OSError:
        return frozenset()
    if status.st_uid in uids:
        found.add((".", status.st_uid, status.st_ino))
    for name in names:
        try:
            entry = os.lstat(top / name)
        except OSError:
            continue
        if entry.st_uid in uids or (name.isdigit() and len(name) < 11 and int(name) in uids):
            found.add((name, entry.st_uid, entry.st_ino))
    return frozenset(found)


class _MachineNxGuard:
    """Registered by :func:`pytest_configure`: fails a system or oracle test after which the machine's ``/tmp/.nx``
    holds something of this process's test uids that was not there before it."""

    KEY = pytest.StashKey[frozenset[tuple[str, int, int]]]()

    @pytest.hookimpl(tryfirst=True)  # before any fixture of the test is set up
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if tier_of(item.path) in ("system", "oracle"):
            item.stash[self.KEY] = machine_nx_of(own_test_uids())

    @pytest.hookimpl(wrapper=True)  # its "after": every fixture of the test torn down
    def pytest_runtest_teardown(self, item: pytest.Item) -> t.Generator[None, None, None]:
        yield
        before = item.stash.get(self.KEY, None)
        if before is None:
            return
        left = sorted(machine_nx_of(own_test_uids()) - before)
        if left:
            shown = ", ".join(f"{MACHINE_NX}{'' if name == '.' else '/' + name} (uid {uid})" for name, uid, _ in left)
            pytest.fail(f"this test left {shown} on the machine's own /tmp: build the state on a fresh tmpfs /tmp in a "
                        "private mount namespace (tests/harness.py), never on the machine's (issue #20)", pytrace=False)


def _keep_xdist_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--dist=loadgroup`` sends a test to the worker of its ``xdist_group`` by the ``@group`` suffix xdist puts on
    its node id.  xdist 3.8 writes ``item._nodeid``, which pytest 9.2 no longer reads (the id is ``item._id``): every
    group was split across the workers, and each release's batch and daemons were built twice.  Set it where
    pytest reads it, where that is the case."""
    if not (os.environ.get("PYTEST_XDIST_WORKER") and getattr(config.option, "loadgroup", False)):
        return
    try:
        from _pytest.nodeid import coerce_node_id
    except ImportError:  # pytest before 9.2: xdist's own suffix is read
        return
    for item in items:
        names = sorted(
            {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
        )
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            item._id = coerce_node_id(item.nodeid + suffix)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Install every Nx release the oracle tier runs, once and side by side, before any test is timed.

    Only in the process that runs or distributes the tests (not in each xdist worker), and only when the
    oracle tier can run here; the installs land in the shared test cache, so a later run finds them.
    """
    config = session.config
    if (
        os.environ.get("PYTEST_XDIST_WORKER")
        or config.option.collectonly
        or "not oracle" in (config.option.markexpr or "")
    ):
        return
    args = [Path(a.split("::")[0]).resolve() for a in config.args] or [TESTS]
    if not any(
        a == TESTS or a == TESTS / "oracle" or TESTS / "oracle" in a.parents or a in TESTS.parents for a in args
    ):
        return
    if missing("root") or missing("node"):
        return
    import harness

    from nxsock.core.releases import KNOWN_RELEASES

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(harness.install_nx, KNOWN_RELEASES))
    harness.stage_nxsock()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: the oracle tier mostly waits on daemons and polls, so two workers a core keep the cores busy."""
    return 2 * (os.cpu_count() or 1)


USER = 1000
PEER = 1001

ROOT_DIR = Entry("dir", 0, 0, 0o755)
STICKY = Entry("dir", 0, 0, 0o1777)


def mine(mode: int = 0o700, uid: int = USER) -> Entry:
    return Entry("dir", uid, uid, mode)


def machine(extra: t.Mapping[str, Entry] = {}, links: t.Mapping[str, str] = {}, **kwargs: t.Any) -> MemoryView:
    """A fresh Linux machine with /home/ada and the workspace /home/ada/acme, plus *extra*."""
    entries = {
        "/": ROOT_DIR,
        "/tmp": STICKY,
        "/home": ROOT_DIR,
        "/home/ada": mine(0o755),
        "/home/ada/acme": mine(0o755),
        "/home/ada/acme/nx.json": Entry("file", USER, USER, 0o644),
    }
    entries.update(extra)
    for path in [*entries, *links, *kwargs.get("files", {})]:
        parent = path.rsplit("/", 1)[0]
        while parent and parent not in entries:
            entries[parent] = ROOT_DIR
            parent = parent.rsplit("/", 1)[0]
    return MemoryView(entries, links, **kwargs)


def environment(variables: t.Mapping[str, str | None] = {}, **fields: t.Any) -> Environment:
    """Ada, uid 1000, in /home/ada/acme with Nx 24.0.6, unless told otherwise."""
    values = {"HOME": "/home/ada"}
    values.update(variables)  # type: ignore[arg-type]
    base = {
        "platform": "linux",
        "uid": USER,
        "gid": USER,
        "groups": (),
        "username": "ada",
        "passwd_home": "/home/ada",
        "cwd": "/home/ada/acme",
        "workspace_root": "/home/ada/acme",
        "workspace_source": "nx.json",
        "nx_version": "24.0.6",
        "nx_version_source": "installed",
        "variables": {k: Variable(v, "environment") for k, v in values.items() if v is not None},
    }
    base.update(fields)
    return Environment(**base)


@pytest.fixture
def runner() -> CliRunner:
    """Click's runner; each ``--json`` document it produces is checked against its published schema."""
    return Runner()
