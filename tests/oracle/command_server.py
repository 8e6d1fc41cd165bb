"""nxsock's commands, each in its own process forked from one that has imported nxsock already.

usage: python command_server.py <commands.json> <requests fifo> <answers fifo>

Started as a command would be (the same uid, clean environment and working directory), it imports every
module of nxsock once; then for each index read from the requests fifo it forks, and the child runs that
command as ``python -m nxsock`` would (``runpy``, ``sys.argv``, the interpreter's exit codes) with its own
standard input (the given text, through a pipe, or ``/dev/null``), output files and a time limit
(``SIGALRM``: reported as 124, as ``timeout`` reports it).  The answer is ``<exit code> <milliseconds>``.
What a fresh interpreter pays for its imports, hundreds of times over, is paid once; what each command does
to the disk, prints and returns is its own.
"""

import json
import os
import pkgutil
import runpy
import signal
import sys
import time
import traceback

import nxsock


def warm() -> None:
    """Every module of nxsock imported, as each command would import those it needs."""
    for module in pkgutil.walk_packages(nxsock.__path__, "nxsock."):
        if not module.name.endswith("__main__"):
            __import__(module.name)


def child(spec: dict, limit: int) -> int:
    """In the forked child: the command of *spec*, to its exit code."""
    if spec.get("stdin") is not None:
        read, write = os.pipe()
        os.write(write, spec["stdin"].encode("utf-8", "surrogateescape"))  # small: fits the pipe's buffer
        os.close(write)
    else:
        read = os.open(os.devnull, os.O_RDONLY)
    out = os.open(spec["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(spec["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for fd, target in ((read, 0), (out, 1), (err, 2)):
        os.dup2(fd, target)
        os.close(fd)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(limit)
    sys.argv = ["nxsock", *spec["args"]]
    try:
        runpy.run_module("nxsock", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:  # as the interpreter turns it into a status
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code & 0xFF
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = 120  # the interpreter's status when flushing at exit fails
    return code


def serve(commands_path: str, requests: str, answers: str) -> None:
    with open(commands_path, encoding="utf-8") as f:
        config = json.load(f)
    commands, limit = config["commands"], config["limit"]
    warm()
    sys.stdout.flush()
    with open(requests, encoding="utf-8") as incoming, open(answers, "w", encoding="utf-8") as outgoing:
        for line in incoming:
            spec = commands[int(line)]
            started = time.monotonic()
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    code = child(spec, limit)
                finally:
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            elapsed = int((time.monotonic() - started) * 1000)
            if os.WIFSIGNALED(status):  # as a shell reports it; the time limit's as ``timeout`` does
                code = 124 if os.WTERMSIG(status) == signal.SIGALRM else 128 + os.WTERMSIG(status)
            else:
                code = os.WEXITSTATUS(status)
            outgoing.write(f"{code} {elapsed}\n")
            outgoing.flush()


if __name__ == "__main__":  # imported by pytest's doctest collection, it runs nothing
    serve(*sys.argv[1:4])
