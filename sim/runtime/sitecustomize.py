"""Host boundary for simulated hooks (on their PYTHONPATH only).

The simulator plays an Ubuntu compute host with systemd; the machine it
runs on may be Debian in a container. charmhelpers asks the machine
itself three questions that must get the simulated host's answers.
"""
import os

try:
    if os.environ.get('SIM_NO_CHARMHELPERS'):
        # A benchmark's bare floor process: nothing to patch, nothing to
        # import that it would not import itself.
        raise ImportError
    import charmhelpers.osplatform as _osplatform
except ImportError:  # a process without charmhelpers: nothing to do
    _osplatform = None

if _osplatform is not None:
    # charmhelpers 1.2.1 refuses to import core.host on Debian.
    _osplatform.get_platform = lambda: 'ubuntu'
    import charmhelpers.core.host as _host

    # Service checks use systemctl (faked) on a systemd host.
    _host.init_is_systemd = lambda service_name=None: True

    _SERIES = os.environ.get('SIM_SERIES', 'jammy')
    _VERSIONS = {'bionic': '18.04', 'focal': '20.04', 'jammy': '22.04',
                 'noble': '24.04'}

    def _lsb_release():
        return {'DISTRIB_ID': 'Ubuntu',
                'DISTRIB_RELEASE': _VERSIONS.get(_SERIES, ''),
                'DISTRIB_CODENAME': _SERIES,
                'DISTRIB_DESCRIPTION': 'Ubuntu ' + _VERSIONS.get(_SERIES, '')}

    _host.lsb_release = _lsb_release


def _profile_to(path):
    """SIM_PROFILE (benchmarks): at exit, write this process's own CPU
    time, peak memory, the programs it started and the files it opened
    under /sys, as JSON. The variable
    is taken out of the environment so that Python children (a boot unit
    started from a hook) do not overwrite the hook's figures."""
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

    sys.addaudithook(audit)
    atexit.register(write)


if os.environ.get('SIM_PROFILE'):
    _profile_to(os.environ.pop('SIM_PROFILE'))
