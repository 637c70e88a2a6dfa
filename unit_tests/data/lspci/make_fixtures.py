"""Regenerate the lspci fixtures: python unit_tests/data/lspci/make_fixtures.py

Lays out each host of hosts.yaml as a sysfs tree with the simulator's
generator and runs the real lspci -Dmmnn over it. Names come from this
machine's pci.ids, which is why the output is committed rather than
produced at test time.
"""
import os
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))

from sim import host  # noqa: E402


def main() -> None:
    with open(os.path.join(HERE, 'hosts.yaml')) as stream:
        hosts = yaml.safe_load(stream)
    for name, functions in hosts.items():
        with tempfile.TemporaryDirectory() as root:
            host.generate_sysfs(root, functions, {})
            output = subprocess.run(
                ['lspci', '-A', 'linux-sysfs', '-O',
                 'sysfs.path={}/sys/bus/pci'.format(root), '-Dmmnn'],
                check=True, capture_output=True, text=True).stdout
        with open(os.path.join(HERE, name + '.txt'), 'w') as stream:
            stream.write(output)


if __name__ == '__main__':
    main()
