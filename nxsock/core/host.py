"""This process as it is, snapshotted: its ids, cwd, variables (with the workspace's ``.env`` files) and Nx version.

The host's side of :mod:`nxsock.core.snapshot`; :mod:`nxsock.core.fresh_machine` is the
other side, a machine that is not this one.
"""

import os
import re
import typing as t

from ._pathname import join
from .dotenv import load_dotenv_variables
from .environment import DAEMON_SWITCH_VARIABLES, RELEVANT_VARIABLES, Environment, Variable
from .fsview import FsView
from .workspace import checked_version, find_workspace_root, read_nx_version

__all__ = ["account", "host_environment"]


def _passwd(uid: int) -> tuple[str | None, str | None, int | None]:
    """The account's name, home and group from its passwd entry, or ``None`` each without one."""
    try:
        import pwd
    except ImportError:  # pragma: no cover - Windows
        return None, None, None
    try:
        entry = pwd.getpwuid(uid)
    except (KeyError, OverflowError):
        return None, None, None
    return entry.pw_name, entry.pw_dir, entry.pw_gid


def account(who: int | str) -> tuple[str, str, int] | None:
    """The passwd entry of a uid or a name as ``(name, home, uid)``, or ``None`` without one."""
    try:
        import pwd
    except ImportError:  # pragma: no cover - Windows
        return None
    try:
        entry = pwd.getpwuid(who) if isinstance(who, int) else pwd.getpwnam(who)
    except (KeyError, OverflowError, ValueError, TypeError):
        return None
    return entry.pw_name, entry.pw_dir, entry.pw_uid


def _steering(variables: t.Mapping[str, Variable], uid: int) -> str | None:
    """Why a file another user controls chooses where Nx's levels are for *uid*, or ``None``.

    Only a value read from a file (a ``.env``) is judged, by the trust rule of
    :mod:`nxsock.core.trust`; the environment and the options are the caller's own.
    """
    if not any(v.source.startswith("/") for v in variables.values()):
        return None
    from .trust import steering_reason

    return steering_reason(variables, RELEVANT_VARIABLES, uid)


#: The shortest text :func:`_withheld` hides wherever it stands; a shorter one only where the whole value does.
WITHHELD_MIN = 4


def _withheld(
    variables: t.Mapping[str, Variable], environ: t.Mapping[str, str], uid: int
) -> tuple[tuple[str, str], ...]:
    """What a ``.env`` the trust rule refuses drew from *environ*, as ``(expanded, written)`` pairs for the reports.

    Nx expands ``${GITHUB_TOKEN}`` in another user's ``.env`` with your
    environment, and the prediction keeps that value (it is where Nx's
    sockets would go); only what is shown differs: the whole value as written
    in the file, and each value drawn from the environment as its reference.
    Values nxsock reports in any case (``HOME``, ``TMPDIR``…) are not hidden
    where they stand alone, only inside the value that drew them in.
    """
    from .trust import judge_source

    refused: dict[str, bool] = {}
    pairs: list[tuple[str, str]] = []
    for var in variables.values():
        if not var.expanded_from or var.written is None:
            continue
        if var.source not in refused:
            refused[var.source] = judge_source(var.source, uid) is not None
        if not refused[var.source]:
            continue
        pairs.extend((form, var.written) for form in _path_spellings(var.value) if len(form) >= WITHHELD_MIN)
        for name in var.expanded_from:
            drawn = environ.get(name) or ""
            if len(drawn) >= WITHHELD_MIN and name not in RELEVANT_VARIABLES:
                pairs.extend(
                    (form, "${" + name + "}")
                    for form in _path_spellings(drawn, parents=True)
                    if len(form) >= WITHHELD_MIN
                )
    return tuple(dict.fromkeys(pairs))


def _path_spellings(value: str, parents: bool = False) -> list[str]:
    """*value* and the spellings a path built from it is shown in, once normalised: ``a//b``, ``a/./b``, ``a/``,
    ``x/../a``; with *parents*, also each leading run of its parts (``a``, ``a/b`` of ``a/b/c``), which a directory to
    create names.

    An AWS secret key is base64 and may hold ``/`` and ``//``: the resolver shows
    ``/tmp/s-${KEY}`` as ``/tmp/s-wJal…/K7MD…``, and ``paths --json`` lists
    ``/tmp/s-wJal…`` among the directories to create.
    """
    import posixpath

    collapsed = re.sub(r"/{2,}", "/", value)
    forms = [value, collapsed, collapsed.rstrip("/"), posixpath.normpath(value)]
    if parents and not value.startswith("/"):  # a drawn path's leading parts (``/tmp``) are the system's, not a secret
        for form in (collapsed, posixpath.normpath(value)):
            parts = form.split("/")
            forms.extend("/".join(parts[:i]) for i in range(1, len(parts)))
    return [form for form in dict.fromkeys(forms) if form and form != "."]


def _umask() -> int:
    """The process umask, read from ``/proc`` where possible (setting it to read it races a thread creating files);
    where ``/proc`` shows none (not mounted, a kernel before 4.7, gVisor), set and set back at once: a guess would
    hide a mask that takes the owner's bits (``0277``)."""
    try:
        fd = os.open("/proc/self/status", os.O_RDONLY)
        try:
            status = os.read(fd, 4096)
        finally:
            os.close(fd)
        for line in status.splitlines():
            if line.startswith(b"Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def host_environment(
    view: FsView,
    *,
    environ: t.Mapping[str, str] | None = None,
    cwd: str | None = None,
    workspace: str | None = None,
    nx_version: str | None = None,
    home: str | None = None,
    tmpdir: str | None = None,
    uid: int | None = None,
    username: str | None = None,
) -> Environment:
    """Snapshot this process: its ids, cwd, variables (with the workspace's ``.env`` files) and Nx version."""
    environ = dict(os.environ if environ is None else environ)
    if cwd is None:
        try:
            cwd = os.getcwd()
        except OSError:
            cwd = environ.get("PWD") or "/"
    passwd_name, passwd_home, passwd_gid = _passwd(os.getuid() if uid is None else uid)
    if uid is None or uid == os.getuid():
        uid, gid, groups = os.getuid(), os.getgid(), tuple(os.getgroups())
    else:  # another user's view of this host: their primary group only
        gid, groups = (uid if passwd_gid is None else passwd_gid), ()
    read = (*RELEVANT_VARIABLES, *DAEMON_SWITCH_VARIABLES)
    variables = {k: Variable(v, "environment") for k, v in environ.items() if k in read}
    for name, value in (("HOME", home), ("TMPDIR", tmpdir)):
        if value is not None:
            variables[name] = Variable(value, f"--{name.lower()}")
    if workspace is not None:
        root, source = workspace, "--workspace"
    else:
        root, source = find_workspace_root(view, cwd, environ.get("NX_WORKSPACE_ROOT_PATH"))
    plain = {k: v.value for k, v in variables.items()}
    for key, var in load_dotenv_variables(view, root, {**environ, **plain}, read).items():
        variables[key] = var
    installed = read_nx_version(view, root)
    steered = _steering(variables, uid)
    manifest = join(root, "node_modules", "nx", "package.json")
    chosen, rejected = checked_version(nx_version or installed, "--nx-version" if nx_version else manifest)
    return Environment(
        platform="darwin" if os.uname().sysname == "Darwin" else "linux",
        uid=uid,
        gid=gid,
        groups=groups,
        username=username if username is not None else passwd_name,
        passwd_home=passwd_home,
        cwd=cwd,
        workspace_root=root,
        workspace_source=source,
        nx_version=chosen,
        nx_version_source=None if chosen is None else "--nx-version" if nx_version else "installed",
        variables=variables,
        umask=_umask(),
        steered=steered,
        # judged apart from *steered*: a daemon switch (``CI``) steers no path, yet may draw a secret in
        withheld=_withheld(variables, {**environ, **plain}, uid),
        nx_version_rejected=rejected,
    )
