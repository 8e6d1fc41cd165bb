"""Nothing read from disk becomes a path to act on: a version string is a version, never ``../..``.

Found by the red team (issue 21, findings 1 and 2).  Another uid builds a
checkout whose only content is ``nx.json`` and ``node_modules/nx/package.json``
with a ``version`` that climbs out of the binding cache; root — or the victim —
then runs ``doctor --fix --yes`` in it, in a private mount namespace with a fresh
``/tmp`` (and, for the ``/etc`` target, a private copy of ``/etc``).  The whole
tree of ``/tmp`` and ``/home`` and the fake ``/etc`` are compared before and
after: nothing changed, no remedy names the target, and neither ``--report`` nor
``--format github`` prints it.
"""
from __future__ import annotations

import json
import shlex

import pytest
from harness import PEER, USER, changed_outside, run_as_user

CHECKOUT = "/tmp/peerws"
HOME = f"/home/u{USER}"

#: A private copy of /etc over /etc, in the scenario's own mount namespace: what the attack creates lands in it.
FAKE_ETC = (
    "mount -t tmpfs -o mode=0755 tmpfs /mnt; mkdir /mnt/etc; cp -a /etc/. /mnt/etc/; mount --bind /mnt/etc /etc; "
    "find /etc -xdev -printf '%y %U %G %m %i %p\\n' | sort > /mnt/etc-before"
)
ETC_CHANGES = "find /etc -xdev -printf '%y %U %G %m %i %p\\n' | sort | diff /mnt/etc-before - && echo ETC-UNCHANGED"


def checkout(version: str, owner: int = PEER) -> str:
    """Shell, as root: a checkout of *owner* holding only ``nx.json`` and a ``package.json`` with *version*."""
    manifest = json.dumps({"name": "nx", "version": version})
    return (
        f"install -d -m 0755 -o {owner} {CHECKOUT} {CHECKOUT}/node_modules {CHECKOUT}/node_modules/nx; "
        f"echo '{{}}' > {CHECKOUT}/nx.json; printf '%s' {shlex.quote(manifest)} > "
        f"{CHECKOUT}/node_modules/nx/package.json; "
        f"chown -R {owner} {CHECKOUT}"
    )


PROVISIONED = "install -d -m 1777 -o 0 -g 0 /tmp/.nx"


def _remedies(document: dict[str, object]) -> list[str]:
    """Every command line a document offers: the findings' remedies and the plan's."""
    found = [f.get("remedy") for f in document.get("findings") or []]  # type: ignore[union-attr]
    found += [i.get("remedy") for key in ("plan", "for_you", "outcomes") for i in document.get(key) or []]  # type: ignore[union-attr]
    return [r for r in found if isinstance(r, str)]


class TestAVersionIsNeverAPath:
    def test_root_s_fix_in_a_peers_checkout_leaves_the_shared_container_1777(self) -> None:
        """Finding 1: ``"version": "../.."`` made the cache directory ``/tmp/.nx``; root's --fix chmodded it 0700."""
        setup = f"{PROVISIONED}; {checkout('../..')}"
        result = run_as_user(setup, ["doctor", "--fix", "--yes", "--json"], uid=0, cwd=CHECKOUT,
                             post="stat -c '%a %U %G' /tmp/.nx")
        assert "Traceback" not in result.stderr, result.stderr
        assert result.post.strip() == "1777 root root", (result.post, result.stdout)
        assert changed_outside(result.tree_before, result.tree_after, []) == [], result.stdout
        document = json.loads(result.stdout)
        assert [r for r in _remedies(document) if "/tmp/.nx " in r + " " and "chmod" in r] == [], document
        assert document["outcomes"] == [], document["outcomes"]

    @pytest.mark.parametrize(
        "args",
        [["doctor"], ["doctor", "--json"], ["doctor", "--report"], ["doctor", "--format", "github"]],
        ids=["text", "json", "report", "github"],
    )
    def test_no_output_offers_to_re_mode_the_shared_container(self, args: list[str]) -> None:
        """Finding 1, the printed side: no line another user could paste re-modes /tmp/.nx; the version is a finding."""
        result = run_as_user(f"{PROVISIONED}; {checkout('../..')}", args, uid=0, cwd=CHECKOUT)
        assert "Traceback" not in result.stderr, result.stderr
        out = result.stdout
        assert "chmod 0700 -- /tmp/.nx" not in out and "0700 -- /tmp/.nx\n" not in out, out
        assert "not a version" in out, out  # the invalid version is said, once, as a finding
        assert result.tree_before == result.tree_after

    def test_root_s_fix_creates_nothing_under_etc(self) -> None:
        """Finding 2: ``../../../../etc/nologin/x`` made root's --fix create /etc/nologin (no more non-root logins)."""
        setup = f"{FAKE_ETC}; {PROVISIONED}; {checkout('../../../../etc/nologin/x')}"
        result = run_as_user(setup, ["doctor", "--fix", "--yes", "--json"], uid=0, cwd=CHECKOUT, post=ETC_CHANGES)
        assert "Traceback" not in result.stderr, result.stderr
        assert "ETC-UNCHANGED" in result.post, result.post
        assert changed_outside(result.tree_before, result.tree_after, []) == [], result.stdout
        document = json.loads(result.stdout)
        assert [r for r in _remedies(document) if "/etc" in r] == [], document
        for args in (["doctor", "--report"], ["doctor", "--format", "github"]):
            shown = run_as_user(setup, args, uid=0, cwd=CHECKOUT, post=ETC_CHANGES)
            named = [line for line in shown.stdout.splitlines() if "etc/nologin" in line]
            assert len(named) == 1 and "is not a version" in named[0], shown.stdout  # the finding, quoted; no command
            assert "ETC-UNCHANGED" in shown.post, shown.post

    def test_the_victims_own_fix_does_not_make_a_directory_of_authorized_keys(self) -> None:
        """Finding 2, as the victim: a version climbing to ~/.ssh/authorized_keys made it a directory."""
        keys = f"{HOME}/.ssh/authorized_keys"
        setup = (f"{PROVISIONED}; install -d -m 0700 -o {USER} /tmp/.nx/{USER} /tmp/.nx/{USER}/native-cache "
                 f"{HOME}/.ssh; {checkout(f'../../../..{keys}/x')}")
        result = run_as_user(setup, ["doctor", "--fix", "--yes", "--json"], cwd=CHECKOUT, env={"HOME": HOME})
        assert "Traceback" not in result.stderr, result.stderr
        assert changed_outside(result.tree_before, result.tree_after, []) == [], result.stdout
        assert keys not in result.tree_after
        assert [r for r in _remedies(json.loads(result.stdout)) if ".ssh" in r] == []
