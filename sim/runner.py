"""Run a scenario: one process per hook or action, against a simulated host.

See ../shared/spec/simulator.md for the scenario and output contract.
"""
import fnmatch
import hashlib
import json
import os
import resource
import shutil
import site
import sqlite3
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

import yaml

from sim import charmdir, fakebin, guests as simguests, host as simhost
from sim import pythons
from sim import scenario as scenarios

APPLICATION = 'nova-compute-nvidia-vgpu'
UNIT = APPLICATION + '/0'
AGENT_DIR = '/var/lib/juju/agents/unit-{}-0'.format(APPLICATION)
PRINCIPAL_UNIT = 'nova-compute/0'
MODEL_UUID = '8d4a3b58-5f2c-4c9a-9a43-0c7f2f8e7a11'
HOOK_TIMEOUT = 600
# Files the simulator itself lays out; changes there are not the charm's.
# (DKMS's key pair is the host's: made by shim-signed's tools, enrolled by
# the operator.)
NOT_HOST_FILES = ('var/lib/juju', 'var/lib/dpkg', 'sys', 'proc',
                  'var/lib/shim-signed')
NVIDIA_DRIVER_PACKAGE = 'nvidia-vgpu-ubuntu-*'
# Directories every Ubuntu host has.
HOST_DIRECTORIES = ('etc/modprobe.d', 'etc/systemd/system', 'opt', 'usr/lib')
NVIDIA_MODULES = ('nvidia', 'nvidia_vgpu_vfio')
# What hooks see as JUJU_VERSION unless the scenario says otherwise.
DEFAULT_JUJU_VERSION = '3.4.5'


def _scrub(value: Any, replacements: List[tuple]) -> Any:
    """Replace sandbox paths so that output is the same on every run."""
    if isinstance(value, str):
        for old, new in replacements:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_scrub(item, replacements) for item in value]
    if isinstance(value, dict):
        return {_scrub(key, replacements): _scrub(item, replacements)
                for key, item in value.items()}
    return value


class Simulation:
    """One compute host, one unit of the charm, one scenario."""

    def __init__(self, scenario: Dict[str, Any], repo_root: str,
                 built_charm: Optional[str] = None,
                 work_dir: Optional[str] = None,
                 profile: bool = False) -> None:
        self.scenario = scenario
        self.repo_root = repo_root
        self.built_charm = built_charm
        self.work = work_dir or tempfile.mkdtemp(prefix='vgpu-sim-')
        self.host_root = os.path.join(self.work, 'root')
        self.charm_dir = self.host_root + AGENT_DIR + '/charm'
        self.meta = os.path.join(self.work, 'sim')
        self.bin_dir = os.path.join(self.meta, 'bin')
        self.state_path = os.path.join(self.meta, 'state.json')
        self.commands_path = os.path.join(self.meta, 'commands.jsonl')
        self.log_path = os.path.join(self.meta, 'juju-log.txt')
        self.series = scenario.get('host', {}).get('series',
                                                   pythons.DEFAULT_SERIES)
        # Set by setup(): the series' interpreter (a real host's python3,
        # which boot units run) and the hooks' venv of it.
        self.host_python = ''
        self.python = ''
        self.pythons_seen = os.path.join(self.meta, 'pythons-seen')
        self.steps: List[Dict[str, Any]] = []
        self.actions: List[Dict[str, Any]] = []
        self._commands_seen = 0
        self._resource_revision = 0
        # The index in the scenario's steps of the step running now.
        self._step_index = 0
        # With profile, what each hook or action process cost (benchmarks).
        self.profile = profile
        self.measurements: List[Dict[str, Any]] = []

    # ------------------------------------------------------------ setup

    def setup(self) -> None:
        try:
            self.host_python = pythons.find_interpreter(
                pythons.series_python(self.series))
            if not self.built_charm:
                self.python = pythons.hook_environment(self.series)
        except (pythons.MissingPython, pythons.EnvironmentFailed) as error:
            raise scenarios.ScenarioError('host.series {}: {}'.format(
                self.series, error))
        os.makedirs(self.bin_dir)
        os.makedirs(self.host_root + AGENT_DIR)
        for directory in HOST_DIRECTORIES:
            os.makedirs(os.path.join(self.host_root, directory))
        if self.built_charm:
            charmdir.copy_built(self.built_charm, self.charm_dir)
            self.python = self._venv_for_built_charm()
        else:
            charmdir.assemble_from_source(self.repo_root, self.charm_dir)
        self._install_fake_tools()
        host = self.scenario.get('host', {})
        modules = list(host.get('kernel_modules', []))
        state = {
            'unit': UNIT,
            'leader': True,
            'config': self._initial_config(),
            'status': {'workload': 'unknown', 'message': ''},
            'application_version': '',
            'relations': {},
            'resources': {},
            'relation_sets': 0,
            'action': None,
            'ports': [],
            'host': {
                'pci': host.get('pci', []),
                'packages': dict(host.get('packages', {})),
                'unavailable_packages': list(
                    host.get('unavailable_packages', [])),
                'boot_modules': modules,
                'modules': list(modules),
                'services': {},
                'vfs': {},
                'mdevs': [dict(mdev) for mdev in host.get('mdevs', [])],
                # What a full GPU's available_instances are counted from.
                'start_mdevs': [dict(mdev) for mdev in
                                host.get('mdevs', [])],
                'libvirt_domains': [dict(domain) for domain in
                                    host.get('libvirt_domains', [])],
                # Types given to VFs (vendor-specific VFIO); until a
                # reboot, they survive every regeneration of /sys.
                'vf_vgpu_types': {
                    vf.lower(): type_id for vf, type_id in
                    host.get('vf_vgpu_types', {}).items() if type_id},
                'guest_disruptions': [],
                'reboots': 0,
                'reboot_requested': False,
                'sysfs_noise': host.get('sysfs_noise', 0),
                # The running kernel, its headers, Secure Boot, DKMS's
                # signing key (host.kernel).
                'kernel': simhost.kernel_state(host.get('kernel', {}),
                                               self.series),
                # Host commands that fail, with their error text (faults).
                'faults': {},
            },
        }
        for number, (name, units) in enumerate(
                sorted(self.scenario.get('relations', {}).items()), start=1):
            rid = '{}:{}'.format(name, number)
            state['relations'][rid] = {
                'name': name,
                'units': {unit['remote_unit']: _stringify(unit.get('data'))
                          for unit in units},
                'app_data': {}, 'local': {}, 'app_local': {},
                'broken': False,
            }
        for name, spec in self.scenario.get('resources', {}).items():
            state['resources'][name] = self._place_resource(name, spec)
        self._save(state)
        self._refresh_host(state)
        simhost.write_libvirt_domains(self.host_root,
                                      state['host']['libvirt_domains'])
        self._baseline = self._snapshot()

    def _initial_config(self) -> Dict[str, Any]:
        with open(os.path.join(self.charm_dir, 'config.yaml')) as stream:
            options = (yaml.safe_load(stream) or {}).get('options', {})
        config = {name: spec.get('default') for name, spec in options.items()}
        for name, value in self.scenario.get('config', {}).items():
            if name not in options:
                raise scenarios.ScenarioError(
                    'config.{}: not an option of this charm'.format(name))
            config[name] = value
        return config

    def _install_fake_tools(self) -> None:
        program = os.path.join(self.meta, 'fakebin')
        with open(program, 'w') as stream:
            stream.write(fakebin.launcher(sys.executable))
        os.chmod(program, 0o755)
        names = (fakebin.HOOK_TOOLS + fakebin.HOST_COMMANDS +
                 tuple(fakebin.PASS_THROUGH))
        for name in names:
            os.symlink(program, os.path.join(self.bin_dir, name))
        juju_log = os.path.join(self.bin_dir, 'juju-log')
        with open(juju_log, 'w') as stream:
            stream.write(fakebin.JUJU_LOG)
        os.chmod(juju_log, 0o755)

    def _venv_for_built_charm(self) -> str:
        """Install the built charm's wheelhouse where layer:basic expects
        its venv (../.venv), and mark it bootstrapped, so that the real
        hook stubs skip the network install and run in it."""
        venv = os.path.join(self.host_root + AGENT_DIR, '.venv')
        subprocess.run([self.host_python, '-m', 'venv', venv], check=True)
        pip = os.path.join(venv, 'bin', 'pip')
        wheelhouse = os.path.join(self.charm_dir, 'wheelhouse')
        # As layer:basic does: the wheelhouse's own files (wheelhouse.txt
        # may name git URLs that were resolved at build time), offline.
        # A charm built with --binary-wheels-from-source (tox -e build)
        # holds wheels; sdists would need their build backends too.
        archives = sorted(os.path.join(wheelhouse, name)
                          for name in os.listdir(wheelhouse)
                          if not name.startswith('.'))
        sdists = [name for name in archives if not name.endswith('.whl')]
        if sdists:
            raise scenarios.ScenarioError(
                '--charm-dir: the wheelhouse holds source archives ({}), '
                'whose build backends are not there offline; build with '
                'charm-build --binary-wheels-from-source (tox -e build)'
                .format(os.path.basename(sdists[0])))
        subprocess.run([pip, 'install', '-q', '--no-index', '-f',
                        wheelhouse] + archives, check=True,
                       stdout=sys.stderr)
        open(os.path.join(wheelhouse, '.bootstrapped'), 'w').close()
        return os.path.join(venv, 'bin', 'python')

    def _place_resource(self, name: str, spec: Dict[str, Any]) -> str:
        """Put a resource where Juju's agent keeps it; '' = not attached."""
        with open(os.path.join(self.charm_dir, 'metadata.yaml')) as stream:
            metadata = yaml.safe_load(stream)
        filename = metadata['resources'][name].get('filename', name)
        target = '{}{}/resources/{}/{}'.format(
            self.host_root, AGENT_DIR, name, filename)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        (kind, value), = spec.items()
        self._resource_revision += 1
        if kind == 'deb':
            built = simhost.build_deb(
                os.path.join(self.meta, 'debs',
                             str(self._resource_revision)), value)
            shutil.copyfile(built, target)
        elif kind == 'file':
            shutil.copyfile(os.path.join(self.scenario['_base_dir'], value),
                            target)
        else:
            open(target, 'wb').close()
        return target

    # ------------------------------------------------------------ state

    def _load(self) -> Dict[str, Any]:
        with open(self.state_path) as stream:
            return json.load(stream)

    def _save(self, state: Dict[str, Any]) -> None:
        with open(self.state_path, 'w') as stream:
            json.dump(state, stream, indent=1, sort_keys=True)
        fakebin.write_dpkg_status(self.host_root, state['host']['packages'])

    def _refresh_host(self, state: Dict[str, Any]) -> None:
        """Regenerate /sys and /proc/modules from the host state.

        What processes wrote to /sys that is host state (VF vGPU types)
        was taken into the state after each process (_execute), and no
        process runs between that and a call here."""
        host = state['host']
        simhost.generate_sysfs(self.host_root, host['pci'],
                               simhost.hardware_state(host))
        simhost.write_proc_modules(self.host_root, host['modules'])
        simhost.write_kernel_files(self.host_root, host)

    def _snapshot(self) -> Dict[str, bytes]:
        files = {}
        for directory, dirnames, filenames in os.walk(self.host_root):
            relative = os.path.relpath(directory, self.host_root)
            if relative.startswith(NOT_HOST_FILES):
                dirnames[:] = []
                continue
            for name in filenames:
                path = os.path.join(directory, name)
                if os.path.isfile(path):
                    with open(path, 'rb') as stream:
                        files['/' + os.path.relpath(path, self.host_root)] = \
                            stream.read()
        return files

    def _flags(self) -> List[str]:
        path = os.path.join(self.charm_dir, '.unit-state.db')
        if not os.path.exists(path):
            return []
        with sqlite3.connect(path) as db:
            rows = db.execute("SELECT key FROM kv WHERE key LIKE "
                              "'reactive.states.%'").fetchall()
        return sorted(key[len('reactive.states.'):] for key, in rows)

    def _new_commands(self) -> List[List[str]]:
        if not os.path.exists(self.commands_path):
            return []
        with open(self.commands_path) as stream:
            lines = stream.readlines()
        fresh = lines[self._commands_seen:]
        self._commands_seen = len(lines)
        entries = [json.loads(line) for line in fresh]
        return [entry['argv'] for entry in entries if entry['kind'] == 'host']

    # ---------------------------------------------------------- running

    def _environment(self, extra: Dict[str, str]) -> Dict[str, str]:
        runtime = os.path.join(os.path.dirname(os.path.abspath(
            __file__)), 'runtime')
        pythonpath = [runtime]
        if not self.built_charm:
            pythonpath += _stand_in_path(self.repo_root)
        env = {
            'PATH': self.bin_dir,
            'HOME': self.meta,
            'LANG': 'C.UTF-8',
            'LC_ALL': 'C.UTF-8',
            'PYTHONPATH': os.pathsep.join(pythonpath),
            'JUJU_CHARM_DIR': self.charm_dir,
            'CHARM_DIR': self.charm_dir,
            'JUJU_UNIT_NAME': UNIT,
            'JUJU_MODEL_NAME': 'sim',
            'JUJU_MODEL_UUID': MODEL_UUID,
            'JUJU_PRINCIPAL_UNIT': PRINCIPAL_UNIT,
            'JUJU_MACHINE_ID': '0',
            'JUJU_AVAILABILITY_ZONE': 'zone1',
            'JUJU_VERSION': self.scenario.get('juju_version',
                                              DEFAULT_JUJU_VERSION),
            'JUJU_CONTEXT_ID': '{}-sim'.format(UNIT),
            'SIM_STATE': self.state_path,
            'SIM_COMMANDS': self.commands_path,
            'SIM_LOG': self.log_path,
            'SIM_SITE_PACKAGES': os.pathsep.join(site.getsitepackages()),
            'SIM_HOST_ROOT': self.host_root,
            'SIM_REPO': self.repo_root,
            'SIM_PYTHON': self.host_python,
            'SIM_PYTHONS_SEEN': self.pythons_seen,
            'SIM_SERIES': self.series,
            'SIM_STEP': str(self._step_index),
            'NVIDIA_VGPU_HOST_ROOT': self.host_root,
        }
        if not self.profile:
            # Profiled runs keep bytecode, as a real unit's charm
            # directory does after its first hook.
            env['PYTHONDONTWRITEBYTECODE'] = '1'
        env.update(extra)
        return env

    def _execute(self, argv: List[str], label: str,
                 extra: Dict[str, str], stdin: Optional[str] = None) -> int:
        log_start = os.path.getsize(self.log_path) if os.path.exists(
            self.log_path) else 0
        environment = self._environment(extra)
        if self.profile:
            environment['SIM_PROFILE'] = os.path.join(self.meta,
                                                      'profile.json')
            before = self._usage(environment['SIM_PROFILE'])
        try:
            done = subprocess.run(argv, cwd=self.charm_dir,
                                  env=environment, input=stdin,
                                  capture_output=True, text=True,
                                  timeout=HOOK_TIMEOUT)
            code, stderr = done.returncode, done.stderr
        except subprocess.TimeoutExpired:
            code, stderr = 124, 'timed out\n'
        if self.profile:
            self.measurements.append(dict(
                self._usage_since(before, environment['SIM_PROFILE']),
                label=label, exit_code=code))
        self._collect_vf_vgpu_types()
        sys.stderr.write('--- {} (exit {})\n'.format(label, code))
        if os.path.exists(self.log_path):
            with open(self.log_path) as stream:
                stream.seek(log_start)
                sys.stderr.write(stream.read())
        sys.stderr.write(stderr)
        return code

    def _usage(self, profile: str) -> Dict[str, Any]:
        """Counters before a hook process, for _usage_since."""
        if os.path.exists(profile):
            os.remove(profile)
        return {'sets': self._load()['relation_sets'],
                'commands': _lines(self.commands_path),
                'children': resource.getrusage(resource.RUSAGE_CHILDREN),
                'clock': time.perf_counter()}

    def _usage_since(self, before: Dict[str, Any],
                     profile: str) -> Dict[str, Any]:
        """What one hook process cost: wall time, its own CPU time and
        peak memory, with its children's CPU, what it started, the hook
        tools and host commands among that, relation-sets."""
        wall = time.perf_counter() - before['clock']
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            with open(profile) as stream:
                own = json.load(stream)
        except (OSError, ValueError):
            own = {'cpu_s': None, 'max_rss_kib': None, 'spawned': None,
                   'opened_sys': None}
        entries = []
        if os.path.exists(self.commands_path):
            with open(self.commands_path) as stream:
                entries = [json.loads(line) for line in
                           stream.readlines()[before['commands']:]]
        return {
            'wall_s': wall,
            'cpu_s': own['cpu_s'],
            'cpu_with_children_s': (
                children.ru_utime + children.ru_stime -
                before['children'].ru_utime - before['children'].ru_stime),
            'max_rss_kib': own['max_rss_kib'],
            'spawned': own['spawned'],
            'opened_sys': own['opened_sys'],
            'tool_calls': [entry['argv'] for entry in entries
                           if entry['kind'] == 'tool'],
            'host_commands': [entry['argv'] for entry in entries
                              if entry['kind'] == 'host'],
            'relation_sets': self._load()['relation_sets'] - before['sets'],
        }

    def run_hook(self, hook: str, rid: Optional[str] = None,
                 remote_unit: Optional[str] = None,
                 departing: Optional[str] = None) -> Dict[str, Any]:
        extra = {'JUJU_HOOK_NAME': hook, 'JUJU_DISPATCH_PATH':
                 'hooks/' + hook}
        if rid:
            extra.update({'JUJU_RELATION': rid.split(':')[0],
                          'JUJU_RELATION_ID': rid})
            if remote_unit:
                extra.update({'JUJU_REMOTE_UNIT': remote_unit,
                              'JUJU_REMOTE_APP': remote_unit.split('/')[0]})
            if departing:
                extra['JUJU_DEPARTING_UNIT'] = departing
        code = self._execute(
            [self.python, os.path.join(self.charm_dir, 'hooks', hook)],
            'hook ' + hook, extra)
        return {'hook': hook, 'exit_code': code}

    def run_action(self, name: str, params: Dict[str, Any]) -> int:
        with open(os.path.join(self.charm_dir, 'actions.yaml')) as stream:
            schema = (yaml.safe_load(stream) or {}).get(name, {})
        full = {key: spec.get('default')
                for key, spec in (schema.get('params') or {}).items()
                if 'default' in spec}
        full.update(params)
        state = self._load()
        state['action'] = {'name': name, 'params': full, 'results': {},
                           'failed': None}
        self._save(state)
        uuid = '{:08d}-sim'.format(len(self.actions) + 1)
        script = os.path.join(self.charm_dir, 'actions', name)
        if not os.path.exists(script):
            code = 1
            sys.stderr.write('--- action {}: no such action\n'.format(name))
        else:
            code = self._execute([self.python, script], 'action ' + name, {
                'JUJU_ACTION_NAME': name, 'JUJU_ACTION_UUID': uuid,
                'JUJU_ACTION_TAG': 'action-' + uuid})
        state = self._load()
        action = state.pop('action')
        state['action'] = None
        self._save(state)
        failed = action['failed']
        if code != 0 and failed is None:
            failed = 'action exited with code {}'.format(code)
        self.actions.append({'name': name, 'params': full,
                             'results': action['results'],
                             'failed': failed})
        return code

    def _relation_hooks(self, hook: str) -> List[Dict[str, Any]]:
        """A relation hook step runs once per relation (created, broken)
        or once per remote unit (joined, changed)."""
        endpoint, _, kind = hook.partition('-relation-')
        state = self._load()
        runs = []
        for rid, relation in sorted(state['relations'].items()):
            if relation['name'] != endpoint or relation['broken']:
                continue
            if kind in ('created', 'broken'):
                runs.append(self.run_hook(hook, rid))
            else:
                for unit in sorted(relation['units']):
                    runs.append(self.run_hook(hook, rid, unit))
        if not runs:
            sys.stderr.write('--- {}: no such relation, skipped\n'.format(
                hook))
        return runs

    def _reboot(self) -> List[Dict[str, Any]]:
        """What a reboot does to the host, then the start hook."""
        state = self._load()
        host = state['host']
        blacklisted = self._nouveau_blacklisted()
        modules = [name for name in host['boot_modules']
                   if name not in NVIDIA_MODULES and
                   not (name == 'nouveau' and blacklisted)]
        driver = next((version for name, version in
                       sorted(host['packages'].items())
                       if fnmatch.fnmatchcase(name, NVIDIA_DRIVER_PACKAGE)),
                      None)
        kernel = host['kernel']
        if kernel['mok'] == 'imported':
            # Someone at the console confirms the key in MokManager.
            kernel['mok'] = 'enrolled'
        if host.get('dkms_module') and simhost.signatures_required(
                kernel) and kernel['mok'] != 'enrolled':
            # DKMS signed the module with a key the firmware does not
            # trust: "Key was rejected by service".
            driver = None
        host['nvidia_version'] = None
        if driver and 'nouveau' not in modules:
            modules += list(NVIDIA_MODULES)
            host['nvidia_version'] = driver
        host['modules'] = modules
        host['vfs'] = {}
        host['mdevs'] = []
        # The driver forgets the types it gave VFs (the VFs are gone).
        host['vf_vgpu_types'] = {}
        host['reboots'] += 1
        host['reboot_requested'] = False
        boot_units = []
        for name, service in sorted(host['services'].items()):
            needs = service.get('needs_module')
            starts = (service['enabled'] and not service['masked'] and
                      (not needs or needs in modules))
            if starts and service.get('unit_file'):
                boot_units.append(name)
                starts = False
            service['active'] = starts
            service.pop('failed', None)
        self._save(state)
        self._refresh_host(state)
        # Units the charm installed run after the packaged services, in
        # the order their After= lines give.
        for name in self._boot_order(boot_units):
            self._execute([os.path.join(self.bin_dir, 'systemctl'), 'start',
                           name], 'boot unit ' + name, {})
        self._collect_created_mdevs()
        return [self.run_hook('start')]

    def _boot_order(self, units: List[str]) -> List[str]:
        """Units sorted so each comes after those its After= names."""
        after = {}
        for name in units:
            path = os.path.join(self.host_root, 'etc', 'systemd', 'system',
                                name + '.service')
            with open(path) as stream:
                words = [word[:-len('.service')] for line in stream
                         if line.startswith('After=')
                         for word in line[len('After='):].split()]
            after[name] = [word for word in words if word in units]
        ordered: List[str] = []
        while len(ordered) < len(units):
            ready = sorted(name for name in units if name not in ordered and
                           all(dep in ordered for dep in after[name]))
            ordered.append(ready[0] if ready else sorted(
                set(units) - set(ordered))[0])
        return ordered

    def _collect_vf_vgpu_types(self) -> None:
        """vGPU types a process wrote to VFs (current_vgpu_type) are
        host state; a guest on a VF retyped is disrupted."""
        state = self._load()
        host = state['host']
        changes = simhost.collect_vf_vgpu_types(self.host_root, host)
        for vf, old, new in changes:
            simguests.vf_retyped(host, self._step_index, vf, old, new)
        if changes:
            self._save(state)

    def _collect_created_mdevs(self) -> None:
        """vGPUs created by writing a UUID to a type's create file (as
        the kernel would make them) join the host's mdevs."""
        state = self._load()
        created = []
        mdev_bus = os.path.join(self.host_root, 'sys', 'class', 'mdev_bus')
        for parent in sorted(os.listdir(mdev_bus)) if os.path.isdir(
                mdev_bus) else []:
            types_dir = os.path.join(mdev_bus, parent, 'mdev_supported_types')
            for type_id in sorted(os.listdir(types_dir)):
                with open(os.path.join(types_dir, type_id, 'create')) as f:
                    for uuid in f.read().split():
                        created.append({'uuid': uuid, 'parent': parent,
                                        'type': type_id})
        if created:
            state['host']['mdevs'] += created
            self._save(state)
            self._refresh_host(state)

    def _nouveau_blacklisted(self) -> bool:
        directory = os.path.join(self.host_root, 'etc', 'modprobe.d')
        if not os.path.isdir(directory):
            return False
        for name in sorted(os.listdir(directory)):
            with open(os.path.join(directory, name)) as stream:
                if any(line.split()[:2] == ['blacklist', 'nouveau']
                       for line in stream):
                    return True
        return False

    def run_program(self, argv: List[str], stdin: str = '',
                    bare: bool = False) -> int:
        """Any program run as a hook would be (environment, working
        directory, tools on PATH, host), e.g. a benchmark's floor; bare:
        without the simulator's charmhelpers patch (a program that does
        not use charmhelpers need not import it)."""
        return self._execute(argv, 'program ' + os.path.basename(argv[0]),
                             {'SIM_NO_CHARMHELPERS': '1'} if bare else {},
                             stdin=stdin)

    def run_step(self, step: Any) -> Dict[str, Any]:
        """Run one scenario step; its record joins the output's steps."""
        self._step_index = len(self.steps)
        self.steps.append(self._run_step(step))
        return self.steps[-1]

    def _run_step(self, step: Any) -> Dict[str, Any]:
        state = self._load()
        sets_before = state['relation_sets']
        pythons_before = _lines(self.pythons_seen)
        if isinstance(step, str):
            label = step
            if '-relation-' in step:
                runs = self._relation_hooks(step)
            else:
                runs = [self.run_hook(step)]
        elif 'action' in step:
            label = 'action ' + step['action']
            code = self.run_action(step['action'], step.get('params', {}))
            runs = [{'action': step['action'], 'exit_code': code}]
        elif 'reboot' in step:
            label = 'reboot'
            runs = self._reboot()
        elif 'config' in step:
            label = 'config'
            state['config'].update(step['config'])
            self._save(state)
            runs = [self.run_hook('config-changed')]
        elif 'attach' in step:
            label = 'attach'
            for name, spec in step['attach'].items():
                state['resources'][name] = self._place_resource(name, spec)
            self._save(state)
            runs = [self.run_hook('upgrade-charm')]
        elif 'remote' in step:
            label = 'remote'
            runs = []
            for endpoint, data in step['remote'].items():
                for rid, relation in sorted(state['relations'].items()):
                    if relation['name'] != endpoint:
                        continue
                    for unit in relation['units']:
                        relation['units'][unit].update(_stringify(data))
            self._save(state)
            for endpoint in step['remote']:
                runs += self._relation_hooks(endpoint + '-relation-changed')
        elif 'services' in step:
            # Something else on the host (a crash, an operator) changed
            # services: no hook runs until the next one the scenario asks.
            label = 'services'
            for name, wanted in step['services'].items():
                service = state['host']['services'].setdefault(
                    name, {'active': False, 'enabled': True,
                           'masked': False})
                service['active'] = wanted == 'running'
            self._save(state)
            runs = []
        elif 'guests' in step:
            # Nova started, moved or deleted guests: no hook runs.
            label = 'guests'
            self._set_guests(state, step['guests'])
            runs = []
        elif 'kernel' in step:
            # The operator changed the host (firmware setting, key made
            # or imported, headers, another kernel to boot): no hook.
            label = 'kernel'
            state['host']['kernel'] = simhost.changed_kernel(
                state['host']['kernel'], step['kernel'])
            self._save(state)
            self._refresh_host(state)
            runs = []
        elif 'faults' in step:
            # The host breaks (or is mended): from now on these commands
            # fail with this text; no hook runs.
            label = 'faults'
            faults = state['host'].setdefault('faults', {})
            for name, text in step['faults'].items():
                if text is None:
                    faults.pop(name, None)
                else:
                    faults[name] = text
            self._save(state)
            runs = []
        elif 'packages' in step:
            # Another charm (the principal) installed packages: no hook.
            label = 'packages'
            state['host']['packages'].update(step['packages'])
            self._save(state)
            simhost.write_kernel_files(self.host_root, state['host'])
            runs = []
        else:
            endpoint = step['relation-departed']
            label = 'relation-departed ' + endpoint
            runs = self._depart(endpoint)
        state = self._load()
        return {
            'step': label,
            'exit_code': next((run['exit_code'] for run in runs
                               if run['exit_code']), 0),
            'hooks': runs,
            'status': dict(state['status']),
            'commands': self._new_commands(),
            'relation_sets': state['relation_sets'] - sets_before,
            'python': self._pythons_since(pythons_before),
        }

    def _set_guests(self, state: Dict[str, Any],
                    guests: Dict[str, Any]) -> None:
        """The host's libvirt domains and mdevs become exactly these
        (a key left out: as it is); /sys follows (available_instances).
        The domain files are the host's, not the charm's: the output's
        files compare them with these, not with the start."""
        host = state['host']
        if 'mdevs' in guests:
            host['mdevs'] = [dict(mdev) for mdev in guests['mdevs']]
        if 'libvirt_domains' in guests:
            host['libvirt_domains'] = [dict(domain) for domain in
                                       guests['libvirt_domains']]
            simhost.write_libvirt_domains(self.host_root,
                                          host['libvirt_domains'])
            prefix = '/' + simhost.LIBVIRT_DOMAINS + '/'
            for path in [path for path in self._baseline
                         if path.startswith(prefix)]:
                del self._baseline[path]
            self._baseline.update(
                (path, content) for path, content in self._snapshot().items()
                if path.startswith(prefix))
        self._save(state)
        self._refresh_host(state)

    def _pythons_since(self, before: int) -> Optional[str]:
        """X.Y of the Python the step's processes ran under, as each
        reported it (runtime/sitecustomize.py); None if none ran."""
        if not os.path.exists(self.pythons_seen):
            return None
        with open(self.pythons_seen) as stream:
            seen = sorted(set(line.strip() for line in
                              stream.readlines()[before:]))
        return ', '.join(seen) or None

    def _depart(self, endpoint: str) -> List[Dict[str, Any]]:
        runs = []
        state = self._load()
        for rid in sorted(state['relations']):
            if state['relations'][rid]['name'] != endpoint:
                continue
            for unit in sorted(state['relations'][rid]['units']):
                state = self._load()
                relation = state['relations'][rid]
                relation.setdefault('departed', {})[unit] = \
                    relation['units'].pop(unit)
                self._save(state)
                runs.append(self.run_hook(endpoint + '-relation-departed',
                                          rid, unit, departing=unit))
            state = self._load()
            state['relations'][rid]['broken'] = True
            self._save(state)
            runs.append(self.run_hook(endpoint + '-relation-broken', rid))
            state = self._load()
            del state['relations'][rid]
            self._save(state)
        return runs

    def run(self) -> Dict[str, Any]:
        """Run every step; return the contract's output document."""
        self.setup()
        steps = self.scenario.get('steps')
        if steps is None:
            steps = scenarios.default_steps(self.scenario)
        for step in steps:
            self.run_step(step)
        return self.report()

    def report(self) -> Dict[str, Any]:
        state = self._load()
        commands = []
        # No file: no process ran (e.g. only guests steps).
        lines = []
        if os.path.exists(self.commands_path):
            with open(self.commands_path) as stream:
                lines = stream.readlines()
        for line in lines:
            entry = json.loads(line)
            if entry['kind'] == 'host':
                commands.append(entry['argv'])
        files = {}
        now = self._snapshot()
        for path in sorted(set(now) | set(self._baseline)):
            if now.get(path) != self._baseline.get(path):
                content = now.get(path)
                files[path] = (None if content is None
                               else content.decode('utf-8', 'replace'))
        host = state['host']
        output = {
            'status': state['status'],
            'application_version': state['application_version'],
            'relations': {rid: relation['local'] for rid, relation in
                          sorted(state['relations'].items())},
            'steps': self.steps,
            'actions': self.actions,
            'commands': commands,
            'files': files,
            'flags': self._flags(),
            'host': {
                'packages': dict(sorted(host['packages'].items())),
                'modules': host['modules'],
                'services': {name: {key: service[key] for key in
                                    ('active', 'enabled', 'masked')}
                             for name, service in
                             sorted(host['services'].items())},
                'vfs': host['vfs'],
                'mdevs': host['mdevs'],
                'reboots': host['reboots'],
                'reboot_requested': host['reboot_requested'],
                'vf_vgpu_types': self._vf_vgpu_types(),
                'guest_disruptions': host['guest_disruptions'],
                'resources_sha256': {
                    name: _sha256(path) for name, path in
                    sorted(state['resources'].items()) if path},
            },
        }
        return _scrub(output, [(self.host_root, ''), (self.work, '<sim>')])

    def _vf_vgpu_types(self) -> Dict[str, str]:
        """VFs given a vGPU type (vendor-specific VFIO), as sysfs says."""
        devices = os.path.join(self.host_root, 'sys', 'bus', 'pci',
                               'devices')
        types = {}
        for address in sorted(os.listdir(devices)):
            path = os.path.join(devices, address, 'nvidia',
                                'current_vgpu_type')
            if os.path.exists(path):
                with open(path) as stream:
                    value = stream.read().strip()
                if value != '0':
                    types[address] = value
        return types

    def cleanup(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)


def _lines(path: str) -> int:
    if not os.path.exists(path):
        return 0
    with open(path, 'rb') as stream:
        return sum(1 for _ in stream)


def _sha256(path: str) -> str:
    with open(path, 'rb') as stream:
        return hashlib.sha256(stream.read()).hexdigest()


def _stringify(data: Optional[Dict[str, Any]]) -> Dict[str, str]:
    """Relation data is always text on the wire."""
    return {key: value if isinstance(value, str) else json.dumps(value)
            for key, value in (data or {}).items()}


def _stand_in_path(repo_root: str) -> List[str]:
    """Where hooks find charms_openstack: the real package when the
    simulator itself can import it (e.g. a checkout on PYTHONPATH), else
    the test stand-in."""
    try:
        import charms_openstack
    except ImportError:
        return [os.path.join(repo_root, 'sim', 'stand_ins')]
    return [os.path.dirname(os.path.dirname(
        os.path.abspath(charms_openstack.__file__)))]
