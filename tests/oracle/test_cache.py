"""nxsock cache against a cache the real Nx filled, as a real user, in private namespaces."""
from __future__ import annotations

import json
import typing as t

from documents import parsed
from harness import (
    PEER,
    USER,
    WAIT_FOR,
    as_user_prefix,
    changed_outside,
    install_nx,
    run_as_user,
)

WS = f"/home/u{USER}/ws"
VERSION_DIR = f"/tmp/.nx/{USER}/native-cache/24.0.6"


def workspace_with_nx() -> str:
    """A workspace with nx@24.0.6, and one real Nx start as the user so the binding is cached."""
    nx = install_nx("24.0.6")
    return (
        f"install -d -o {USER} {WS}/node_modules; echo '{{}}' > {WS}/nx.json; "
        f"ln -s {nx}/node_modules/nx {WS}/node_modules/nx; chown -R {USER} {WS}; "
        f"cd {WS} && {as_user_prefix()} node -e \"require('nx/src/native')\"; cd /"
    )


def run(args: list[str], extra: str = "", post: str = "") -> t.Any:
    """nxsock ARGS as the user, in the workspace, after the real Nx filled the cache and *extra* ran."""
    return run_as_user(f"{workspace_with_nx()}; {extra}", args, post=post, cwd=WS)


def doc(result: t.Any) -> dict[str, t.Any]:
    return parsed(result.stdout, result.args)


def test_cache_path_names_the_version_directory() -> None:
    assert doc(run(["cache", "path", "--json"]))["dir"] == VERSION_DIR


def test_the_entry_nx_copied_is_listed_fresh_trusted_and_tied_to_its_binding() -> None:
    result = run(["cache", "list", "--json"])
    listing = doc(result)
    assert listing["dir"] == f"/tmp/.nx/{USER}/native-cache"
    (entry,) = listing["entries"]
    assert entry["binding"] == listing["binding"] and entry["binding"].endswith("/nx.linux-x64-gnu.node")
    assert (entry["version"], entry["trusted"], entry["fresh"], entry["partial"], entry["in_use"]) == (
        "24.0.6",
        True,
        True,
        False,
        False,
    )
    assert listing["total_size"] == entry["size"] > 1_000_000 and listing["reclaimable"] == {"entries": 0, "size": 0}
    assert listing["access_times"] is True and entry["last_loaded"] >= entry["copied"]  # a fresh tmpfs: relatime
    assert result.tree_before == result.tree_after


def test_verify_passes_on_the_fresh_entry() -> None:
    result = run(["cache", "verify", "--json"])
    assert result.returncode == 0 and doc(result)["state"] == "fresh"


def test_a_stale_entry_fails_verify_and_its_remedy_then_nx_make_it_fresh() -> None:
    """Backdating the copy makes it stale (mtime); the printed rm, then Nx's next start, fixes it."""
    stale = run(["cache", "verify", "--json"], extra=f"touch -d 2000-01-01 {VERSION_DIR}/*.node")
    assert stale.returncode == 1 and doc(stale)["state"] == "stale"
    remedy = doc(stale)["remedy"]
    assert remedy.startswith("rm -- ")
    fixed = run(
        ["cache", "verify", "--json"],
        extra=f"touch -d 2000-01-01 {VERSION_DIR}/*.node; {as_user_prefix()} sh -c {json.dumps(remedy)}; "
        f"cd {WS} && {as_user_prefix()} node -e \"require('nx/src/native')\"",
    )
    assert fixed.returncode == 0 and doc(fixed)["state"] == "fresh"


def test_a_group_writable_entry_is_untrusted() -> None:
    result = run(["cache", "verify", "--json"], extra=f"chmod g+w {VERSION_DIR}/*.node")
    assert result.returncode == 1 and doc(result)["state"] == "untrusted"
    assert doc(result)["message"].endswith("Nx re-copies it before loading it.")  # 24.0.6 checks the entry itself


def test_a_missing_entry_fails_verify() -> None:
    result = run(["cache", "verify"], extra=f"rm {VERSION_DIR}/*.node")
    assert result.returncode == 1 and "missing" in result.stdout


HOSTILE = (
    f"install -d -m 0700 -o {USER} /tmp/.nx/{USER}/native-cache/23.3.2; "
    f"echo old > /tmp/.nx/{USER}/native-cache/23.3.2/23.3.2-0123456789ab-nx.linux-x64-gnu.node; "
    f"chown -R {USER} /tmp/.nx/{USER}/native-cache/23.3.2; "
    f"echo half > {VERSION_DIR}/24.0.6-0123456789ab-0.123456789nx.linux-x64-gnu.node; "
    f"echo precious > /home/precious; "
    f"ln -s /home/precious {VERSION_DIR}/24.0.6-abcdefabcdef-nx.linux-x64-gnu.node; "
    f"echo theirs > {VERSION_DIR}/22.0.0-fedcbafedcba-nx.linux-x64-gnu.node; "
    f"chown {USER} {VERSION_DIR}/*0.123456789nx*; chown -h {USER} "
    f"{VERSION_DIR}/24.0.6-abcdefabcdef-nx.linux-x64-gnu.node; "
    f"chown {PEER} {VERSION_DIR}/22.0.0-fedcbafedcba-nx.linux-x64-gnu.node"
)


def test_prune_removes_partials_and_untrusted_and_nothing_else() -> None:
    """A link is removed as a link; a peer's entry, the fresh entry and another checkout's entry stay.

    ``23.3.2-0123456789ab-…`` is keyed by a binding path that is not this
    checkout's: another checkout's current entry, as far as anyone can tell.
    """
    result = run(
        ["cache", "prune", "--json"],
        extra=HOSTILE,
        post=f"cat /home/precious; ls {VERSION_DIR} /tmp/.nx/{USER}/native-cache/23.3.2",
    )
    report = doc(result)
    gone = [r["path"] for r in report["removed"]]
    assert changed_outside(result.tree_before, result.tree_after, gone) == []
    removed = sorted(r["path"].rsplit("/", 1)[-1] for r in report["removed"])
    assert removed == [
        "24.0.6-0123456789ab-0.123456789nx.linux-x64-gnu.node",
        "24.0.6-abcdefabcdef-nx.linux-x64-gnu.node",
    ]
    assert result.returncode == 0 and report["freed"] > 0
    assert "precious" in result.post
    assert "22.0.0-fedcbafedcba-nx.linux-x64-gnu.node" in result.post  # the peer's stays
    assert "23.3.2-0123456789ab-nx.linux-x64-gnu.node" in result.post  # another checkout's stays


def test_prune_dry_run_changes_nothing() -> None:
    result = run(["cache", "prune", "--dry-run"], extra=HOSTILE)
    assert result.returncode == 0 and "Would remove 2 entries" in result.stdout
    assert result.tree_before == result.tree_after


def test_an_entry_in_use_is_kept() -> None:
    """A process of the user's that maps an interrupted copy keeps it from being pruned.

    The mapper holds it until the scenario's last step kills it: no window of time for nxsock to run in.
    """
    partial = f"{VERSION_DIR}/24.0.6-0123456789ab-0.5nx.linux-x64-gnu.node"
    mapper = (
        f"{as_user_prefix()} python3 -c \"import mmap,time; f=open('{partial}','rb'); "
        "m=mmap.mmap(f.fileno(),0,prot=mmap.PROT_READ); "
        f"open('/tmp/.up', 'w').close(); time.sleep(600)\" >/dev/null 2>&1 & mapper=$!;"
    )
    result = run(
        ["cache", "prune", "--json"],
        extra=f"echo data > {partial}; chown {USER} {partial}; {mapper} {WAIT_FOR} /tmp/.up",
        post="kill $mapper",
    )
    assert doc(result)["removed"] == []


def _checkout(name: str) -> str:
    """A checkout of its own under the user's home, with a real copy of nx and its binding (its own binding path,
    hence its own cache key), and one real Nx start in it as the user."""
    nx = install_nx("24.0.6") / "node_modules"
    ws = f"/home/u{USER}/{name}"
    return (f"install -d -o {USER} {ws}/node_modules/@nx; echo '{{}}' > {ws}/nx.json; "
            f"cp -a {nx}/nx {ws}/node_modules/nx; cp -a {nx}/@nx/nx-linux-x64-gnu {ws}/node_modules/@nx/; "
            f"for dep in {nx}/*; do [ -e {ws}/node_modules/${{dep##*/}} ] || ln -s $dep {ws}/node_modules/; done; "
            f"chown -R {USER} {ws}; cd {ws} && {as_user_prefix()} node -e \"require('nx/src/native')\"; cd /; ")


UNUSED_STATE = (
    # a checkout deleted long ago: its entry, last loaded 40 days ago, stays behind
    _checkout("gone")
    + f"rm -rf /home/u{USER}/gone; "
    # a checkout whose Nx has its entry loaded right now, last loaded (before that) 40 days ago
    + _checkout("busy")
    + f"(cd /home/u{USER}/busy && exec {as_user_prefix()} node -e \"require('nx/src/native'); "
      "require('fs').writeFileSync('/tmp/.up', ''); "
    f"setTimeout(() => {{}}, 600000)\" >/dev/null 2>&1) & holder=$!; {WAIT_FOR} /tmp/.up; "
    # a peer's entry, as old
    + f"echo theirs > {VERSION_DIR}/24.0.6-fedcbafedcba-nx.linux-x64-gnu.node; chown {PEER} "
      f"{VERSION_DIR}/24.0.6-fedcbafedcba-*; "
    # every entry last loaded 40 days ago, this checkout's own included
    + f"touch -a -d '40 days ago' {VERSION_DIR}/*.node"
)


def test_unused_for_reclaims_a_deleted_checkouts_entry_and_keeps_the_busy_the_peers_and_the_installed() -> None:
    """On a cache the real Nx filled from three checkouts: only the deleted checkout's entry goes; Nx then works."""
    dry = run(["cache", "prune", "--dry-run", "--json", "--unused-for", "30d"], extra=UNUSED_STATE,
              post=f"kill $holder; ls {VERSION_DIR}")
    planned = doc(dry)
    assert dry.returncode == 0 and dry.tree_before == dry.tree_after and planned["dry_run"] is True
    assert [r["reason"] for r in planned["removed"]] == ["not loaded for 40 days"]
    assert dry.post.count(".node") == 4  # this checkout's, the deleted one's, the busy one's, the peer's
    result = run(
        ["cache", "prune", "--json", "--unused-for", "30d"],
        extra=UNUSED_STATE,
        post=f"kill $holder; ls {VERSION_DIR}; cd {WS} && {as_user_prefix()} node -e "
             "\"require('nx/src/native')\" && echo NX-WORKS",
    )
    report = doc(result)
    assert result.returncode == 0 and report["judged_by"] == "atime" and report["unused_for"] == 30 * 86400
    (removed,) = report["removed"]
    assert removed["reason"] == "not loaded for 40 days" and removed["freed"] > 1_000_000
    assert changed_outside(result.tree_before, result.tree_after, [removed["path"]]) == []
    assert removed["path"] == planned["removed"][0]["path"]
    assert result.post.count(".node") == 3 and removed["path"].rsplit("/", 1)[1] not in result.post  # the rest stay
    assert "NX-WORKS" in result.post
