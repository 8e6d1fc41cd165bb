"""``nx …`` and a package manager run the workspace's code: never offered where another user could have placed it."""
from __future__ import annotations

import pytest
from conftest import PEER, USER, environment, machine, mine

import nxsock.core.wording as wording
from nxsock.core.fsview import Entry
from nxsock.core.remedy import NxCommand, Policy, Remedy, RunNx, Withheld, vet
from nxsock.core.resolver import resolve

WS = "/home/ada/acme"
RUN_NX = Remedy((RunNx(NxCommand.DAEMON_START),), "x")


def _policy(owner: int, mode: int = 0o755, link_owner: int = USER) -> Policy:
    """The workspace's node_modules is a link (yours) to a cache of yours, in a directory of *owner*'s with *mode*."""
    cache = "/srv/cache/node_modules"
    view = machine({"/srv/cache": Entry("dir", owner, owner, mode), cache: mine(0o755), f"{cache}/nx": mine(0o755),
                    f"{cache}/nx/package.json": Entry("file", USER, USER, 0o644),
                    f"{WS}/node_modules": Entry("link", link_owner, link_owner, 0o777)},
                   links={f"{WS}/node_modules": cache})
    return wording.context_for(resolve(environment(), view), view).policy


def test_nx_through_a_link_of_yours_into_your_own_cache_is_offered() -> None:
    assert isinstance(vet(RUN_NX, _policy(USER)), Remedy)


@pytest.mark.parametrize(("owner", "mode"), [(PEER, 0o755), (USER, 0o777)])
def test_nx_through_a_link_into_a_cache_another_user_could_write_is_not_offered(owner: int, mode: int) -> None:
    """The link and nx are yours, but they lie in a directory another user owns (or anyone can write): they could
    rename ``node_modules`` away and put their own in its place before the paste."""
    verdict = vet(RUN_NX, _policy(owner, mode))
    assert (
        isinstance(verdict, Withheld) and "nx would run code beneath another user's level: /srv/cache" in verdict.reason
    )
