"""``doctor --fix``: the plan made of the audit's remedies, each step applied by nxsock's own acting code, the verdict.

The plan is the remedies of the audit's warnings and errors, as the values
the policy already vetted (:class:`~nxsock.core.remedy.Step`), one entry per
distinct remedy, in report order.  Only a remedy every step of which nxsock
can do itself, without root, is applied; the rest is listed for the user:
what needs root (nxsock never runs ``sudo``), what changes the shell's
environment (no program can change its parent's), and what runs Nx.

Applying never runs the shell text.  Before each step the policy is asked again, over the disk as it is now
(:func:`~nxsock.core.remedy.vet_step`); the acting function (:data:`FIX`: one row per verb, how it is applied and who
runs it) then walks the parent by the trust rule and re-examines the entry by descriptor, so a level swapped for a link
or another user's directory since the audit is refused, not followed.  After the last step the caller audits again, and
:func:`verdicts` reports a remedy whose finding is still there as not fixed.

This module decides and orders; the disk is changed only in
:mod:`nxsock.act.acting`, :mod:`nxsock.act.removal` and :mod:`nxsock.act.cleanup`.
"""

from __future__ import annotations

import typing as t

from ..act.outcomes import DONE, Acted, Done, Failed, Refused
from ..core import wording
from ..core.remedy import (
    Chmod,
    Chown,
    Create,
    EditEnvFile,
    Export,
    InstallPackage,
    NxsockCommand,
    Policy,
    Problem,
    Remedy,
    Remove,
    RemoveTree,
    RunNx,
    RunNxsock,
    Step,
    StopProcess,
    Umask,
    Unset,
    assert_never,
    render,
    vet_step,
)

if t.TYPE_CHECKING:
    from ..core.resolver import Resolution
    from ..core.wording import Advice
    from .findings import Finding

__all__ = [
    "FIX", "Applied", "Fix", "Plan", "PlanItem", "StepResult", "apply_plan", "finding_key", "make_plan",
    "steered_by_untrusted_file", "still_found", "unreached", "verdicts",
]

#: Why a remedy is the user's to run, by what it does.
NEEDS_ROOT = wording.LEFT_NEEDS_ROOT
SHELL = wording.LEFT_SHELL
RUNS_NX = wording.LEFT_RUNS_NX
INSTALLS = wording.LEFT_INSTALLS
SIGNALS = wording.LEFT_SIGNALS
ADVICE = wording.LEFT_ADVICE


class PlanItem(t.NamedTuple):
    """One distinct remedy, the findings it fixes, and whether nxsock applies it (``why`` is ``None``) or why not."""

    advice: Advice  # the first finding's: its vetted remedy and what it changes
    findings: tuple[Finding, ...]
    why: str | None = None

    @property
    def applies(self) -> bool:
        return self.why is None

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.advice.steps

    @property
    def command(self) -> str:
        """The line the remedy pastes, rendered from its steps."""
        return self.advice.command or ""

    @property
    def changes(self) -> str | None:
        """The finding's hint: what the remedy changes."""
        return self.advice.hint


class Plan(t.NamedTuple):
    apply: tuple[PlanItem, ...]  # in order, each needing no root
    for_you: tuple[PlanItem, ...]  # listed, never run
    without_command: tuple[Finding, ...]  # problems with no safe command: the finding says why


class StepResult(t.NamedTuple):
    step: Step
    outcome: str  # "done" | "refused" | "failed" | "not-run" | "interrupted"
    reason: str | None = None  # for a "done" step, set when an earlier remedy had already done it


#: Why a step is done without acting: an earlier remedy of the plan removed what it acts on (its own entry, or a
#: directory above it) — ``nxsock reset`` taking a dead per-run directory whose socket a later ``chmod`` re-modes.
ALREADY_DONE = wording.ALREADY_DONE


class Applied(t.NamedTuple):
    """What happened to one plan item: its steps, and then the verdict of the re-audit."""

    item: PlanItem
    steps: tuple[StepResult, ...]
    outcome: str  # "fixed" | "not-fixed" | "refused" | "failed" | "not-run"; before the re-audit "done" | "interrupted"
    reason: str | None = None


class _Acting(t.NamedTuple):
    """What applying a step needs besides the step: who acts, over which resolution, the Ctrl-C check between
    entries, and where an in-process ``nxsock reset`` or ``cache prune`` lists what it removed."""

    policy: Policy
    resolution: Resolution
    tick: t.Callable[[], None]
    removed: list[str]


# -- the table: how ``--fix`` treats each verb -----------------------------------------


class Fix(t.NamedTuple):
    """How ``doctor --fix`` treats one verb: why its step is the user's to run (``None``: nxsock applies it without
    root), and how nxsock applies it, through :mod:`nxsock.act` only."""

    left_to_user: t.Callable[[t.Any], str | None]
    apply: t.Callable[[t.Any, _Acting], Acted]


def _nxsock_applies(step: Step) -> str | None:
    return None


def _left(reason: str) -> t.Callable[[Step], str | None]:
    return lambda step: reason


def _not_applied(step: Step, how: _Acting) -> Acted:
    return Refused(wording.not_applied(render(Remedy((step,), ''))))


def _remove(step: Remove, how: _Acting) -> Acted:
    from ..act import acting

    return acting.remove_file(step.path, how.policy.uid)


def _remove_tree(step: RemoveTree, how: _Acting) -> Acted:
    from ..act import acting

    return acting.remove_tree(step.path, how.policy.uid)


def _create(step: Create, how: _Acting) -> Acted:
    from ..act import acting

    owner = None if step.owner is None else (step.owner, step.group if step.group is not None else how.policy.gid)
    return acting.create_directory(step.path, step.mode, how.policy.uid, owner)


def _chmod(step: Chmod, how: _Acting) -> Acted:
    from ..act import acting

    return acting.change_mode(step.path, step.mode, how.policy.uid)


def _chown(step: Chown, how: _Acting) -> Acted:
    from ..act import acting

    return acting.change_owner(step.path, step.owner, step.group, how.policy.uid)


def _edit_env_file(step: EditEnvFile, how: _Acting) -> Acted:
    from ..act import acting

    return acting.delete_env_lines(step.path, step.variable, how.policy.uid)


def _nxsock_left(step: RunNxsock) -> str | None:
    """An nxsock command ``--fix`` does not run in-process (``provision --tmpfiles``, ``paths --format``) is
    listed as root's: the user runs it."""
    return None if _in_process(step.command) is not None else NEEDS_ROOT


def _run_nxsock(step: RunNxsock, how: _Acting) -> Acted:
    run = _in_process(step.command)
    return _not_applied(step, how) if run is None else run(how)


#: Every verb type, how ``--fix`` treats it.  ``tests/pure/test_remedy_verbs.py`` holds it to one row per type.
FIX: dict[type[t.Any], Fix] = {
    Remove: Fix(_nxsock_applies, _remove),
    RemoveTree: Fix(_nxsock_applies, _remove_tree),
    Create: Fix(_nxsock_applies, _create),
    Chown: Fix(_nxsock_applies, _chown),
    Chmod: Fix(_nxsock_applies, _chmod),
    Unset: Fix(_left(SHELL), _not_applied),
    Export: Fix(_left(SHELL), _not_applied),
    Umask: Fix(_left(SHELL), _not_applied),  # the parent shell's mask: no program sets it for its parent
    EditEnvFile: Fix(_nxsock_applies, _edit_env_file),
    StopProcess: Fix(_left(SIGNALS), _not_applied),
    RunNxsock: Fix(_nxsock_left, _run_nxsock),
    RunNx: Fix(_left(RUNS_NX), _not_applied),
    InstallPackage: Fix(_left(INSTALLS), _not_applied),
}

#: Which reason a remedy of several user-run steps is listed with: the first that applies, in this order.
_PRECEDENCE = (SHELL, RUNS_NX, INSTALLS, SIGNALS, NEEDS_ROOT)


def _why_not(steps: t.Sequence[Step]) -> str | None:
    """Why nxsock leaves a remedy to the user, or ``None`` when it applies every step itself."""
    if not steps:
        return ADVICE
    if any(s.needs_root for s in steps):
        return NEEDS_ROOT
    reasons = {FIX[type(s)].left_to_user(s) for s in steps}
    return next((reason for reason in _PRECEDENCE if reason in reasons), None)


def make_plan(findings: t.Iterable[Finding]) -> Plan:
    """The remedies of the warnings and errors, one entry per distinct command, in report order."""
    items: dict[tuple[Step, ...], PlanItem] = {}
    bare: list[Finding] = []
    for finding in findings:
        if finding.severity not in ("warn", "error"):
            continue
        if finding.advice is None or finding.advice.remedy is None:
            bare.append(finding)
            continue
        known = items.get(finding.steps)
        if known is not None:
            items[finding.steps] = known._replace(findings=(*known.findings, finding))
            continue
        items[finding.steps] = PlanItem(finding.advice, (finding,), _why_not(finding.steps))
    every = list(items.values())
    return Plan(tuple(i for i in every if i.applies), tuple(i for i in every if not i.applies), tuple(bare))


def steered_by_untrusted_file(resolution: Resolution, uid: int) -> str | None:
    """Why nothing may be applied here: a variable Nx reads (and so where its levels are) was set in a file the
    trust rule refuses for *uid* (another user's ``.env``, or one beneath a level another user controls); else ``None``.

    The same rule ``reset`` and ``cache prune`` follow: a workspace another user can write does not choose
    what nxsock removes or re-modes, for you or for root.
    """
    from ..core.environment import RELEVANT_VARIABLES
    from ..core.trust import steering_reason

    reason = steering_reason(resolution.environment.variables, RELEVANT_VARIABLES, uid)
    return None if reason is None else f"not applied: {reason}"


def _removed_by(path: str | None, gone: t.Mapping[str, str]) -> str | None:
    """The remedy of the plan that removed *path* or a directory above it, if *path* is gone now; else ``None``."""
    import os

    if not path or not gone or os.path.lexists(path):
        return None  # still there (or there again): the step is vetted and acted on as usual
    from ..core._pathname import dirname

    level = path
    while True:
        command = gone.get(level)
        if command is not None:
            return command
        above = dirname(level)
        if above == level:
            return None
        level = above


def _result(step: Step, acted: Acted) -> StepResult:
    if isinstance(acted, Done):
        return StepResult(step, "done")
    if isinstance(acted, Refused):
        return StepResult(step, "refused", acted.reason)
    if isinstance(acted, Failed):
        return StepResult(step, "failed", acted.reason)
    assert_never(acted)


def _apply_step(step: Step, policy: Policy, resolution: Resolution, tick: t.Callable[[], None],
                removed: list[str] | None = None) -> StepResult:
    """One step: the policy asked again over the disk as it is now, then nxsock's own acting code (:data:`FIX`).

    *removed* receives the paths an in-process ``nxsock reset`` or ``cache prune`` removed.
    """
    steered = steered_by_untrusted_file(resolution, policy.uid)
    if steered is not None:
        return StepResult(step, "refused", steered)
    verdict = vet_step(step, policy)
    if isinstance(verdict, Problem):
        return StepResult(step, "refused", verdict.reason.rstrip("."))
    if verdict.needs_root:
        return StepResult(step, "refused", wording.NEEDS_ROOT_NOW)
    how = _Acting(policy, resolution, tick, [] if removed is None else removed)
    return _result(step, FIX[type(step)].apply(step, how))


def _in_process(command: NxsockCommand) -> t.Callable[[_Acting], Acted] | None:
    """How ``--fix`` runs an nxsock command in-process, by its own acting code; ``None`` for one it leaves to the
    user (it needs root, or only prints)."""
    match command:
        case NxsockCommand.RESET:
            return _reset
        case NxsockCommand.RESET_FORCE:
            return lambda how: _reset(how, force=True)
        case NxsockCommand.RESET_LEGACY:
            return lambda how: _reset(how, legacy=True)
        case NxsockCommand.RESET_DAEMON_MARKER:
            return lambda how: _reset(how, daemon_marker=True)
        case NxsockCommand.CACHE_PRUNE:
            return _prune
        case NxsockCommand.PROVISION:
            return _provision
        case (NxsockCommand.PROVISION_TMPFILES | NxsockCommand.PATHS_TEXT | NxsockCommand.PATHS_SRT
              | NxsockCommand.PATHS_CLAUDE | NxsockCommand.PATHS_CODEX | NxsockCommand.PATHS_CODEX_PROFILE
              | NxsockCommand.PATHS_SEATBELT | NxsockCommand.PATHS_BWRAP | NxsockCommand.PATHS_DOCKER
              | NxsockCommand.PATHS_FLATPAK):
            return None
        case _:
            assert_never(command)


def _reset(how: _Acting, *, force: bool = False, legacy: bool = False, daemon_marker: bool = False) -> Acted:
    """``nxsock reset`` in-process; what it removed is added to ``how.removed``."""
    from ..act.cleanup import ResetItem, reset

    items: list[ResetItem] = []
    reset(how.resolution, dry_run=False, force=force, legacy=legacy, daemon_marker=daemon_marker, tick=how.tick,
          items=items)
    how.removed.extend(i.path for i in items if i.outcome == "removed")
    bad = [i for i in items if i.outcome in ("failed", "refused")]
    return DONE if not bad else Failed("; ".join(f"{i.path}: {i.reason}" for i in bad[:3]))


def _prune(how: _Acting) -> Acted:
    """``nxsock cache prune`` in-process; what it removed is added to ``how.removed``."""
    from ..act.interruption import Interrupted
    from ..act.pruning import prune_cache
    from ..core.fsview import LiveView
    from .binding_cache import find_binding, host_triple, list_cache, prune_plan, prune_refusal, trusted_version

    resolution, uid = how.resolution, how.policy.uid
    view = LiveView()
    env = resolution.environment
    listing = list_cache(resolution, view, find_binding(env, view, host_triple(), resolution.rules))
    plan = prune_plan(listing, trusted_version(resolution, uid), uid)
    tidy = listing.dir if not resolution.native_cache.configured and resolution.rules.current_layout else None
    results, interrupted, _ = prune_cache([(entry.path, why) for entry, why in plan], uid, dry_run=False,
                                          refused=prune_refusal(resolution, uid), tidy=tidy, keep=env.nx_version)
    if interrupted:  # it stopped between entries on Ctrl-C: so does the fix
        raise Interrupted()
    how.removed.extend(r.path for r, _ in results if r.outcome == "removed")
    kept = [r for r, _ in results if r.outcome != "removed"]
    return DONE if not kept else Failed("; ".join(f"{r.path}: {r.reason}" for r in kept[:3]))


def _provision(how: _Acting) -> Acted:
    """``nxsock provision`` in-process: the user's own levels."""
    from ..act.provisioning import provision_for_user
    from ..core.fsview import LiveView

    report = provision_for_user(LiveView(), how.policy.uid, how.policy.gid, dry_run=False)
    return DONE if report.refusal is None else Failed(f"{report.refusal.dir}: {report.refusal.kind}")


def apply_plan(plan: Plan, policy: Policy, resolution: Resolution, tick: t.Callable[[], None],
               done: list[Applied] | None = None) -> list[Applied]:
    """Apply each item's steps in order, each only if the one before was done; *tick* between steps may stop it.

    *done*, when given, receives each item as it finishes, so a caller
    stopped by Ctrl-C still knows what was done.  Outcomes are ``done`` /
    ``refused`` / ``failed`` per step; the items' verdicts come from
    :func:`verdicts` after the re-audit.  A step whose entry an earlier
    remedy removed (or removed a directory above it) is done already, with
    that as its reason: nothing is left to vet or act on.
    """
    done = [] if done is None else done
    gone: dict[str, str] = {}  # each path the plan removed so far -> the remedy that removed it
    for item in plan.apply:
        results: list[StepResult] = []
        for step in item.steps:
            if results and results[-1].outcome != "done":
                results.append(StepResult(step, "not-run", wording.EARLIER_STEP_FAILED))
                continue
            tick()
            by = (
                _removed_by(step.path, gone)
                if isinstance(step, (Remove, RemoveTree, Chown, Chmod, EditEnvFile))
                else None
            )
            if by is not None:
                results.append(StepResult(step, "done", ALREADY_DONE.format(command=by)))
                continue
            removed: list[str] = []
            try:
                results.append(_apply_step(step, policy, resolution, tick, removed))
            except KeyboardInterrupt:  # Ctrl-C inside a step that walks entries (reset, cache prune)
                results.append(StepResult(step, "interrupted", wording.STEP_INTERRUPTED))
                done.append(Applied(item, tuple(results), "interrupted", wording.REMEDY_INTERRUPTED))
                raise
            finally:
                gone.update(dict.fromkeys(removed, item.command))
            if results[-1].outcome == "done" and isinstance(step, (Remove, RemoveTree)):
                gone[step.path] = item.command
        bad = next((r for r in results if r.outcome in ("refused", "failed")), None)
        if bad is None:
            earlier = next((r.reason for r in results if r.reason), None)  # done by an earlier remedy: say so
            done.append(Applied(item, tuple(results), "done", earlier))
        else:
            done.append(Applied(item, tuple(results), bad.outcome, bad.reason))
    return done


def finding_key(finding: Finding) -> tuple[str, str | None, tuple[Step, ...]]:
    """What makes a finding the same one in the re-audit: its id and its path; without a path, its remedy's steps too
    (the leftovers of a reset and of a legacy reset have no path of their own)."""
    return finding.id, finding.path, finding.steps if finding.path is None else ()


def verdicts(applied: t.Sequence[Applied], plan: Plan, after: t.Iterable[Finding]) -> list[Applied]:
    """Each applied item judged by the re-audit: ``fixed`` when none of its findings is still a problem.

    Items not reached (Ctrl-C) are added as ``not-run``.
    """
    remaining = {finding_key(f): f for f in after if f.severity in ("warn", "error")}
    judged = []
    for entry in applied:
        if entry.outcome != "done":
            judged.append(entry)
            continue
        still = [remaining[finding_key(f)] for f in entry.item.findings if finding_key(f) in remaining]
        if still:
            judged.append(entry._replace(outcome="not-fixed", reason=wording.still_finds(still[0].message)))
        else:
            judged.append(entry._replace(outcome="fixed"))
    return judged + unreached(plan, applied)


def still_found(applied: t.Sequence[Applied], after: t.Iterable[Finding]) -> bool:
    """Whether the re-audit still finds, as a warning or an error, a finding any applied remedy was for.

    This, with the re-audit's own status, is what ``--fix``'s exit code follows: a remedy refused or failed whose
    problem is gone anyway (an earlier remedy took it away) leaves nothing to exit 1 for.
    """
    remaining = {finding_key(f) for f in after if f.severity in ("warn", "error")}
    return any(finding_key(f) in remaining for entry in applied for f in entry.item.findings)


def unreached(plan: Plan, applied: t.Sequence[Applied]) -> list[Applied]:
    """The plan's items no step of which ran (Ctrl-C came first), as ``not-run``."""
    reached = {entry.item.steps for entry in applied}
    return [Applied(item, tuple(StepResult(s, "not-run") for s in item.steps), "not-run", "stopped before it")
            for item in plan.apply if item.steps not in reached]
