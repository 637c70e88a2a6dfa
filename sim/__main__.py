"""Command line: python -m sim [--charm-dir DIR] [--keep] SCENARIO.yaml"""
import argparse
import json
import os
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


if __name__ == '__main__':
    sys.exit(main())
