"""Run a scenario: one process per hook or action, against a simulated host.

See ../shared/spec/simulator.md for the scenario and output contract.
"""
import json
import os
import resource
import shutil
import site
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

import yaml

from sim import boot, charmdir, dkms, exec_step, fakebin, gpu_errors
from sim import neighbours
from sim import tool_server as toolserver
from sim import guests as simguests
from sim import host as simhost, mdev_definitions, mig as simmig, pythons
from sim import report as simreport
from sim import scenario as scenarios

APPLICATION = 'nova-compute-nvidia-vgpu'
UNIT = APPLICATION + '/0'
AGENT_DIR = '/var/lib/juju/agents/unit-{}-0'.format(APPLICATION)
PRINCIPAL_UNIT = 'nova-compute/0'
MODEL_UUID = '8d4a3b58-5f2c-4c9a-9a43-0c7f2f8e7a11'
HOOK_TIMEOUT = 600
# Directories every Ubuntu host has.
HOST_DIRECTORIES = ('etc/modprobe.d', 'etc/systemd/system', 'opt', 'usr/lib')
# What hooks see as JUJU_VERSION unless the scenario says otherwise.
DEFAULT_JUJU_VERSION = '3.4.5'


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
        # Each kind of scenario step (a dict's key; a hook's name is a
        # string step) and what runs it, in the order they are tried.
        self._step_kinds = {
            'action': self._action_step,
            'reboot': self._reboot_step,
            'config': self._config_step,
            'attach': self._attach_step,
            'remote': self._remote_step,
            'services': self._services_step,
            'guests': self._guests_step,
            'kernel': self._kernel_step,
            'faults': self._faults_step,
            'packages': self._packages_step,
            'relation-departed': self._departed_step,
            'exec': self._exec_step,
            'pci': self._pci_step,
            'kernel_messages': self._kernel_messages_step,
        }
        # What the last exec step's program did (its step's "exec").
        self._exec_result: Dict[str, Any] = {}
        # Answers the fake tools' calls where tool_client.c was built.
        self._tool_server: Optional[toolserver.ToolServer] = None

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
        state = self._initial_state()
        neighbours.install(self.host_root, state['host'],
                           self.scenario.get('relations', {}))
        for name, spec in self.scenario.get('resources', {}).items():
            state['resources'][name] = self._place_resource(name, spec)
        self._save(state)
        self._refresh_host(state)
        simhost.write_libvirt_domains(self.host_root,
                                      state['host']['libvirt_domains'])
        mdev_definitions.write_files(self.host_root,
                                     state['host']['mdev_definitions'])
        simhost.write_nova_conf(self.host_root, state['host'])
        self._baseline = simreport.snapshot(self.host_root)

    def _initial_state(self) -> Dict[str, Any]:
        """The state file at the start: the unit, the scenario's config,
        relations and host (resources are placed after)."""
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
            'host': self._initial_host(),
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
        return state

    def _initial_host(self) -> Dict[str, Any]:
        host = self.scenario.get('host', {})
        modules = list(host.get('kernel_modules', []))
        return {
            'pci': host.get('pci', []),
            'packages': dict(host.get('packages', {})),
            'unavailable_packages': list(
                host.get('unavailable_packages', [])),
            'boot_modules': modules,
            'modules': list(modules),
            'services': {},
            'vfs': {},
            'mdevs': [_active(mdev) for mdev in host.get('mdevs', [])],
            # Persistent definitions (mdevctl's): they outlive reboots.
            'mdev_definitions': mdev_definitions.initial(
                host.get('mdevs', [])),
            # What a full GPU's available_instances are counted from.
            'start_mdevs': [_active(mdev) for mdev in
                            host.get('mdevs', [])],
            'libvirt_domains': [dict(domain) for domain in
                                host.get('libvirt_domains', [])],
            # Types given to VFs (vendor-specific VFIO); until a
            # reboot, they survive every regeneration of /sys.
            'vf_vgpu_types': {
                vf.lower(): type_id for vf, type_id in
                host.get('vf_vgpu_types', {}).items() if type_id},
            # GPUs in NVIDIA's mixed-size mode (runtime state, lost at a
            # reboot), from sriov.mixed_size.mode
            'mixed_modes': {
                function['address']: function['sriov']['mixed_size'].get(
                    'mode', 'Disabled')
                for function in host.get('pci', [])
                if function.get('sriov', {}).get('mixed_size')},
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
            # Each MIG-capable GPU's mode and GPU instances (sim/mig.py).
            'mig': simmig.initial(host.get('pci', [])),
            # This boot's kernel log, and the GPU errors its Xid lines
            # stand for (sim/gpu_errors.py).
            **gpu_errors.initial(host.get('kernel_messages', [])),
            # What charm-nova-compute rendered (host.nova_conf).
            'nova_conf': host.get('nova_conf'),
        }

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
        # Each tool call a fork of one warm server instead of a Python
        # start (about half a scenario's CPU); benchmarks keep the
        # launcher, whose cost their figures show per hook.
        client = None if self.profile else toolserver.compiled_client(
            os.path.join(pythons.envs_dir(), 'fake-tools'))
        socket_path = os.path.join(self.meta, 'tools.sock')
        if client and len(socket_path) < 100:
            self._tool_server = toolserver.ToolServer(
                sys.executable, socket_path, self._environment({}))
            program = client
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
        if self._tool_server:
            env['SIM_TOOL_SOCKET'] = self._tool_server.socket_path
        if self.profile:
            pass    # bytecode in the charm directory, as a real unit's
        elif pythons.series_python(self.series) == '3.6':
            # 3.6 has no bytecode prefix: it would write into the host.
            env['PYTHONDONTWRITEBYTECODE'] = '1'
        else:
            # Compiled once for all hooks and simulations (the series'
            # venvs) or once per simulation (its charm directory), off
            # the simulated host.
            env['PYTHONPYCACHEPREFIX'] = pycache_dir()
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
        self._collect_created_mdevs()
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
        target = self.scenario.get('series_upgrade_target')
        if hook == 'pre-series-upgrade' and target:
            extra.update(_series_upgrade_target(
                self.scenario.get('juju_version', DEFAULT_JUJU_VERSION),
                target))
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
        boot_units = boot.restart(state['host'], boot.nouveau_blacklisted(
            self.host_root))
        self._save(state)
        self._refresh_host(state)
        # Units the charm installed run after the packaged services, in
        # the order their After= lines give.
        for name in boot.boot_order(self.host_root, boot_units):
            self._execute([os.path.join(self.bin_dir, 'systemctl'), 'start',
                           name], 'boot unit ' + name, {})
        self._collect_created_mdevs()
        return [self.run_hook('start')]

    def _collect_vf_vgpu_types(self) -> None:
        """vGPU types a process wrote to VFs (current_vgpu_type) are
        host state; a guest on a VF retyped is disrupted."""
        state = self._load()
        host = state['host']
        refusals = len(host.get('vf_type_refusals', []))
        changes = simhost.collect_vf_vgpu_types(self.host_root, host,
                                                self._step_index)
        for vf, old, new in changes:
            simguests.vf_retyped(host, self._step_index, vf, old, new)
        if changes or len(host.get('vf_type_refusals', [])) != refusals:
            self._save(state)

    def _collect_created_mdevs(self) -> None:
        """What a process did to vGPUs through sysfs, taken into the host
        state as the kernel would have done it: UUIDs written to a type's
        create file made vGPUs, a 1 written to a vGPU's remove took it
        away (a guest using it loses it), and a placement written to its
        nvidia/vgpu_params fixes where it sits in mixed-size mode."""
        state = self._load()
        if simhost.take_in_mdev_writes(os.path.join(self.host_root, 'sys'),
                                       state['host'], self._step_index):
            self._save(state)
            self._refresh_host(state)

    def run_program(self, argv: List[str], stdin: str = '',
                    bare: bool = False) -> int:
        """Any program run as a hook would be (environment, working
        directory, tools on PATH, host), e.g. a benchmark's floor; bare:
        without the simulator's charmhelpers patch (a program that does
        not use charmhelpers need not import it)."""
        return self._execute(argv, 'program ' + os.path.basename(argv[0]),
                             {'SIM_NO_CHARMHELPERS': '1'} if bare else {},
                             stdin=stdin)

    def run_on_host(self, argv: List[str],
                    user: str = 'root') -> Dict[str, Any]:
        """Run a program installed on the simulated host (argv[0]: its
        path there) as NRPE, cron or an operator would: no hook runs.
        Its exit code, stdout and stderr, as a shell would give them
        (127: not found, 126: cannot run, 128+N: killed by signal N)."""
        program = self.host_root + argv[0]
        environment = exec_step.environment(self._environment({}))
        if argv[0] == AGENT_DIR + exec_step.VENV_PYTHON:
            program, environment = exec_step.unit_python(
                self.python, self.charm_dir, environment)
        if not os.path.exists(program):
            return exec_step.missing(argv[0])
        privileges, note = exec_step.as_user(user)
        if privileges:
            exec_step.open_to_others([self.work, self.host_root, self.meta,
                                      self.bin_dir])
        try:
            done = subprocess.run(
                [program] + list(argv[1:]), cwd=self.charm_dir,
                env=environment,
                capture_output=True, text=True, timeout=HOOK_TIMEOUT,
                **privileges)
            code, stdout, stderr = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired:
            code, stdout, stderr = 124, '', 'timed out\n'
        except OSError as error:
            code, stdout, stderr = exec_step.CANNOT_RUN, '', \
                'sh: 1: {}: {}\n'.format(argv[0], error.strerror)
        self._collect_vf_vgpu_types()
        self._collect_created_mdevs()
        sys.stderr.write('--- exec {} (exit {})\n{}'.format(
            argv[0], code, stderr))
        return {'exit_code': 128 - code if code < 0 else code,
                'stdout': stdout, 'stderr': note + stderr}

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
            label, runs = step, self._hook_step(step)
        else:
            kind = next(kind for kind in self._step_kinds if kind in step)
            label = kind
            if kind in ('action', 'relation-departed'):
                label += ' ' + step[kind]
            if kind == 'exec':
                label += ' ' + step[kind]['argv'][0]
            runs = self._step_kinds[kind](state, step)
        state = self._load()
        record = {
            'step': label,
            'exit_code': next((run['exit_code'] for run in runs
                               if run['exit_code']), 0),
            'hooks': runs,
            'status': dict(state['status']),
            'commands': self._new_commands(),
            'relation_sets': state['relation_sets'] - sets_before,
            'python': self._pythons_since(pythons_before),
        }
        if isinstance(step, dict) and 'exec' in step:
            record['exec'] = self._exec_result
        return record

    # Each kind of step takes the state as the step began and the step;
    # it returns the hooks and actions it ran (self._step_kinds).

    def _hook_step(self, hook: str) -> List[Dict[str, Any]]:
        if '-relation-' in hook:
            return self._relation_hooks(hook)
        return [self.run_hook(hook)]

    def _action_step(self, state: Dict[str, Any],
                     step: Dict[str, Any]) -> List[Dict[str, Any]]:
        code = self.run_action(step['action'], step.get('params', {}))
        return [{'action': step['action'], 'exit_code': code}]

    def _reboot_step(self, state: Dict[str, Any],
                     step: Dict[str, Any]) -> List[Dict[str, Any]]:
        return self._reboot()

    def _config_step(self, state: Dict[str, Any],
                     step: Dict[str, Any]) -> List[Dict[str, Any]]:
        state['config'].update(step['config'])
        self._save(state)
        return [self.run_hook('config-changed')]

    def _attach_step(self, state: Dict[str, Any],
                     step: Dict[str, Any]) -> List[Dict[str, Any]]:
        for name, spec in step['attach'].items():
            state['resources'][name] = self._place_resource(name, spec)
        self._save(state)
        return [self.run_hook('upgrade-charm')]

    def _remote_step(self, state: Dict[str, Any],
                     step: Dict[str, Any]) -> List[Dict[str, Any]]:
        runs: List[Dict[str, Any]] = []
        for endpoint, data in step['remote'].items():
            for rid, relation in sorted(state['relations'].items()):
                if relation['name'] != endpoint:
                    continue
                for unit in relation['units']:
                    relation['units'][unit].update(_stringify(data))
        self._save(state)
        for endpoint in step['remote']:
            runs += self._relation_hooks(endpoint + '-relation-changed')
        return runs

    def _services_step(self, state: Dict[str, Any],
                       step: Dict[str, Any]) -> List[Dict[str, Any]]:
        """Something else on the host (a crash, an operator) changed
        services: no hook runs until the next one the scenario asks."""
        for name, wanted in step['services'].items():
            service = state['host']['services'].setdefault(
                name, {'active': False, 'enabled': True,
                       'masked': False})
            service['active'] = wanted == 'running'
        self._save(state)
        return []

    def _guests_step(self, state: Dict[str, Any],
                     step: Dict[str, Any]) -> List[Dict[str, Any]]:
        """Nova started, moved or deleted guests: no hook runs."""
        self._set_guests(state, step['guests'])
        return []

    def _kernel_step(self, state: Dict[str, Any],
                     step: Dict[str, Any]) -> List[Dict[str, Any]]:
        """The operator changed the host (firmware setting, key made or
        imported, headers, another kernel to boot): no hook. A kernel
        with its headers has DKMS's build of the module (their postinst
        ran it); one without has none until they are installed."""
        state['host']['kernel'] = simhost.changed_kernel(
            state['host']['kernel'], step['kernel'])
        dkms.autoinstall(state['host'])
        self._save(state)
        self._refresh_host(state)
        return []

    def _faults_step(self, state: Dict[str, Any],
                     step: Dict[str, Any]) -> List[Dict[str, Any]]:
        """The host breaks (or is mended): from now on these commands
        fail with this text; no hook runs."""
        faults = state['host'].setdefault('faults', {})
        for name, text in step['faults'].items():
            if text is None:
                faults.pop(name, None)
            else:
                faults[name] = text
        self._save(state)
        return []

    def _packages_step(self, state: Dict[str, Any],
                       step: Dict[str, Any]) -> List[Dict[str, Any]]:
        """Another charm (the principal) installed packages: no hook."""
        state['host']['packages'].update(step['packages'])
        for name in step['packages']:
            if name.startswith(dkms.HEADERS_PACKAGE.format('')):
                dkms.autoinstall(state['host'], name[len(
                    dkms.HEADERS_PACKAGE.format('')):])
        self._save(state)
        simhost.write_kernel_files(self.host_root, state['host'])
        # nova-common's install renders nova.conf (the principal's).
        simhost.write_nova_conf(self.host_root, state['host'])
        self._rebase('etc/nova')
        return []

    def _pci_step(self, state: Dict[str, Any],
                  step: Dict[str, Any]) -> List[Dict[str, Any]]:
        """A GPU fails, is removed, replaced or added: the host's PCI
        functions become these at the next reboot; no hook runs."""
        state['host']['pci_at_next_boot'] = step['pci']
        self._save(state)
        return []

    def _kernel_messages_step(self, state: Dict[str, Any],
                              step: Dict[str, Any]
                              ) -> List[Dict[str, Any]]:
        """The kernel logs these lines (an Xid: a GPU fault, which
        nvidia-smi reports from now on); no hook runs."""
        gpu_errors.log(state['host'], step['kernel_messages'])
        self._save(state)
        return []

    def _departed_step(self, state: Dict[str, Any],
                       step: Dict[str, Any]) -> List[Dict[str, Any]]:
        return self._depart(step['relation-departed'])

    def _exec_step(self, state: Dict[str, Any],
                   step: Dict[str, Any]) -> List[Dict[str, Any]]:
        """NRPE, cron or an operator runs a program the charm installed:
        no hook runs; what it did is the step's "exec"."""
        self._exec_result = self.run_on_host(
            step['exec']['argv'], step['exec'].get('user', 'root'))
        return []

    def _set_guests(self, state: Dict[str, Any],
                    guests: Dict[str, Any]) -> None:
        """The host's libvirt domains and mdevs become exactly these
        (a key left out: as it is); /sys follows (available_instances).
        The domain files (definitions, and running domains' live state)
        are the host's, not the charm's: the output's files compare them
        with these, not with the start."""
        host = state['host']
        if 'mdevs' in guests:
            host['mdevs'] = [_active(mdev) for mdev in guests['mdevs']]
            host['mdev_definitions'] = mdev_definitions.initial(
                guests['mdevs'])
            mdev_definitions.write_files(self.host_root,
                                         host['mdev_definitions'])
            self._rebase(mdev_definitions.DIRECTORY)
        if 'libvirt_domains' in guests:
            host['libvirt_domains'] = [dict(domain) for domain in
                                       guests['libvirt_domains']]
            simhost.write_libvirt_domains(self.host_root,
                                          host['libvirt_domains'])
            self._rebase(simhost.LIBVIRT_DOMAINS, simhost.LIBVIRT_LIVE_STATE)
        self._save(state)
        self._refresh_host(state)

    def _rebase(self, *directories: str) -> None:
        """Files under these directories are the host's as they are now
        (Nova and libvirt wrote them, not the charm): the output's files
        compare them with this, not with the start."""
        prefixes = tuple('/' + where + '/' for where in directories)
        for path in [path for path in self._baseline
                     if path.startswith(prefixes)]:
            del self._baseline[path]
        self._baseline.update(
            (path, content) for path, content in
            simreport.snapshot(self.host_root).items()
            if path.startswith(prefixes))

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
        """The contract's output document, as things stand now."""
        output = simreport.document(
            self._load(), self.steps, self.actions,
            commands=simreport.host_commands(self.commands_path),
            files=simreport.changed_files(
                self._baseline, simreport.snapshot(self.host_root)),
            flags=simreport.flags(self.charm_dir),
            vf_vgpu_types=simreport.vf_vgpu_types(self.host_root))
        # The hooks' interpreter stands for the unit's venv (layer:basic's
        # ../.venv), where a built charm's is: the exporter's unit names
        # it, and the output must not name this checkout's path.
        venv = [] if self.built_charm else [
            (self.python, AGENT_DIR + '/.venv/bin/python')]
        return simreport.scrub(output, venv + [(self.host_root, ''),
                                               (self.work, '<sim>')])

    def cleanup(self) -> None:
        if self._tool_server:
            self._tool_server.stop()
        shutil.rmtree(self.work, ignore_errors=True)
        # The bytecode of this sandbox's charm directory goes with it.
        shutil.rmtree(os.path.join(pycache_dir(), self.work.lstrip(os.sep)),
                      ignore_errors=True)


def pycache_dir() -> str:
    """Where hooks of the series from 3.8 on keep their bytecode."""
    return os.path.join(pythons.envs_dir(), 'pycache')


def _lines(path: str) -> int:
    if not os.path.exists(path):
        return 0
    with open(path, 'rb') as stream:
        return sum(1 for _ in stream)


def _active(mdev: Dict[str, Any]) -> Dict[str, Any]:
    """An mdev as the host has it now (whether a definition keeps it is
    the host's mdev_definitions)."""
    return {key: mdev[key] for key in ('uuid', 'parent', 'type')}


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


def _series_upgrade_target(juju_version: str, series: str) -> Dict[str, str]:
    """How Juju names a series upgrade's target to pre-series-upgrade:
    the series under Juju 2 (JUJU_TARGET_SERIES), the base from Juju 3
    on (JUJU_TARGET_BASE)."""
    if int(juju_version.split('.')[0]) < 3:
        return {'JUJU_TARGET_SERIES': series}
    return {'JUJU_TARGET_BASE': scenarios.TARGET_BASES[series]}
