"""Setting up ``/tmp/.nx``: for everyone as root, or one user's own tree as that user.

As root the container becomes a real directory, ``root:root``, ``1777``:
created if absent, handed to root if a user created it first, never followed
or removed when something else stands there.  As a regular user the user's
own levels are established exactly as Nx would (shared container if absent,
then ``<uid>``, ``sockets`` and ``native-cache`` at ``0700``), so Nx later
finds them and changes nothing.  Every step is reported, planned or done.
"""

from __future__ import annotations

import os
import typing as t

from .. import exitcodes
from ..core._pathname import dirname, join
from ..core.fsview import Entry, FsView
from ..core.guards import Action, Refusal, Simulation, establish_private_dir, establish_shared_root
from ..core.layout import CONTAINER
from ..core.trust import judge_path
from .acting import ensure_private_dir, ensure_shared_root

__all__ = ["ProvisionReport", "provision_for_everyone", "provision_for_user"]


class ProvisionReport(t.NamedTuple):
    """What provisioning did (or, dry, would do), and how it ended."""

    as_root: bool
    dry_run: bool
    steps: tuple[Action, ...]
    refusal: Refusal | None
    exit_code: int

    @property
    def changed(self) -> bool:
        return bool(self.steps)


def _user_levels(uid: int) -> tuple[str, ...]:
    user = join(CONTAINER, str(uid))
    return (user, join(user, "sockets"), join(user, "native-cache"))


def _refusal_exit(refusal: Refusal, uid: int) -> int:
    """1 for what stands where the container belongs; 77 when only root can help; 73 when creating failed."""
    if refusal.kind in ("foreign-ancestor", "peer-writable-not-sticky") and refusal.dir != CONTAINER:
        return exitcodes.PROBLEM if uid == 0 else exitcodes.NOPERM  # a level above: /tmp itself is unsafe
    if refusal.kind == "not-a-directory":
        return exitcodes.PROBLEM if refusal.uid == uid or uid == 0 else exitcodes.NOPERM
    if refusal.kind == "not-created":
        return exitcodes.NOPERM if refusal.errno in ("EACCES", "EPERM") and uid != 0 else exitcodes.CANTCREAT
    if refusal.kind in ("foreign-shared-container", "foreign-owner", "peer-writable-not-sticky"):
        return exitcodes.NOPERM
    return exitcodes.CANTCREAT


def provision_for_everyone(view: FsView, *, dry_run: bool) -> ProvisionReport:
    """As root: make ``/tmp/.nx`` a real ``root:root`` ``1777`` directory, one level, through a descriptor."""
    unsafe = judge_path(dirname(CONTAINER), 0)
    if unsafe is not None:
        return ProvisionReport(True, dry_run, (), unsafe, _refusal_exit(unsafe, 0))
    entry = view.lstat(CONTAINER)
    if isinstance(entry, Entry) and not entry.is_dir:
        refusal = Refusal("not-a-directory", CONTAINER, uid=entry.uid, symlink=entry.is_link)
        return ProvisionReport(True, dry_run, (), refusal, exitcodes.PROBLEM)
    if dry_run:
        if not isinstance(entry, Entry):
            return ProvisionReport(True, True, (Action("create", CONTAINER, 0o1777),), None, exitcodes.OK)
        steps = []
        if (entry.uid, entry.gid) != (0, 0):
            steps.append(Action("chown", CONTAINER, entry.mode))
        if entry.mode != 0o1777:
            steps.append(Action("chmod", CONTAINER, 0o1777))
        return ProvisionReport(True, True, tuple(steps), None, exitcodes.OK)
    outcome = ensure_shared_root(CONTAINER, owner=(0, 0))
    code = exitcodes.OK if outcome.refusal is None else _refusal_exit(outcome.refusal, 0)
    return ProvisionReport(True, False, outcome.changes, outcome.refusal, code)


def provision_for_user(view: FsView, uid: int, gid: int, *, dry_run: bool) -> ProvisionReport:
    """As a user: the shared container if absent, then the user's own levels ``0700``, as Nx's guards do."""
    levels = _user_levels(uid)
    unsafe = judge_path(dirname(CONTAINER), uid)
    if unsafe is not None:  # a /tmp others may rename in: nothing beneath it can be trusted to stay
        return ProvisionReport(False, dry_run, (), unsafe, _refusal_exit(unsafe, uid))
    if dry_run:
        sim = Simulation(view, uid, gid, os.getgroups() if uid == os.geteuid() else ())
        refusal = establish_shared_root(sim, CONTAINER)
        for level in levels:
            refusal = refusal or establish_private_dir(sim, level)
        code = exitcodes.OK if refusal is None else _refusal_exit(refusal, uid)
        return ProvisionReport(False, True, tuple(sim.actions), refusal, code)
    steps: list[Action] = []
    outcome = ensure_shared_root(CONTAINER)
    steps += outcome.changes
    refusal = outcome.refusal
    for level in levels:
        if refusal is not None:
            break
        outcome = ensure_private_dir(level)
        steps += outcome.changes
        refusal = outcome.refusal
    code = exitcodes.OK if refusal is None else _refusal_exit(refusal, uid)
    return ProvisionReport(False, False, tuple(steps), refusal, code)
