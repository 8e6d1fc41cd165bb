"""nxsock's side of a conformance batch: ``python -m nxsock`` for many states, one forked process each.

usage: python nxsock_server.py [module …]   (as the state's uid, from ``/``; see ``batch_driver.py``)

The interpreter starts and imports nxsock (and the modules named) once; it then calls nothing of nxsock's
itself. Each request, one line on stdin — ``{"cwd": <hex bytes>, "env": {...}, "args": [...], "stdout":
"pipe" | "null"}`` — is run by a child forked from that untouched process: it takes the request's
environment and working directory, ``/dev/null`` as stdin, and runs ``python -m nxsock ARGS`` as the
interpreter would (:func:`runpy.run_module`), so no cache or state of one run can reach the next. The answer,
one line on descriptor 3: ``{"stdout", "stderr", "rc"}``.
"""

import importlib
import json
import os
import runpy
import selectors
import sys
import traceback


def _run_child(request: dict, out_w: int, err_w: int) -> None:
    """In the forked child: become the run the request describes, then exit with nxsock's code."""
    code = 70
    try:
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(out_w if request.get("stdout", "pipe") == "pipe" else null, 1)
        os.dup2(err_w, 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the requests and answers are the server's, not the run's
        os.chdir(bytes.fromhex(request["cwd"]))
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[0] = os.getcwd()  # what ``python -m`` puts first: the directory it was started in
        sys.argv = ["-m", *request["args"]]
        try:
            runpy.run_module("nxsock", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = (exc.code or 0) & 0xFF
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except Exception:
                code = 120
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


def _answer(request: dict) -> dict:
    """Fork one child for *request*; what it wrote on stdout and stderr, and its exit code."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        os.close(err_r)
        _run_child(request, out_w, err_w)
    os.close(out_w)
    os.close(err_w)
    collected = {out_r: bytearray(), err_r: bytearray()}
    with selectors.DefaultSelector() as selector:
        for fd in collected:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            for key, _ in selector.select():
                data = os.read(key.fd, 65536)
                if data:
                    collected[key.fd] += data
                else:
                    selector.unregister(key.fd)
                    os.close(key.fd)
    status = os.waitpid(pid, 0)[1]
    rc = os.waitstatus_to_exitcode(status)
    rc = 128 - rc if rc < 0 else rc  # killed by a signal: as a shell reports it
    return {"stdout": collected[out_r].decode("utf-8", "surrogateescape"),
            "stderr": collected[err_r].decode("utf-8", "surrogateescape"), "rc": rc}


def serve(modules: list[str]) -> None:
    """Import nxsock and *modules*, then answer every request line of stdin until it closes."""
    importlib.import_module("nxsock.cli")
    for name in modules:
        importlib.import_module(name)
    requests = os.fdopen(os.dup(0), "rb")  # one request at a time: nothing is read ahead
    while True:
        line = requests.readline()
        if not line:
            return
        answer = json.dumps(_answer(json.loads(line))) + "\n"
        data = answer.encode()
        while data:
            data = data[os.write(3, data):]


if __name__ == "__main__":
    serve(sys.argv[1:])
