"""Run benchmark hosts through the simulator and collect what each hook
process cost, plus the floors to compare with. I/O lives here; the
arithmetic is in report.py."""
import contextlib
import io
import json
import os
import statistics
import tempfile
from typing import Any, Dict, List, Optional, Sequence

from sim import runner, scenario as scenarios

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Hooks measured on a settled host (driver loaded after the reboot the
# install asked for), each run `repeat` times; install runs once.
STEADY_HOOKS = ('config-changed', 'start', 'update-status', 'upgrade-charm')
ACTION = 'list-vgpu-types'
PACKAGE_MANAGER = ('apt', 'apt-get', 'apt-cache', 'apt-config', 'dpkg',
                   'dpkg-query')
# What every hook of a charms.openstack charm imports before it does
# anything (charms.reactive, charmhelpers' core and fetch), then the one
# lspci call a host inventory cannot do without.
HOOK_FLOOR = (
    'import subprocess\n'
    'import charms.reactive, charmhelpers.core.hookenv\n'
    'import charmhelpers.core.host, charmhelpers.fetch\n'
    "subprocess.run(['lspci', '-Dmmnn'], check=True,"
    ' stdout=subprocess.DEVNULL)\n')
# What layer:openstack itself brings to every hook on top of that:
# charms.openstack and the charmhelpers OpenStack helpers it imports.
STACK_FLOOR = HOOK_FLOOR.replace(
    'import subprocess\n',
    'import subprocess\n'
    'import charms_openstack.charm, charmhelpers.contrib.openstack.utils\n')
# One hook tool call, as the simulator answers it.
TOOL_CALL = (
    'import subprocess\n'
    "subprocess.run(['config-get', '--all', '--format=json'], check=True,"
    ' stdout=subprocess.DEVNULL)\n')
# Opening and reading exactly the sysfs files list-vgpu-types opened
# (named on stdin; some are probes for files a driver mode lacks), the
# cheapest way Python has.
READ_FILES = (
    'import os, sys\n'
    'for path in sys.stdin.read().split():\n'
    '    try:\n'
    '        descriptor = os.open(path, os.O_RDONLY)\n'
    '    except OSError:\n'
    '        continue\n'
    '    os.read(descriptor, 65536)\n'
    '    os.close(descriptor)\n')
# The naive way: walk all of /sys/devices for mdev_supported_types and
# read each type's name, description and free instances (as cheaply).
WALK = (
    'import os, sys\n'
    'found = 0\n'
    'for top, dirs, files in os.walk(sys.argv[1]):\n'
    "    if os.path.basename(top) != 'mdev_supported_types':\n"
    '        continue\n'
    '    for type_id in dirs:\n'
    "        for name in ('name', 'description', 'available_instances'):\n"
    '            descriptor = os.open(os.path.join(top, type_id, name),\n'
    '                                 os.O_RDONLY)\n'
    '            os.read(descriptor, 65536)\n'
    '            os.close(descriptor)\n'
    '        found += 1\n'
    'print(found)\n')


def scratch_dir(needed: int = 2 << 30) -> str:
    """Where to build the simulated hosts: in memory (/dev/shm) when it
    has room, as the kernel keeps the real /sys; creating a quarter of a
    million files on a disk can take minutes."""
    try:
        usage = os.statvfs('/dev/shm')
        if usage.f_bavail * usage.f_frsize >= needed and os.access(
                '/dev/shm', os.W_OK):
            return '/dev/shm'
    except OSError:
        pass
    return tempfile.gettempdir()


def _summary(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Medians of repeated runs of one hook (counts from the last)."""
    last = runs[-1]
    spawned = last['spawned'] or []
    commands = last['host_commands']
    return {
        'runs': len(runs),
        'exit_code': max(run['exit_code'] for run in runs),
        'wall_s': statistics.median(run['wall_s'] for run in runs),
        'cpu_s': statistics.median(run['cpu_s'] or 0 for run in runs),
        'cpu_with_children_s': statistics.median(
            run['cpu_with_children_s'] for run in runs),
        'max_rss_kib': max(run['max_rss_kib'] or 0 for run in runs),
        'subprocesses': len(spawned),
        'juju_log_calls': spawned.count('juju-log'),
        'tool_calls': len(last['tool_calls']),
        'package_manager_calls': [
            ' '.join(argv[:2]) for argv in commands
            if argv[0] in PACKAGE_MANAGER],
        'relation_sets': max(run['relation_sets'] for run in runs),
        'opened_sys': last['opened_sys'] or [],
    }


class Bench:
    """One simulated host, profiled."""

    def __init__(self, host: Dict[str, Any],
                 scratch: Optional[str] = None) -> None:
        self.simulation = runner.Simulation(
            scenarios.validate(host), REPO_ROOT, profile=True,
            work_dir=tempfile.mkdtemp(prefix='vgpu-bench-',
                                      dir=scratch or scratch_dir()))
        self.log = io.StringIO()

    def __enter__(self) -> 'Bench':
        with contextlib.redirect_stderr(self.log):
            self.simulation.setup()
        return self

    def __exit__(self, *exc) -> None:
        self.simulation.cleanup()

    def step(self, step: Any, repeat: int = 1) -> Dict[str, Any]:
        """Run a scenario step `repeat` times; the hook or action it
        runs, summarised (a reboot's start hook, not its boot units)."""
        runs = []
        for _ in range(repeat):
            first = len(self.simulation.measurements)
            with contextlib.redirect_stderr(self.log):
                self.simulation.run_step(step)
            measured = [run for run in
                        self.simulation.measurements[first:]
                        if run['label'].startswith(('hook ', 'action '))]
            runs.append(measured[-1])
        summary = _summary(runs)
        if summary['exit_code']:
            raise RuntimeError('{} failed on {}:\n{}'.format(
                step, self.simulation.scenario.get('name'),
                self.log.getvalue()[-3000:]))
        return summary

    def settle(self) -> Dict[str, Dict[str, Any]]:
        """Deploy the charm and reboot, as an operator would; the
        figures of the install hook and of the start after the reboot."""
        figures = {'install': self.step('install')}
        relations = sorted(self.simulation.scenario.get('relations') or {},
                           key=lambda name: name != 'nova-vgpu')
        for step in ['{}-relation-joined'.format(name)
                     for name in relations] + ['config-changed', 'start']:
            self.step(step)
        figures['start (after reboot)'] = self.step({'reboot': True})
        return figures

    def process(self, code: str, argv: Sequence[str] = (),
                stdin: str = '', bare: bool = False) -> Dict[str, Any]:
        """A bare Python process in the hook's environment (same
        interpreter, PATH of tools, host), measured like a hook."""
        path = os.path.join(self.simulation.meta, 'floor.py')
        with open(path, 'w') as stream:
            stream.write(code)
        first = len(self.simulation.measurements)
        with contextlib.redirect_stderr(self.log):
            failed = self.simulation.run_program(
                [self.simulation.python, path] + list(argv), stdin=stdin,
                bare=bare)
        if failed:
            raise RuntimeError('floor process failed:\n' +
                               self.log.getvalue()[-3000:])
        return _summary(self.simulation.measurements[first:])

    def sys_devices(self) -> str:
        return os.path.join(self.simulation.host_root, 'sys', 'devices')


def hook_figures(host: Dict[str, Any], repeat: int,
                 hooks: Sequence[str] = STEADY_HOOKS) -> Dict[str, Any]:
    """Hooks and the action on one host, with the hook floor."""
    with Bench(host) as bench:
        figures = bench.settle()
        for hook in hooks:
            figures[hook] = bench.step(hook, repeat)
        figures[ACTION] = bench.step({'action': ACTION}, repeat)
        floor = [bench.process(HOOK_FLOOR) for _ in range(repeat)]
        stack = [bench.process(STACK_FLOOR) for _ in range(repeat)]
        tool = [bench.process(TOOL_CALL, bare=True) for _ in range(repeat)]
        bare = [bench.process('', bare=True) for _ in range(repeat)]
    tool_s = statistics.median(run['wall_s'] for run in tool) - \
        statistics.median(run['wall_s'] for run in bare)
    return {'hooks': figures, 'floor': _median_of(floor),
            'stack_floor': _median_of(stack), 'tool_call_s': tool_s}


def steady_figures(host: Dict[str, Any], repeat: int,
                   hook: str = 'update-status') -> Dict[str, Any]:
    """One hook on a settled host, without the floors and the action
    (which the same host without monitoring has already measured)."""
    with Bench(host) as bench:
        bench.settle()
        return {'hooks': {hook: bench.step(hook, repeat)}}


def action_figures(host: Dict[str, Any], repeat: int) -> Dict[str, Any]:
    """list-vgpu-types on a host, against reading its files and against
    walking the whole /sys/devices tree."""
    with Bench(host) as bench:
        bench.settle()
        action = bench.step({'action': ACTION}, repeat)
        files = action['opened_sys']
        read = _median_of([bench.process(READ_FILES, bare=True,
                                         stdin='\n'.join(files))
                           for _ in range(repeat)])
        walk = _median_of([bench.process(WALK, [bench.sys_devices()],
                                         bare=True)
                           for _ in range(repeat)])
        entries = sum(len(names) + len(dirs) for _, dirs, names in
                      os.walk(bench.sys_devices()))
    return {'action': action, 'read_files': read, 'walk': walk,
            'files': len(files), 'sys_devices_entries': entries}


# One exporter scrape as its service makes it (the process stays up, so
# Python's start and imports are not a scrape's), `repeat` times: the
# NVML read alone (the simulator's stand-in), then a whole scrape (the
# facts, an NVML read, the exposition rendered) with its CPU time.
SCRAPE = (
    'import json, sys, time\n'
    'from prometheus_client import generate_latest\n'
    'from prometheus_client.parser import text_string_to_metric_families\n'
    'from nvidia_vgpu.host.hostfs import host_path\n'
    'from nvidia_vgpu.monitoring import exporter, guest_metrics\n'
    'registry = exporter.service_registry(host_path(exporter.FACTS_PATH))\n'
    'reader = guest_metrics.GuestReader()\n'
    'runs = []\n'
    'for _ in range(int(sys.argv[1])):\n'
    '    wall = time.perf_counter()\n'
    '    reading = reader.read()\n'
    '    read_s = time.perf_counter() - wall\n'
    '    wall, cpu = time.perf_counter(), time.process_time()\n'
    '    text = generate_latest(registry)\n'
    '    runs.append({"read_s": read_s,\n'
    '                 "wall_s": time.perf_counter() - wall,\n'
    '                 "cpu_s": time.process_time() - cpu})\n'
    'series = [sample for family in text_string_to_metric_families(\n'
    '    text.decode()) for sample in family.samples]\n'
    'print(json.dumps({"runs": runs, "bytes": len(text),\n'
    '                  "series": len(series), "vgpus": len(reading.vgpus),\n'
    '                  "read": reading.read, "guest_series": len([\n'
    '                      s for s in series if "vm_uuid" in s.labels])}))\n')


def scrape_figures(host: Dict[str, Any], guests: List[Dict[str, Any]],
                   mdevs: List[Dict[str, Any]], repeat: int
                   ) -> Dict[str, Any]:
    """The exporter's scrape on a settled host once these guests run:
    the NVML read (the simulated NVML: its cost is the stand-in's, not
    the driver's) and a whole scrape (read, facts, rendering), medians
    of `repeat`, with the series and bytes served."""
    with Bench(host) as bench:
        bench.settle()
        simulation = bench.simulation
        with contextlib.redirect_stderr(bench.log):
            simulation.run_step({'guests': {'libvirt_domains': guests,
                                            'mdevs': mdevs}})
            script = os.path.join(simulation.meta, 'scrape.py')
            with open(script, 'w') as stream:
                stream.write(SCRAPE)
            done = simulation.run_on_host(
                [runner.AGENT_DIR + '/.venv/bin/python3', script,
                 str(repeat + 1)])
    if done['exit_code']:
        raise RuntimeError('scrape failed:\n' + done['stderr'][-3000:])
    found = json.loads(done['stdout'])
    runs = found.pop('runs')[1:]      # the first warms the caches
    return dict(found, **{key: statistics.median(run[key] for run in runs)
                          for key in ('read_s', 'wall_s', 'cpu_s')})


def _median_of(summaries: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One summary from summaries of single runs."""
    merged = dict(summaries[-1])
    for key in ('wall_s', 'cpu_s', 'cpu_with_children_s'):
        merged[key] = statistics.median(item[key] for item in summaries)
    merged['runs'] = len(summaries)
    return merged
