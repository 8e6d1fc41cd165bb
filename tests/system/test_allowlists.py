"""The sandbox formats' text: narrow entries, the rules each sandbox needs, limits on stderr."""
from __future__ import annotations

from conftest import environment, machine, mine

from nxsock.audit.allowlists import plan_for


def test_the_workspace_data_directory_is_allowed_where_it_exists() -> None:
    """daemon.log and server-process.json live in <workspace-data>/d: an existing data directory is the entry."""
    levels = {
        "/tmp/.nx": mine(0o1777),
        "/tmp/.nx/1000": mine(),
        "/tmp/.nx/1000/sockets": mine(),
        "/tmp/.nx/1000/native-cache": mine(),
        "/home/ada/acme/.nx": mine(0o755),
        "/home/ada/acme/.nx/workspace-data": mine(0o755),
    }
    plan = plan_for(environment(nx_version="23.3.2"), machine(levels), user_namespace=True, binds=True)
    assert "/home/ada/acme/.nx/workspace-data" in plan.write and "/home/ada/acme" not in plan.write
