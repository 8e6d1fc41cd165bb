"""nxsock cache against a cache the real Nx filled, as a real user, in private namespaces."""
from __future__ import annotations

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

    binding = Binding("/w/node_modules/@nx/nx-linux-x64-gnu/nx.linux-x64-gnu.node", "nx.linux-x64-gnu.node", 9, 1.0,
                      "nx.linux-x64-gnu.node")
    entry = CacheEntry("/c/nx.linux-x64-gnu.node", release, "", "nx.linux-x64-gnu.node", binding.path, 9, 1000,
                       trusted=False, fresh=False, in_use=None, partial=False)
    verdict = verify(CacheListing("/c", None, binding, (entry,), None), lambda path: f"rm -- {path}", rules_for(release), release)
    assert verdict.state == "untrusted" and verdict.message.endswith(says) and verdict.remedy == "rm -- /c/nx.linux-x64-gnu.node"
