"""A new user on a fresh machine of another platform, for ``--platform``: nothing is read from this host."""

from ._pathname import join, normalize
from .environment import Environment, Variable, dirname_of
from .fsview import Entry, MemoryView
from .host_overrides import Platform
from .workspace import checked_version

__all__ = ["DARWIN_USER_TMPDIR", "fresh_environment", "fresh_machine"]


def fresh_environment(
    platform: Platform,
    *,
    uid: int | None = None,
    username: str | None = None,
    home: str | None = None,
    tmpdir: str | None = None,
    workspace: str | None = None,
    nx_version: str | None = None,
) -> Environment:
    """A new user on a fresh machine of *platform*, for ``--platform``: nothing is read from this host.

    Each value says where it came from: the option that gave it, or the
    platform's default for a new user (macOS gives every user a ``$TMPDIR``
    of its own under ``/var/folders``; Windows one under the profile).
    """
    default = f"the {platform} default for a new user"
    home_source = "--home" if home is not None else default
    tmp_source = "--tmpdir" if tmpdir is not None else default
    workspace_source = "--workspace" if workspace is not None else f"{default} (~/workspace)"
    if platform == "win32":
        import ntpath

        username = username or "user"
        home = ntpath.normpath(home or f"C:\\Users\\{username}")
        tmpdir = ntpath.normpath(tmpdir or f"{home}\\AppData\\Local\\Temp")
        workspace = ntpath.normpath(workspace or f"{home}\\workspace")
        uid = 0 if uid is None else uid
        variables = {"TEMP": Variable(tmpdir, tmp_source), "TMP": Variable(tmpdir, tmp_source)}
    else:
        uid = (501 if platform == "darwin" else 1000) if uid is None else uid
        username = username or "user"
        home = home or (f"/Users/{username}" if platform == "darwin" else f"/home/{username}")
        workspace = workspace or join(home, "workspace")
        variables = {}
        if tmpdir is None and platform == "darwin":
            tmpdir = DARWIN_USER_TMPDIR  # launchd sets it for every login; the name varies, not its length
        if tmpdir is not None:
            variables["TMPDIR"] = Variable(tmpdir, tmp_source)
    variables["HOME"] = Variable(home, home_source)
    version, rejected = checked_version(nx_version, "--nx-version")
    return Environment(
        platform=platform,
        uid=uid,
        gid=20 if platform == "darwin" else uid,
        groups=(),
        username=username,
        passwd_home=home,
        cwd=workspace,
        workspace_root=workspace,
        workspace_source=workspace_source,
        nx_version=version,
        nx_version_source="--nx-version" if version else None,
        variables=variables,
        simulated=True,
        nx_version_rejected=rejected,
    )


def fresh_machine(env: Environment) -> MemoryView:
    """A new POSIX machine for *env*: root-owned ``/``, a ``1777`` temp dir, the user's home and workspace.

    On darwin ``/tmp`` is a root-owned symlink to ``/private/tmp``.
    """
    root_dir = Entry("dir", 0, 0, 0o755)
    entries = {"/": root_dir, "/private": root_dir} if env.platform == "darwin" else {"/": root_dir}
    entries["/private/tmp" if env.platform == "darwin" else "/tmp"] = Entry("dir", 0, 0, 0o1777)
    links = {"/tmp": "private/tmp", "/var": "private/var"} if env.platform == "darwin" else {}
    mine = Entry("dir", env.uid, env.gid, 0o750 if env.platform == "darwin" else 0o755)
    places = [(env.get("HOME"), mine), (env.workspace_root, mine)]
    tmpdir = env.get("TMPDIR")
    if env.platform == "darwin" and tmpdir and normalize(tmpdir).startswith("/var/folders/"):
        # The per-user temp dir: /private/var/folders/<xx>/<name>/T, the user's own, 0700.
        real = "/private" + normalize(tmpdir)
        entries[dirname_of(real)] = Entry("dir", env.uid, env.gid, 0o755)
        places.append((real, Entry("dir", env.uid, env.gid, 0o700)))
    for path, entry in places:
        if not path or not path.startswith("/"):
            continue
        parts = [p for p in normalize(path).split("/") if p]
        for depth in range(1, len(parts)):
            entries.setdefault("/" + "/".join(parts[:depth]), root_dir)
        entries.setdefault("/" + "/".join(parts), entry)
    return MemoryView(entries, links)


#: What launchd sets ``$TMPDIR`` to for a user on macOS (``confstr(_CS_DARWIN_USER_TEMP_DIR)``): one example,
#: as long as every real one (two characters, then thirty), so budgets come out right.
DARWIN_USER_TMPDIR = "/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/"
