"""reset removes only this user's dead Nx state, on real states in private namespaces."""

from __future__ import annotations

import typing as t

from documents import parsed
from harness import (
    PEER,
    USER,
    WAIT_FOR,
    WHILE_PARENT_LIVES,
    as_user_prefix,
    changed_outside,
    run_as_user,
)

from nxsock.core.layout import console_leaf, plugin_leaf

WS = f"/home/u{USER}/ws"
ROOT = f"/tmp/.nx/{USER}/sockets"
RUN = f"{ROOT}/0123456789abcdef0123"
OTHER_RUN = f"{ROOT}/fedcba9876543210fedc"
PLUGIN = f"{ROOT}/{plugin_leaf(WS)}"
CONSOLE = f"{ROOT}/{console_leaf(WS)}"
ELSEWHERE = f"{ROOT}/abcdef01"  # another workspace's plugin directory

BASE = f"""
stale() {{
  python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$1"; chown {USER} "$1"
}}
install -d -m 1777 /tmp/.nx; install -d -m 0700 -o {USER} /tmp/.nx/{USER} {ROOT}
install -d -o {USER} {WS}; echo '{{}}' > {WS}/nx.json
"""
OLD = "touch -h -d 2000-01-01"


def reset(extra: str, *args: str, post: str = "") -> t.Any:
    return run_as_user(BASE + extra, ["reset", "--json", *args], cwd=WS, post=post)


def paths(result: t.Any, key: str) -> list[str]:
    return sorted(i["path"] for i in parsed(result.stdout, "reset")[key])


def test_a_dead_per_run_directory_of_any_workspace_is_removed() -> None:
    setup = (
        f"install -d -m 0700 -o {USER} {RUN} {OTHER_RUN}; stale {RUN}/d.sock; stale "
        f"{RUN}/fp1-1.sock; {OLD} {RUN} {OTHER_RUN}"
    )
    result = reset(setup)
    assert result.returncode == 0
    assert paths(result, "removed") == sorted([OTHER_RUN, RUN])  # one stale, one holding no socket
    assert parsed(result.stdout, "reset")["freed"] > 0


def test_a_live_daemons_directory_is_never_removed() -> None:
    listener = (
        f"{as_user_prefix()} python3 -c \"import os,socket,time; s=socket.socket(socket.AF_UNIX); "
        f"s.bind('{RUN}/d.sock'); s.listen(); open('/tmp/.up', 'w').close(); "
        f"{WHILE_PARENT_LIVES}\" & {WAIT_FOR} /tmp/.up"
    )
    result = reset(f"install -d -m 0700 -o {USER} {RUN}; {listener}; {OLD} {RUN}", "--force")
    kept = parsed(result.stdout, "reset")["kept"]
    assert paths(result, "removed") == [] and kept[0]["path"] == RUN and "live" in kept[0]["reason"]


def test_a_young_directory_is_kept_unless_forced() -> None:
    setup = f"install -d -m 0700 -o {USER} {RUN}; stale {RUN}/d.sock"
    assert paths(reset(setup), "removed") == []
    assert paths(reset(setup, "--force"), "removed") == [RUN]


def test_another_users_entries_and_link_targets_are_untouched() -> None:
    """A peer's planted directory stays; a link inside a dead directory goes as a link, its target intact."""
    setup = (
        f"install -d -m 0700 -o {PEER} {OTHER_RUN}; install -d -m 0700 -o {USER} {RUN}; "
        f"echo precious > /home/precious; ln -s /home/precious {RUN}/d.sock; chown -h {USER} {RUN}/d.sock; "
        f"{OLD} {RUN} {OTHER_RUN}"
    )
    result = reset(setup, post="cat /home/precious; ls -d " + OTHER_RUN)
    assert paths(result, "removed") == [RUN]
    assert changed_outside(result.tree_before, result.tree_after, [RUN]) == []
    assert "precious" in result.post and OTHER_RUN in result.post
    assert any(k["path"] == OTHER_RUN and "not you" in k["reason"] for k in parsed(result.stdout, "reset")["kept"])


def test_this_workspaces_leaves_go_when_dead_and_other_workspaces_lose_only_stale_sockets() -> None:
    setup = (
        f"install -d -m 0700 -o {USER} {PLUGIN} {CONSOLE} {ELSEWHERE}; stale {PLUGIN}/p1-1-abcdef01.sock; "
        f"stale {ELSEWHERE}/p2-1-abcdef01.sock; {OLD} {PLUGIN} {CONSOLE} {ELSEWHERE}"
    )
    result = reset(setup, post=f"ls -d {ELSEWHERE}")
    assert paths(result, "removed") == sorted([PLUGIN, CONSOLE, f"{ELSEWHERE}/p2-1-abcdef01.sock"])
    assert changed_outside(result.tree_before, result.tree_after, paths(result, "removed")) == []
    assert ELSEWHERE in result.post


def test_the_workspace_fallback_loses_stale_sockets_not_its_logs() -> None:
    d = f"{WS}/.nx/workspace-data/d"
    setup = (
        f"install -d -m 0700 -o {USER} {d}; stale {d}/d.sock; echo log > {d}/daemon.log; chown {USER} {d}/daemon.log"
    )
    result = reset(setup, post=f"ls {d}")
    assert paths(result, "removed") == [f"{d}/d.sock"] and "daemon.log" in result.post


def test_the_daemon_marker_goes_only_when_asked_and_its_reason_is_shown() -> None:
    d = f"{WS}/.nx/workspace-data/d"
    setup = f"install -d -m 0700 -o {USER} {d}; echo 'listen EACCES' > {d}/disabled; chown {USER} {d}/disabled"
    assert paths(reset(setup), "removed") == []
    result = reset(setup, "--daemon-marker")
    assert parsed(result.stdout, "reset")["marker_reason"] == "listen EACCES" and paths(result, "removed") == [
        f"{d}/disabled"
    ]


def test_legacy_leftovers_are_removed_only_in_the_shapes_nx_made_and_only_yours() -> None:
    setup = (
        f"install -d -m 0755 -o {USER} /tmp/0123456789abcdef0123 /tmp/aaaaaaaaaaaaaaaaaaaa /tmp/bbbbbbbbbbbbbbbbbbbb; "
        f"install -d -m 0755 -o {PEER} /tmp/cccccccccccccccccccc; stale /tmp/0123456789abcdef0123/d.sock; "
        f"echo mine > /tmp/aaaaaaaaaaaaaaaaaaaa/notes; chown {USER} /tmp/aaaaaaaaaaaaaaaaaaaa/notes; "
        f"stale /tmp/plugin123-1-abcdef01.sock; install -d -o {USER} /tmp/nx-native-file-cache-abc1234; "
        f"echo x > /tmp/other.sock; chown {USER} /tmp/other.sock; "
        f"{OLD} /tmp/0123456789abcdef0123 /tmp/aaaaaaaaaaaaaaaaaaaa /tmp/bbbbbbbbbbbbbbbbbbbb"
    )
    result = reset(setup, "--legacy")
    assert changed_outside(result.tree_before, result.tree_after, paths(result, "removed")) == []
    assert paths(result, "removed") == [
        "/tmp/0123456789abcdef0123",
        "/tmp/bbbbbbbbbbbbbbbbbbbb",
        "/tmp/nx-native-file-cache-abc1234",
        "/tmp/plugin123-1-abcdef01.sock",
    ]


def test_dry_run_removes_nothing() -> None:
    setup = f"install -d -m 0700 -o {USER} {RUN}; stale {RUN}/d.sock; {OLD} {RUN}"
    result = reset(setup, "--dry-run")
    assert paths(result, "removed") == [RUN] and result.tree_before == result.tree_after


def test_ten_thousand_dead_directories_are_removed() -> None:
    """Linear work: thousands of per-run directories in one run (timed in the benchmark, not here)."""
    make = (
        f"cd {ROOT} && seq -f '%020g' 1 10000 | xargs mkdir -m 0700 && chown -R {USER} {ROOT} && "
        "touch -d 2000-01-01 *; cd /"
    )
    result = reset(make, post=f"ls {ROOT} | wc -l")
    assert len(parsed(result.stdout, "reset")["removed"]) == 10000 and result.post.strip() == "0"


def test_human_output_summarises_what_was_removed() -> None:
    setup = BASE + f"install -d -m 0700 -o {USER} {RUN}; stale {RUN}/d.sock; {OLD} {RUN}"
    result = run_as_user(setup, ["reset"], cwd=WS, env={"NO_COLOR": "1"})
    assert result.returncode == 0 and f"removed {RUN}" in result.stdout and "Removed 1 entry," in result.stdout
