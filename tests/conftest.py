"""Shared fixtures: a CliRunner and small in-memory machines for the pure tests."""

from __future__ import annotations

import typing as t

import pytest
from click.testing import CliRunner
from documents import Runner

from nxsock.core.environment import Environment, Variable
from nxsock.core.fsview import Entry, MemoryView

USER = 1000
PEER = 1001

ROOT_DIR = Entry("dir", 0, 0, 0o755)
STICKY = Entry("dir", 0, 0, 0o1777)


def mine(mode: int = 0o700, uid: int = USER) -> Entry:
    return Entry("dir", uid, uid, mode)


def machine(extra: t.Mapping[str, Entry] = {}, links: t.Mapping[str, str] = {}, **kwargs: t.Any) -> MemoryView:
    """A fresh Linux machine with /home/ada and the workspace /home/ada/acme, plus *extra*."""
    entries = {
        "/": ROOT_DIR,
        "/tmp": STICKY,
        "/home": ROOT_DIR,
        "/home/ada": mine(0o755),
        "/home/ada/acme": mine(0o755),
        "/home/ada/acme/nx.json": Entry("file", USER, USER, 0o644),
    }
    entries.update(extra)
    for path in [*entries, *links, *kwargs.get("files", {})]:
        parent = path.rsplit("/", 1)[0]
        while parent and parent not in entries:
            entries[parent] = ROOT_DIR
            parent = parent.rsplit("/", 1)[0]
    return MemoryView(entries, links, **kwargs)


def environment(variables: t.Mapping[str, str | None] = {}, **fields: t.Any) -> Environment:
    """Ada, uid 1000, in /home/ada/acme with Nx 24.0.6, unless told otherwise."""
    values = {"HOME": "/home/ada"}
    values.update(variables)  # type: ignore[arg-type]
    base = {
        "platform": "linux",
        "uid": USER,
        "gid": USER,
        "groups": (),
        "username": "ada",
        "passwd_home": "/home/ada",
        "cwd": "/home/ada/acme",
        "workspace_root": "/home/ada/acme",
        "workspace_source": "nx.json",
        "nx_version": "24.0.6",
        "nx_version_source": "installed",
        "variables": {k: Variable(v, "environment") for k, v in values.items() if v is not None},
    }
    base.update(fields)
    return Environment(**base)


@pytest.fixture
def runner() -> CliRunner:
    """Click's runner; each ``--json`` document it produces is checked against its published schema."""
    return Runner()
