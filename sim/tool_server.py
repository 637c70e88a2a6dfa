"""The tool server: one warm process per simulation that answers every
fake tool call tool_client.c hands it, each in a fork of itself.

A call then costs a fork instead of a Python start and the fake tools'
imports, and runs exactly as the launcher would run it: the caller's
standard streams (received as descriptors), working directory, argv and
environment, and the exit status back to the caller. sim.fakebin is
imported in each fork, after the environment is in place, because its
modules read $SIM_STATE, $SIM_HOST_ROOT and $SIM_STEP when imported (so
this module lives outside that package).

Used only where a C compiler builds the client (`cc`, `gcc`); elsewhere,
and for benchmarks (whose figures count each tool's own process), every
tool name is the Python launcher. The server leaves once the simulation
that started it has gone.
"""
import hashlib
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
from typing import List, Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT_SOURCE = os.path.join(_HERE, 'tool_client.c')
_TREE = os.path.dirname(_HERE)
# The standard library sim/fakebin imports, loaded once, before any fork.
_WARM = ('copy', 'fcntl', 'fnmatch', 'json', 'subprocess')


def compiled_client(cache_dir: str) -> Optional[str]:
    """tool_client.c built once per source into cache_dir; None where this
    machine has no C compiler or it failed."""
    compiler = shutil.which('cc') or shutil.which('gcc')
    if not compiler:
        return None
    with open(CLIENT_SOURCE, 'rb') as stream:
        digest = hashlib.sha256(stream.read()).hexdigest()[:12]
    program = os.path.join(cache_dir, 'fake-tool-client-' + digest)
    if os.access(program, os.X_OK):
        return program
    os.makedirs(cache_dir, exist_ok=True)
    building = '{}.{}.tmp'.format(program, os.getpid())
    done = subprocess.run([compiler, '-O2', '-o', building, CLIENT_SOURCE],
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    if done.returncode:
        return None
    os.replace(building, program)
    return program


class ToolServer:
    """A running server for one simulation (start, stop)."""

    def __init__(self, python: str, socket_path: str,
                 environment: dict) -> None:
        self.socket_path = socket_path
        self._process = subprocess.Popen(
            [python, '-IS', '-c',
             'import sys; sys.path.insert(0, {!r}); '
             'from sim.tool_server import serve; '
             'serve({!r})'.format(_TREE, socket_path)],
            stdin=subprocess.DEVNULL, env=environment)
        deadline = time.monotonic() + 30
        while not os.path.exists(socket_path):
            if self._process.poll() is not None or \
                    time.monotonic() > deadline:
                raise RuntimeError('the fake tool server did not start')
            time.sleep(0.005)

    def stop(self) -> None:
        self._process.terminate()
        self._process.wait()


def serve(socket_path: str) -> None:
    """Accept calls until the simulation that started this has gone."""
    import signal
    for name in _WARM:
        __import__(name)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # forks reap themselves
    starter = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path + '.binding')
    # Any user the sandbox lets in may call (an exec step's nagios); each
    # call then runs as its caller (_answer).
    os.chmod(socket_path + '.binding', 0o777)
    os.rename(socket_path + '.binding', socket_path)
    listener.listen(64)
    listener.settimeout(1.0)
    while True:
        try:
            connection, _ = listener.accept()
        except socket.timeout:
            if os.getppid() != starter:
                return
            continue
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _answer(connection)
        connection.close()


def _answer(connection: socket.socket) -> None:
    """In a fork: take the call's streams and environment, run the tool,
    send its exit status, and leave."""
    connection.setblocking(True)
    _become_the_caller(connection)
    header, fds, _, _ = socket.recv_fds(connection, 4, 3)
    length = struct.unpack('=I', header)[0]
    payload = b''
    while len(payload) < length:
        part = connection.recv(length - len(payload))
        if not part:
            os._exit(1)
        payload += part
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    fields = [field.decode('utf-8', 'surrogateescape')
              for field in payload.split(b'\0')[:-1]]
    cwd, count = fields[0], int(fields[1])
    argv, environment = fields[2:2 + count], fields[2 + count:]
    os.environ.clear()
    os.environ.update(entry.split('=', 1) for entry in environment
                      if '=' in entry)
    os.chdir(cwd)
    if os.sep not in argv[0]:
        # As the kernel gives a script: the path its PATH search found
        # (dispatch finds the other fake tools beside it).
        argv[0] = shutil.which(argv[0], path=os.environ.get('PATH')) or \
            argv[0]
    sys.argv = argv
    code = _run(argv)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    connection.sendall(struct.pack('=i', code))
    os._exit(0)


def _become_the_caller(connection: socket.socket) -> None:
    """Run as the user who called, as the tool's own process would: an
    unprivileged caller gets no root through the server."""
    credentials = connection.getsockopt(
        socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize('3i'))
    _, uid, gid = struct.unpack('3i', credentials)
    if uid != os.geteuid():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)


def _run(argv: List[str]) -> int:
    """The tool's exit status, as its own process would have exited."""
    # A pass-through replaces the launcher's process with the real
    # program; here the fork must live on to send the status, so the
    # program runs as its child, on the same streams.
    def run_instead(path, args):
        done = subprocess.run(args, executable=path, env=os.environ)
        raise SystemExit(done.returncode if done.returncode >= 0
                         else 128 - done.returncode)
    os.execv = run_instead
    try:
        from sim.fakebin.dispatch import main
        code = main(argv)
    except SystemExit as leaving:
        code = leaving.code
    except BaseException:
        import traceback
        traceback.print_exc()
        return 1
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write('{}\n'.format(code))
    return 1
