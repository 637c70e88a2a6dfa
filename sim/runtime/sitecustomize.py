"""Host boundary for simulated hooks (on their PYTHONPATH only).

The simulator plays an Ubuntu compute host with systemd; the machine it
runs on may be Debian in a container. charmhelpers asks the machine
itself three questions that must get the simulated host's answers.
"""
import importlib.abc
import os
import sys

_SERIES = os.environ.get('SIM_SERIES', 'jammy')


def _report_python(path):
    """Say which Python this process runs (each step's `python`)."""
    with open(path, 'a') as stream:
        stream.write('{}.{}\n'.format(*sys.version_info[:2]))


class _Creation:
    """A stream on an mdev type's `create`: the kernel makes the vGPU as
    the UUID is written, so the process that made it sees it and can
    write its attributes next (NVIDIA's nvidia/vgpu_params): its device
    directory (under its parent, with its mdev_type) and its link in
    /sys/bus/mdev/devices are there at once; the simulator takes the
    vGPU into the host state when the process ends."""

    def __init__(self, stream, create_file, devices_dir):
        self._stream = stream
        self._type_dir = os.path.dirname(os.path.realpath(create_file))
        self._parent_dir = os.path.dirname(os.path.dirname(self._type_dir))
        self._devices_dir = devices_dir

    def write(self, data):
        text = data.decode() if isinstance(data, bytes) else data
        for uuid in text.split():
            device = os.path.join(self._parent_dir, uuid)
            os.makedirs(os.path.join(device, 'nvidia'), exist_ok=True)
            with open(os.path.join(device, 'nvidia', 'vgpu_params'), 'a'):
                pass
            with open(os.path.join(device, 'remove'), 'a'):
                pass
            if not os.path.lexists(os.path.join(device, 'mdev_type')):
                os.symlink(self._type_dir, os.path.join(device, 'mdev_type'))
            os.makedirs(self._devices_dir, exist_ok=True)
            link = os.path.join(self._devices_dir, uuid)
            if not os.path.lexists(link):
                os.symlink(device, link)
        return self._stream.write(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._stream.__exit__(*exc)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _sysfs_writes_are_events(host_root):
    """The kernel takes each write to a sysfs attribute as one event: a
    UUID written to an mdev type's `create` makes one vGPU, and opening it
    truncates nothing. A regular file opened for writing is truncated, so
    one process creating two vGPUs of a type on one parent would leave
    only the last for the simulator to collect: here such a file is
    opened to append, one write a line."""
    import builtins
    real_open = builtins.open
    sys_dir = os.path.join(host_root, 'sys') + os.sep
    devices_dir = os.path.join(sys_dir, 'bus', 'mdev', 'devices')

    def open_sysfs_aware(file, mode='r', *args, **kwargs):
        if (isinstance(file, str) and 'w' in mode and
                os.path.basename(file) == 'create' and
                os.path.abspath(file).startswith(sys_dir)):
            stream = real_open(file, mode.replace('w', 'a'), *args,
                               **kwargs)
            stream.write(b'\n' if 'b' in mode else '\n')
            return _Creation(stream, file, devices_dir)
        return real_open(file, mode, *args, **kwargs)
    builtins.open = open_sysfs_aware


if os.environ.get('SIM_HOST_ROOT'):
    _sysfs_writes_are_events(os.environ['SIM_HOST_ROOT'])
if os.environ.get('SIM_PYTHONS_SEEN'):
    _report_python(os.environ['SIM_PYTHONS_SEEN'])
_VERSIONS = {'bionic': '18.04', 'focal': '20.04', 'jammy': '22.04',
             'noble': '24.04'}


def _lsb_release():
    return {'DISTRIB_ID': 'Ubuntu',
            'DISTRIB_RELEASE': _VERSIONS.get(_SERIES, ''),
            'DISTRIB_CODENAME': _SERIES,
            'DISTRIB_DESCRIPTION': 'Ubuntu ' + _VERSIONS.get(_SERIES, '')}


def _patch_osplatform(module):
    # charmhelpers 1.2.1 refuses to import core.host on Debian.
    module.get_platform = lambda: 'ubuntu'


def _patch_host(module):
    # Service checks use systemctl (faked) on a systemd host.
    module.init_is_systemd = lambda service_name=None: True
    module.lsb_release = _lsb_release


_PATCHES = {'charmhelpers.osplatform': _patch_osplatform,
            'charmhelpers.core.host': _patch_host}


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patch those modules as they are imported, before any importer sees
    them: a process pays only for the charmhelpers it imports itself."""

    def find_spec(self, name, path, target=None):
        if name not in _PATCHES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, 'find_spec'):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _PATCHES[name](module)
        spec.loader.exec_module = exec_module
        return spec


if not os.environ.get('SIM_NO_CHARMHELPERS'):
    # (A benchmark's bare floor process gets no patch at all.)
    sys.meta_path.insert(0, _PatchOnImport())


def _profile_to(path):
    """SIM_PROFILE (benchmarks): at exit, write this process's own CPU
    time, peak memory, the programs it started and the files it opened
    under /sys, as JSON. The variable is taken out of the environment so
    that Python children (a boot unit started from a hook) do not
    overwrite the hook's figures."""
    import atexit
    import json
    import resource
    import sys

    spawned = []
    opened = []
    sys_root = os.path.join(os.environ.get('SIM_HOST_ROOT', '/'), 'sys')

    def audit(event, args):
        if event == 'open':
            if isinstance(args[0], str) and args[0].startswith(sys_root):
                opened.append(args[0])
        elif event == 'subprocess.Popen':
            spawned.append(os.path.basename(str(args[0] or args[1][0])))
        elif event in ('os.system', 'os.posix_spawn', 'os.spawn',
                       'os.fork', 'os.forkpty'):
            spawned.append(event)

    def write():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        with open(path, 'w') as stream:
            json.dump({'cpu_s': usage.ru_utime + usage.ru_stime,
                       'max_rss_kib': usage.ru_maxrss,
                       'spawned': spawned, 'opened_sys': opened}, stream)

    if hasattr(sys, 'addaudithook'):
        # Python 3.8 and later; bionic's 3.6 reports CPU and memory only.
        sys.addaudithook(audit)  # novermin (guarded)
    atexit.register(write)


if os.environ.get('SIM_PROFILE'):
    _profile_to(os.environ.pop('SIM_PROFILE'))
