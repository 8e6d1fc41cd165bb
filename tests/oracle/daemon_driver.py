"""nxsock's side of the daemon-verdict oracle: ``nxsock paths --json`` for every cell, in one process.

usage: python daemon_driver.py <cells.json>

Each cell's environment replaces this process's, its workspace becomes the
working directory, and the command line goes through nxsock's own entry point
(``nxsock.cli.main``), as a run would; one line per cell: ``<<<CELL <index> <json>``
with the document's ``daemon``, its ``workspace_data.daemon_dir`` and the exit
code (and, for the first cell, the whole document, for its schema).
"""

import contextlib
import io
import json
import os
import sys

from nxsock.cli import main


def main_loop(path: str) -> None:
    """Every cell of the file *path*, through nxsock's entry point; the lines printed at the end."""
    cells = json.load(open(path, encoding="utf-8"))
    base = {
        k: os.environ[k] for k in ("PATH", "HOME", "LANG", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE") if k in os.environ
    }
    lines = []
    for index, cell in enumerate(cells):
        os.environ.clear()
        os.environ.update(base)
        os.environ.update(cell["env"])
        os.chdir(cell["ws"])
        out = io.StringIO()
        code = -1
        with contextlib.redirect_stdout(out):
            try:
                main(["paths", "--json"])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else -1
        try:
            doc = json.loads(out.getvalue())
            result = {"daemon": doc["daemon"], "daemon_dir": doc["workspace_data"]["daemon_dir"], "rc": code,
                      "nx_version": doc["nx_version"]}
            if index == 0:
                result["document"] = doc
        except (ValueError, KeyError) as exc:
            result = {"error": f"{type(exc).__name__}: {exc}", "rc": code, "out": out.getvalue()[:500]}
        lines.append(f"<<<CELL {index} {json.dumps(result)}")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":  # imported by pytest's doctest collection, it runs nothing
    main_loop(sys.argv[1])
