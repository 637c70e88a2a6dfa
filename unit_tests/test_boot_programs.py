"""The programs the host runs outside the charm's venv need only the
standard library of the host's own python3.

The boot units run `/usr/bin/python3 -m ...` with the charm's lib/ on
PYTHONPATH and nothing else (the restore unit, the MIG units), and NRPE
runs the check program copied alone to the host. The venv's packages
(charmhelpers, PyYAML, ...) are not there, and at boot nothing may be
missing. So each program is imported by this test's interpreter under
`-I -S` (no site-packages, no user site, no PYTHONPATH) with only
src/lib on sys.path, where any third-party import fails outright; and
what it then loaded is checked: the standard library and, for the boot
units, the modules of ours listed here (a change to a list is a change
to what every host's boot runs: review it).
"""
import json
import os
import re
import subprocess
import sys

import pytest

from nvidia_vgpu.driver import mig_boot, restore

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(REPO, 'src', 'lib')
# NRPE's check program, as a file (monitoring/nrpe.py copies it alone).
NAGIOS_CHECK = 'src/lib/nvidia_vgpu/monitoring/nagios_check.py'
UNIT_PROGRAM = re.compile(r'^ExecStart=/usr/bin/python3 -m (\S+)',
                          re.MULTILINE)

# What every boot program loads: the host's records (and the names they
# are checked against) and file access, and the unit templates the
# programs' modules render from.
_BOOT = ('nvidia_vgpu', 'nvidia_vgpu.driver', 'nvidia_vgpu.host',
         'nvidia_vgpu.host.boot_records', 'nvidia_vgpu.host.hostfs',
         'nvidia_vgpu.host.templates', 'nvidia_vgpu.model',
         'nvidia_vgpu.names')
# Program -> the modules of ours it loads.
CLOSURES = {
    'nvidia_vgpu.restore': sorted(_BOOT + (
        'nvidia_vgpu.restore', 'nvidia_vgpu.driver.restore',
        'nvidia_vgpu.driver.restore_plan', 'nvidia_vgpu.host.libvirt',
        'nvidia_vgpu.host.sysfs',
        # mixed-size mode: nvidia-smi's -q read, and -shm set
        'nvidia_vgpu.host.bounded', 'nvidia_vgpu.host.mig',
        'nvidia_vgpu.host.mixed_size', 'nvidia_vgpu.host.nvidia_smi',
        'nvidia_vgpu.host.supported_types')),
    'nvidia_vgpu.driver.mig_boot': sorted(_BOOT + (
        'nvidia_vgpu.driver.mig_boot', 'nvidia_vgpu.host.bounded',
        'nvidia_vgpu.host.mig', 'nvidia_vgpu.host.nvidia_smi',
        # sysfs: a VF typed for no guest is cleared before its GPU's
        # instances go (vendor-specific VFIO)
        'nvidia_vgpu.host.sysfs', 'nvidia_vgpu.mig',
        'nvidia_vgpu.mig.instances')),
    # Copied alone to the host: none of ours at all.
    NAGIOS_CHECK: [],
}
# Run by the probe: import the program (a module from lib, or a file on
# its own), then sort what is loaded into ours and the rest, the rest by
# where it lives. Prints one JSON document.
PROBE = r'''
import importlib, importlib.util, json, os, sys
lib, program = sys.argv[1], sys.argv[2]
if program.endswith('.py'):
    spec = importlib.util.spec_from_file_location('program', program)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
else:
    sys.path.insert(0, lib)
    importlib.import_module(program)
loaded = dict(sys.modules)
import sysconfig
stdlib = tuple(os.path.realpath(sysconfig.get_paths()[key]) + os.sep
               for key in ('stdlib', 'platstdlib'))
ours = os.path.realpath(os.path.join(lib, 'nvidia_vgpu')) + os.sep
report = {'ours': [], 'outside': [], 'flags': [sys.flags.isolated,
                                              sys.flags.no_site],
          'top': sorted({name.split('.')[0] for name in loaded})}
for name, module in sorted(loaded.items()):
    path = getattr(module, '__file__', None)
    where = os.path.realpath(path) if path else None
    if name == 'nvidia_vgpu' or name.startswith('nvidia_vgpu.'):
        report['ours'].append(name)
        if not (where or '').startswith(ours):
            report['outside'].append([name, where])
    elif where and not where.startswith(stdlib) and name != 'program':
        report['outside'].append([name, where])
try:
    import yaml
    report['yaml'] = 'importable'
except ImportError:
    report['yaml'] = 'absent'
print(json.dumps(report))
'''


def _run(program):
    done = subprocess.run(
        [sys.executable, '-I', '-S', '-c', PROBE, LIB,
         os.path.join(REPO, program) if program.endswith('.py')
         else program],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_boot_units_run_these_programs():
    """Every python3 program a boot unit runs is checked below."""
    texts = [restore.unit_text('/var/lib/juju/charm/lib')] + list(
        mig_boot.unit_texts('/var/lib/juju/charm/lib').values())
    found = {program for text in texts
             for program in UNIT_PROGRAM.findall(text)}
    assert found == {'nvidia_vgpu.restore', 'nvidia_vgpu.driver.mig_boot'}
    assert found <= set(CLOSURES)


@pytest.mark.parametrize('program', sorted(CLOSURES))
def test_a_host_program_needs_only_the_standard_library(program):
    report = _run(program)
    assert report['flags'] == [1, 1]       # -I and -S took effect
    assert report['yaml'] == 'absent'      # so a third-party import fails
    assert report['outside'] == []
    assert report['ours'] == CLOSURES[program]
    assert not {'charmhelpers', 'charms', 'yaml'} & set(report['top'])


def test_the_probe_can_fail():
    """A program of ours that needs a third-party package does not
    import: here, the mappings option's parser (PyYAML)."""
    done = subprocess.run(
        [sys.executable, '-I', '-S', '-c', PROBE, LIB,
         'nvidia_vgpu.nova.mappings'],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, cwd=REPO, timeout=120)
    assert done.returncode != 0
    assert "No module named 'yaml'" in done.stderr
