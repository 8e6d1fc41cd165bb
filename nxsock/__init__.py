"""nxsock: where Nx puts its runtime sockets and native binding cache, why, and how to fix it.

The resolver (:mod:`nxsock.core.resolver`) is the library; the commands are thin
layers over it.  ``__version__`` is read from package metadata on first use,
so importing nxsock stays cheap.
"""

from __future__ import annotations

import typing as t

__all__ = ["__version__"]


def __getattr__(name: str) -> t.Any:
    if name == "__version__":
        from importlib.metadata import version

        return version("nxsock")
    raise AttributeError(name)
