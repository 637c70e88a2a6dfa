"""Benchmark the charm's hooks and list-vgpu-types on simulated hosts.

    tox -e bench                      # the default run (a few minutes)
    tox -e bench -- --repeat 5 --noise 300000 --json figures.json

Prints tables (Markdown) and whether each target is met. Figures are
medians of --repeat runs of each hook process on this machine; the
simulator's hook tools are Python scripts, dearer than Juju's, so wall
times carry their cost (see the subprocess column) and CPU time (the hook
process's own) is the steadier measure of the charm's work.
"""
import argparse
import json
import statistics
import sys
import time
from typing import List

from bench import hosts, measure, report


def _numbers(text: str) -> List[int]:
    return [int(item) for item in text.split(',') if item.strip()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='bench', description=__doc__,
                                     formatter_class=argparse.
                                     RawDescriptionHelpFormatter)
    parser.add_argument('--gpus', type=_numbers, default=[0, 2, 8, 16],
                        help='GPU counts of the hook hosts (0,2,8,16)')
    parser.add_argument('--vfs', type=int, default=32,
                        help='VFs per GPU (32)')
    parser.add_argument('--types', type=int, default=40,
                        help='vGPU types per VF (40)')
    parser.add_argument('--action-gpus', type=int, default=8,
                        help='GPUs of the list-vgpu-types host (8)')
    parser.add_argument('--noise', type=int, default=150000,
                        help='unrelated /sys/devices entries on the '
                        'list-vgpu-types host (150000)')
    parser.add_argument('--repeat', type=int, default=3,
                        help='runs per hook; medians are shown (3)')
    parser.add_argument('--json', help='also write every figure here')
    parser.add_argument('--guests', type=int, default=hosts.GUESTS_PER_GPU,
                        help='running guests per GPU of the scraped host '
                        '({})'.format(hosts.GUESTS_PER_GPU))
    parser.add_argument('--scrape-only', action='store_true',
                        help='only the exporter\'s scrape on the largest '
                        'host')
    args = parser.parse_args(argv)
    started = time.monotonic()
    if args.scrape_only:
        scrape = _scrape(args)
        print(_scrape_section(scrape, args))
        _write(args.json, {'scrape': scrape})
        return 0

    figures = {'hosts': [], 'growth': []}
    rows = []
    for gpus in args.gpus:
        _progress('hooks on {} GPUs'.format(gpus))
        result = measure.hook_figures(
            hosts.gpu_host(gpus, args.vfs, args.types), args.repeat)
        figures['hosts'].append(dict(result, gpus=gpus, vfs=args.vfs,
                                     types=args.types))
        for name, hook in result['hooks'].items():
            rows.append(report.hook_row(name, gpus, hook, result['floor']))
        rows.append(report.hook_row('(hook floor)', gpus, result['floor'],
                                    result['floor']))
        rows.append(report.hook_row('(stack floor)', gpus,
                                    result['stack_floor'], result['floor']))
    # Growth in the other two dimensions, on the list-vgpu-types host size.
    for vfs, types in ((args.vfs // 4, args.types),
                       (args.vfs, args.types // 4)):
        _progress('growth: {} GPUs x {} VFs x {} types'.format(
            args.action_gpus, vfs, types))
        result = measure.hook_figures(
            hosts.gpu_host(args.action_gpus, vfs, types), args.repeat,
            hooks=('update-status',))
        figures['growth'].append(dict(result, gpus=args.action_gpus,
                                      vfs=vfs, types=types))
    largest_gpus = max(args.gpus)
    _progress('update-status on {} GPUs, monitored (nrpe and a COS '
              'agent related)'.format(largest_gpus))
    monitored = measure.steady_figures(
        hosts.gpu_host(largest_gpus, args.vfs, args.types, monitored=True),
        args.repeat)
    figures['monitored'] = dict(monitored, gpus=largest_gpus, vfs=args.vfs,
                                types=args.types)
    rows.append(report.hook_row(
        'update-status, monitored', largest_gpus,
        monitored['hooks']['update-status'],
        next(host['floor'] for host in figures['hosts']
             if host['gpus'] == largest_gpus)))
    _progress('list-vgpu-types on {} GPUs x {} VFs x {} types, {} other '
              '/sys/devices entries'.format(args.action_gpus, args.vfs,
                                            args.types, args.noise))
    action = measure.action_figures(
        hosts.gpu_host(args.action_gpus, args.vfs, args.types, args.noise),
        args.repeat)
    figures['action'] = action
    figures['scrape'] = _scrape(args)

    print('## Hooks: {} VFs x {} vGPU types per GPU, medians of {} runs\n'
          .format(args.vfs, args.types, args.repeat))
    print(report.table(report.HOOK_HEADER, rows))
    print('\nhook floor: Python importing charms.reactive and charmhelpers '
          '(core, fetch), one lspci. stack floor: that plus charms.openstack '
          'and charmhelpers.contrib.openstack, which layer:openstack loads '
          'into every hook. One hook tool call costs {} ms of wall time in '
          'this simulator (a Python script; Juju\'s are a Go client).'
          .format(report.milliseconds(statistics.median(
              host['tool_call_s'] for host in figures['hosts']))))
    print('\n## list-vgpu-types: {} GPUs x {} VFs x {} types ({} files '
          'reported), /sys/devices of {} entries\n'.format(
              args.action_gpus, args.vfs, args.types, action['files'],
              action['sys_devices_entries']))
    costs = [(name, action[key]['wall_s'], action[key]['cpu_s'])
             for name, key in (('list-vgpu-types', 'action'),
                               ('floor: read exactly those files',
                                'read_files'),
                               ('naive: walk /sys/devices', 'walk'))]
    gpu_less = [host['hooks'][measure.ACTION] for host in figures['hosts']
                if host['gpus'] == 0]
    if gpu_less:
        costs.insert(1, (
            'list-vgpu-types above its fixed cost (less the same action '
            'on the host without GPUs)',
            action['action']['wall_s'] - gpu_less[0]['wall_s'],
            action['action']['cpu_s'] - gpu_less[0]['cpu_s']))
    print(report.table(['what', 'wall ms', 'CPU ms', 'ratio to reading '
                        'the files (wall)'], [
        [name, report.milliseconds(wall), report.milliseconds(cpu),
         '{:.2f}'.format(report.ratio(wall,
                                      action['read_files']['wall_s']))]
        for name, wall, cpu in costs]))

    points = sorted(figures['hosts'] + figures['growth'],
                    key=lambda point: _size(point))
    fixed = {name: points[0]['hooks'][name]['cpu_s']
             if _size(points[0]) == 0 else 0.0
             for name in ('update-status', measure.ACTION)}
    exponents = {name: report.growth_exponent(
        [(_size(point), point['hooks'][name]['cpu_s']) for point in points],
        fixed[name]) for name in fixed}
    print('\n## Growth in GPUs x VFs x types (CPU ms)\n')
    print(report.table(['GPUs x VFs x types', 'update-status',
                        'list-vgpu-types'], [
        ['{} x {} x {} = {}'.format(point['gpus'], point['vfs'],
                                    point['types'], _size(point)),
         report.milliseconds(point['hooks']['update-status']['cpu_s']),
         report.milliseconds(point['hooks'][measure.ACTION]['cpu_s'])]
        for point in points]))
    largest = max(figures['hosts'], key=_size)
    found = report.verdicts(
        largest['hooks']['update-status'], largest['floor'],
        action['action'], action['read_files'], action['walk'],
        exponents['update-status'], exponents[measure.ACTION])
    found += report.monitored_verdicts(
        figures['monitored']['hooks']['update-status'],
        largest['hooks']['update-status'])
    print('\n## Targets\n')
    print(report.verdict_lines(found))
    print('\nFor reference, update-status CPU on {} GPUs against the stack '
          'floor (charms.openstack loaded): {:.2f}x'.format(
              largest['gpus'], report.ratio(
                  largest['hooks']['update-status']['cpu_s'],
                  largest['stack_floor']['cpu_s'])))
    print('\n' + _scrape_section(figures['scrape'], args))
    print('\n({:.0f} s)'.format(time.monotonic() - started))
    _write(args.json, figures)
    return 0


def _scrape(args) -> dict:
    """The exporter's scrape on the largest host, monitored, with
    `--guests` running guests per GPU (the simulated NVML)."""
    gpus = max(args.gpus)
    _progress('one exporter scrape on {} GPUs with {} guests each'.format(
        gpus, args.guests))
    domains, mdevs = hosts.running_guests(gpus, args.guests)
    return dict(measure.scrape_figures(
        hosts.gpu_host(gpus, args.vfs, args.types, monitored=True),
        domains, mdevs, args.repeat), gpus=gpus)


def _scrape_section(scrape: dict, args) -> str:
    return ('## The exporter: one scrape on {} GPUs, {} running guests\n\n'
            .format(scrape['gpus'], scrape['vgpus']) +
            report.table(['what', 'ms'], [
                ['whole scrape (facts, NVML read, rendering), wall',
                 report.milliseconds(scrape['wall_s'])],
                ['whole scrape, CPU', report.milliseconds(scrape['cpu_s'])],
                ['of it, the NVML read (the simulated NVML), wall',
                 report.milliseconds(scrape['read_s'])]]) +
            '\n\n{} series, {} of them per guest, {} bytes; medians of {} '
            'scrapes in one exporter process.'.format(
                scrape['series'], scrape['guest_series'], scrape['bytes'],
                args.repeat))


def _write(path, figures) -> None:
    if path:
        with open(path, 'w') as stream:
            json.dump(figures, stream, indent=1, sort_keys=True)


def _size(point) -> int:
    return point['gpus'] * point['vfs'] * point['types']


def _progress(text: str) -> None:
    sys.stderr.write('bench: {}\n'.format(text))
    sys.stderr.flush()


if __name__ == '__main__':
    sys.exit(main())
