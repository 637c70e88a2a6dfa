"""Commands kept inside the sandbox (touch, virtualenv) or refused (nc)."""
import os
import subprocess

from sim.fakebin.state import HOST_ROOT, Exit, parse


def cmd_touch(state, argv):
    """Marker files (exec.d scripts use them): relative paths land in the
    hook's working directory (the charm dir), absolute ones in the host
    root; never on the machine running the simulator."""
    for name in argv:
        if name.startswith('-'):
            continue
        path = (HOST_ROOT + name if os.path.isabs(name)
                else os.path.abspath(name))
        if not path.startswith(HOST_ROOT + os.sep):
            raise Exit(1, 'touch: {} is outside the simulated host\n'.format(
                name))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, 'a').close()


def cmd_virtualenv(state, argv):
    """The host's virtualenv, which a built charm's layer:basic runs to
    rebuild its venv on upgrade-charm: a venv of the simulator's
    interpreter (the one the built charm's first venv was made with),
    inside the sandbox only."""
    opts, args = parse(argv, (), ('--never-download', '-ppython3',
                                  '--system-site-packages'))
    if len(args) != 1:
        raise Exit(2, 'virtualenv: give one destination\n')
    target = os.path.abspath(args[0])
    if not target.startswith(HOST_ROOT + os.sep):
        raise Exit(1, 'virtualenv: {} is outside the simulated host\n'
                   .format(args[0]))
    command = [os.environ['SIM_PYTHON'], '-m', 'venv', target]
    if '--system-site-packages' in opts:
        command.append('--system-site-packages')
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise Exit(done.returncode, done.stderr)


def cmd_nc(state, argv):
    raise Exit(1)
