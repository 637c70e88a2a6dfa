"""What every fake tool shares: the JSON state file ($SIM_STATE), locked
for one call and written back (with dpkg's database file, which follows
the simulated packages), the record of calls ($SIM_COMMANDS), and the
small helpers the tools answer with."""
import fcntl
import json
import os
import sys

STATE = os.environ.get('SIM_STATE', '')
HOST_ROOT = os.environ.get('SIM_HOST_ROOT', '')
# The index of the scenario step this process runs in (guest disruptions
# name it).
STEP = int(os.environ.get('SIM_STEP') or 0)
# This command as it was called (main sets it): disruptions name it.
COMMAND = []


class Exit(Exception):
    """Stop the tool with this exit code (and optional stderr text)."""

    def __init__(self, code, message=''):
        super().__init__(message)
        self.code = code
        self.message = message


class State:
    """The shared JSON state, locked for the duration of one tool call."""

    def __enter__(self):
        self._lock = open(STATE + '.lock', 'w')
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        with open(STATE) as stream:
            self.data = json.load(stream)
        self._packages = dict(self.data['host']['packages'])
        return self.data

    def __exit__(self, *exc):
        if exc[0] is None:
            if self.data['host']['packages'] != self._packages:
                write_dpkg_status(HOST_ROOT, self.data['host']['packages'])
            tmp = STATE + '.tmp'
            with open(tmp, 'w') as stream:
                json.dump(self.data, stream, indent=1, sort_keys=True)
            os.replace(tmp, STATE)
        fcntl.flock(self._lock, fcntl.LOCK_UN)
        self._lock.close()
        return False


def write_dpkg_status(host_root, packages):
    """dpkg's database file, rewritten (a new file, as dpkg does) only
    when the installed packages change, so that its stamp tells the
    charm whether anything changed."""
    text = ''.join('Package: {}\nStatus: install ok installed\n'
                   'Version: {}\n\n'.format(name, version)
                   for name, version in sorted(packages.items()))
    path = os.path.join(host_root, 'var', 'lib', 'dpkg', 'status')
    try:
        with open(path) as stream:
            if stream.read() == text:
                return
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + '-new', 'w') as stream:
        stream.write(text)
    os.replace(path + '-new', path)


def record(kind, argv):
    with open(os.environ['SIM_COMMANDS'], 'a') as stream:
        stream.write(json.dumps({'kind': kind, 'argv': argv}) + '\n')


def out(value):
    sys.stdout.write(json.dumps(value))
    sys.stdout.write('\n')


def parse(argv, flags_with_value=(), flags=()):
    """A small getopt: returns ({flag: value or True}, positionals)."""
    opts, args = {}, []
    items = list(argv)
    while items:
        item = items.pop(0)
        name, eq, inline = item.partition('=')
        if name in flags_with_value:
            opts[name] = inline if eq else (items.pop(0) if items else '')
        elif item in flags:
            opts[item] = True
        else:
            args.append(item)
    return opts, args
