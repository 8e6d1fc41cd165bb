"""nxsock cache against a cache the real Nx filled, as a real user, in private namespaces."""
from __future__ import annotations

import typing as t

import pytest


@pytest.mark.parametrize(("release", "says"), [
    ("24.0.6", "Nx re-copies it before loading it."),
    ("24.0.5", "Nx 24.0.5 loads it as it is: whoever can write it chooses the code Nx runs."),
    ("23.3.2", "Nx 23.3.2 loads it as it is: whoever can write it chooses the code Nx runs."),
])
def test_an_untrusted_entry_says_what_this_release_does_with_it(release: str, says: str) -> None:
    """The release table's ``cache_entry_trust_checked``: only 24.0.6 re-copies an entry it may not trust."""
    from nxsock.audit.binding_cache import Binding, CacheEntry, CacheListing, verify
    from nxsock.core.releases import rules_for
    from nxsock.core.remedy import Remedy, Remove
    from nxsock.core.wording import Advice
    from nxsock.output.paths_json import fix_line

    binding = Binding("/w/node_modules/@nx/nx-linux-x64-gnu/nx.linux-x64-gnu.node", "nx.linux-x64-gnu.node", 9, 1.0,
                      "nx.linux-x64-gnu.node")
    entry = CacheEntry("/c/nx.linux-x64-gnu.node", release, "", "nx.linux-x64-gnu.node", binding.path, 9, 1000,
                       trusted=False, fresh=False, in_use=None, partial=False)
    verdict = verify(CacheListing("/c", None, binding, (entry,), None),
                     lambda path: Advice(Remedy((Remove(path),), ""), None), rules_for(release), release)
    assert (
        verdict.state == "untrusted"
        and verdict.message.endswith(says)
        and fix_line(verdict.advice) == "rm -- /c/nx.linux-x64-gnu.node"
    )


DAY = 86400.0
NOW = 1_800_000_000.0
BINDING_PATH = "/w/node_modules/@nx/nx-linux-x64-gnu/nx.linux-x64-gnu.node"


def _listing(*entries: t.Any, access_times: bool | None = True) -> t.Any:
    from nxsock.audit.binding_cache import Binding, CacheListing
    from nxsock.core.layout import short_hash

    name = f"24.0.6-{short_hash([BINDING_PATH], 12)}-nx.linux-x64-gnu.node"
    binding = Binding(BINDING_PATH, "nx.linux-x64-gnu.node", 9, NOW - 90 * DAY, name)
    return CacheListing("/c", None, binding, entries, None, access_times)


def _entry(name: str, *, uid: int = 1000, loaded_days_ago: float, copied_days_ago: float = 100.0,
           in_use: bool | None = False, fresh: bool | None = None, binding: str | None = None) -> t.Any:
    from nxsock.audit.binding_cache import CacheEntry

    version, key_hash = name.split("-")[:2]
    return CacheEntry(f"/c/{version}/{name}", version, key_hash, "nx.linux-x64-gnu.node", binding, 9, uid, trusted=True,
                      fresh=fresh, in_use=in_use, partial=False, mtime=NOW - copied_days_ago * DAY,
                      atime=NOW - loaded_days_ago * DAY)


def _mine() -> str:
    from nxsock.core.layout import short_hash

    return f"24.0.6-{short_hash([BINDING_PATH], 12)}-nx.linux-x64-gnu.node"


@pytest.mark.parametrize(("text", "seconds"), [
    ("30d", 30 * DAY), ("12h", 43200.0), ("2w", 14 * DAY), ("90m", 5400.0), ("45s", 45.0), ("1d12h", 1.5 * DAY),
    ("3x", None), ("", None), ("d", None), ("-1d", None), ("1.5d", None), ("30 d", None), ("30D", None),
    ("9" * 12 + "d", None),
])
def test_a_duration_is_numbers_and_units_and_nothing_else(text: str, seconds: float | None) -> None:
    from nxsock.audit.binding_cache import parse_duration

    assert parse_duration(text) == seconds


def test_unused_for_takes_another_checkouts_old_entry_and_keeps_what_is_recent_in_use_or_theirs() -> None:
    """The entry of a checkout deleted long ago goes; a recent one, one in use, a peer's and the installed one stay."""
    from nxsock.audit.binding_cache import Unused, prune_plan

    old = _entry("24.0.6-0123456789ab-nx.linux-x64-gnu.node", loaded_days_ago=40)
    recent = _entry("24.0.6-abcdefabcdef-nx.linux-x64-gnu.node", loaded_days_ago=2)
    in_use = _entry("24.0.6-aaaaaaaaaaaa-nx.linux-x64-gnu.node", loaded_days_ago=40, in_use=True)
    unknown = _entry("24.0.6-bbbbbbbbbbbb-nx.linux-x64-gnu.node", loaded_days_ago=40, in_use=None)
    theirs = _entry("24.0.6-cccccccccccc-nx.linux-x64-gnu.node", loaded_days_ago=40, uid=1001)
    mine = _entry(_mine(), loaded_days_ago=40, fresh=True, binding=BINDING_PATH)
    listing = _listing(old, recent, in_use, unknown, theirs, mine)
    assert prune_plan(listing, "24.0.6", 1000) == []  # without it, another checkout's entries stay
    plan = prune_plan(listing, "24.0.6", 1000, Unused(30 * DAY, NOW))
    assert plan == [(old, "not loaded for 40 days")]


def test_without_access_times_unused_is_judged_by_the_copy_and_says_so() -> None:
    from nxsock.audit.binding_cache import Unused, prune_plan

    loaded_yesterday_copied_long_ago = _entry(
        "24.0.6-0123456789ab-nx.linux-x64-gnu.node", loaded_days_ago=1, copied_days_ago=45
    )
    listing = _listing(loaded_yesterday_copied_long_ago, access_times=False)
    assert listing.judged_by == "mtime"
    assert prune_plan(listing, "24.0.6", 1000, Unused(30 * DAY, NOW)) == [
        (loaded_yesterday_copied_long_ago, "copied 45 days ago (this mount records no load times)")]
    assert prune_plan(_listing(loaded_yesterday_copied_long_ago), "24.0.6", 1000, Unused(30 * DAY, NOW)) == []


@pytest.mark.parametrize(("options", "recorded"), [
    ("rw,relatime", True), ("rw,noatime", False), ("ro,relatime", False), ("rw,strictatime", True),
])
def test_the_mount_says_whether_loads_are_recorded(options: str, recorded: bool) -> None:
    from nxsock.core.mounts import mount_of, parse_mountinfo

    table = f"30 1 0:27 / /tmp {options} shared:1 - tmpfs tmpfs rw\n"
    mount = mount_of(parse_mountinfo(table), "/tmp/.nx/1000/native-cache")
    assert mount is not None and mount.records_access_times is recorded


def test_the_listing_document_gives_the_total_and_what_prune_reclaims() -> None:
    from documents import checked

    from nxsock.output.report import cache_list_document

    old = _entry("23.3.2-0123456789ab-nx.linux-x64-gnu.node", loaded_days_ago=40)
    document = cache_list_document(
        _listing(old, _entry(_mine(), loaded_days_ago=1, fresh=True)), [(old, "version 23.3.2")]
    )
    checked(document, "cache-list")
    assert (document["total_size"], document["reclaimable"], document["access_times"]) == (
        18,
        {"entries": 1, "size": 9},
        True,
    )
    assert document["entries"][0]["last_loaded"] == NOW - 40 * DAY


_MOUNTS = ("20 1 0:20 / / rw,relatime - ext4 /dev/vda rw\n"
           "30 20 0:27 / /tmp rw,nosuid,noexec,relatime - tmpfs tmpfs rw\n"
           "31 20 0:28 / /mnt/ro rw,noexec - ext4 /dev/vdb rw\n")
_TMP_CACHE, _HOME_CACHE = "/tmp/.nx/1000/native-cache/24.0.6", "/home/u/.nx/native-cache/24.0.6"
_BINDING, _NOEXEC_BINDING = "/home/u/ws/node_modules/@nx/nx-linux-x64-gnu/nx.linux-x64-gnu.node", "/mnt/ro/nm/nx.node"


@pytest.mark.parametrize(("release", "cache", "bypassed", "binding", "state"), [
    ("24.0.2", _TMP_CACHE, False, _BINDING, "cache-noexec"),  # every command fails
    ("23.1.1", "/tmp/nx-native-file-cache-abc", False, _BINDING, "cache-noexec"),
    ("24.0.5", _TMP_CACHE, False, _BINDING, "cache-noexec-falls-back"),  # loads in place
    ("24.0.6", _TMP_CACHE, False, _NOEXEC_BINDING, "binding-noexec"),  # ... where it fails too
    ("24.0.2", _TMP_CACHE, True, _BINDING, "ok"),  # NX_SKIP_NATIVE_FILE_CACHE: in place, an exec mount
    ("24.0.2", _TMP_CACHE, True, _NOEXEC_BINDING, "binding-noexec"),
    ("24.0.2", _HOME_CACHE, False, _NOEXEC_BINDING, "ok"),  # its copy loads from an exec mount
    ("24.0.6", _HOME_CACHE, False, _BINDING, "ok"),
])
def test_where_nx_loads_its_binding_from_and_whether_the_mount_lets_it(
        release: str, cache: str, bypassed: bool, binding: str, state: str) -> None:
    from nxsock.audit.binding_cache import loadability
    from nxsock.core.mounts import parse_mountinfo
    from nxsock.core.releases import rules_for

    assert loadability(rules_for(release), cache, bypassed, binding, parse_mountinfo(_MOUNTS)).state == state
