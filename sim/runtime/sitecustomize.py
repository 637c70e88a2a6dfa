"""Host boundary for simulated hooks (on their PYTHONPATH only).

The simulator plays an Ubuntu compute host with systemd; the machine it
runs on may be Debian in a container. charmhelpers asks the machine
itself three questions that must get the simulated host's answers.
"""
import os

try:
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
