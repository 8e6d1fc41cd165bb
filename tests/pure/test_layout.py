"""Hashes, names and generations: the vectors docs/behaviour.md#hashed-names and docs/behaviour.md#binding-cache fix."""

from __future__ import annotations

import pytest

from nxsock.core import layout


def test_hash_vectors_match_nx() -> None:
    """H8, H8 of the console discriminator and H20 with a pid, exactly as Nx spells them."""
    assert layout.short_hash(["/workspace/one"], 8) == "a030d115"
    assert layout.short_hash(["/workspace/one", "nx-console"], 8) == "2111fad3"
    assert layout.short_hash(["/workspace/one", "1234"], 20) == "e26151583e05690e0e3e"


def test_binding_cache_key_vector() -> None:
    path = "/home/ada/acme/node_modules/@nx/nx-linux-x64-gnu/nx.linux-x64-gnu.node"
    assert layout.short_hash([path], 12) == "008320a42b4e"


def test_leaves_lowercase_the_workspace_root() -> None:
    assert layout.plugin_leaf("/Workspace/One") == layout.plugin_leaf("/workspace/one") == "a030d115"
    assert layout.console_leaf("/workspace/one") == "2111fad3"


def test_undecodable_bytes_hash_as_the_replacement_character() -> None:
    """Node decodes a non-UTF-8 name with U+FFFD before hashing; so does nxsock."""
    assert layout.short_hash(["/tmp/caf\udce9"], 8) == layout.short_hash(["/tmp/caf\ufffd"], 8)


@pytest.mark.parametrize(
    ("version", "generation"),
    [("22.7.0", "legacy"), ("23.1.1", "legacy"), ("23.1.2", "ts"), ("23.3.2", "ts"), ("24.0.0-beta.1", "native"),
     ("24.0.6", "native"), ("25.1.0", "native"), (None, "native"), ("not a version", "native")],
)
def test_generation_follows_the_version(version: str | None, generation: str) -> None:
    assert layout.generation_of(version) == generation


def test_budget_counts_bytes_for_24_and_utf16_units_before() -> None:
    assert layout.path_length("/tmp/\U0001f600", "ts") == 7
    assert layout.path_length("/tmp/\U0001f600", "native") == 9
