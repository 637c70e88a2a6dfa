"""Command line: python -m sim [--charm-dir DIR] [--keep] SCENARIO.yaml"""
import argparse
import json
import os
import subprocess
import sys

from sim import runner, scenario as scenarios

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog='sim', description='Run a scenario against the charm; print '
        'the JSON result on stdout (contract: shared/spec/simulator.md).')
    parser.add_argument('scenario', help='scenario YAML file')
    parser.add_argument('--charm-dir', help='a charm built by charm build, '
                        'instead of the layer in src/')
    parser.add_argument('--keep', action='store_true',
                        help='keep the sandbox directory (path on stderr)')
    args = parser.parse_args(argv)
    if args.charm_dir and not os.environ.get('SIM_ISOLATED'):
        return _rerun_isolated(argv if argv is not None else sys.argv[1:])
    try:
        scenario = scenarios.load(args.scenario)
        if args.charm_dir and not os.path.isdir(args.charm_dir):
            raise scenarios.ScenarioError(
                '--charm-dir {}: not a directory'.format(args.charm_dir))
        simulation = runner.Simulation(
            scenario, REPO_ROOT,
            built_charm=os.path.abspath(args.charm_dir)
            if args.charm_dir else None)
        try:
            result = simulation.run()
        finally:
            if args.keep:
                sys.stderr.write('sandbox kept: {}\n'.format(simulation.work))
            else:
                simulation.cleanup()
    except scenarios.ScenarioError as error:
        sys.stderr.write('sim: {}\n'.format(error))
        return 2
    json.dump(result, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write('\n')
    return 0


def _rerun_isolated(argv) -> int:
    """A built charm's real layer:basic bootstrap writes as root outside
    the charm: bin/charm-env to /usr/local/sbin, and on upgrade-charm
    /root/.pydistutils.cfg. Run it in a private mount namespace with a
    throw-away /usr/local/sbin and /root overlaid by a throw-away layer
    (the interpreter may live under /root), so nothing reaches this
    machine."""
    command = ('mount -t tmpfs tmpfs /usr/local/sbin && '
               'mount -t tmpfs tmpfs /mnt && mkdir /mnt/upper /mnt/work && '
               'mount -t overlay overlay -o lowerdir=/root,'
               'upperdir=/mnt/upper,workdir=/mnt/work /root && '
               'exec "$0" -m sim "$@"')
    try:
        done = subprocess.run(
            ['unshare', '--mount', '--propagation', 'private', 'sh', '-c',
             command, sys.executable] + list(argv),
            env=dict(os.environ, SIM_ISOLATED='1'), cwd=os.getcwd())
    except FileNotFoundError:
        done = None
    if done is None or done.returncode == 1 and not os.geteuid() == 0:
        sys.stderr.write('sim: --charm-dir runs the real layer:basic '
                         'bootstrap, which writes /usr/local/sbin; it needs '
                         'root and unshare (util-linux) to keep that in a '
                         'private mount namespace\n')
        return 2
    return done.returncode


if __name__ == '__main__':
    sys.exit(main())
