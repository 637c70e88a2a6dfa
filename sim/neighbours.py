"""What the charms related to this unit on the same machine installed
before it joined them: a scenario that relates a subordinate gets its
packages, directories and services on the simulated host.

- nrpe-external-master: charm-nrpe installs nagios-nrpe-server and makes
  /etc/nagios/nrpe.d, /usr/local/lib/nagios/plugins and
  /var/lib/nagios/export (canonical/charm-nrpe, hooks/nrpe_utils.py);
  its service runs.
"""
import os
from typing import Any, Dict, Iterable

NRPE_PACKAGE = ('nagios-nrpe-server', '4.0.3-1ubuntu2')
NRPE_DIRECTORIES = ('etc/nagios/nrpe.d', 'usr/local/lib/nagios/plugins',
                    'var/lib/nagios/export')


def install(host_root: str, host: Dict[str, Any],
            relations: Iterable[str]) -> None:
    """Lay out what the related subordinates installed."""
    if 'nrpe-external-master' in relations:
        name, version = NRPE_PACKAGE
        host['packages'].setdefault(name, version)
        host['services'][name] = {'active': True, 'enabled': True,
                                  'masked': False}
        for directory in NRPE_DIRECTORIES:
            os.makedirs(os.path.join(host_root, directory), exist_ok=True)
