"""Host commands and Juju hook tools faked on PATH, for tests of every
tier (unit_tests/ and nova_tests/ share it)."""
import json
import os
import sys


class FakeCommands:
    """Executables on PATH that answer as told and log how they were run.

    The boundary for host commands and Juju hook tools in unit tests: the
    code under test runs its real subprocess calls against these.
    """

    SCRIPT = (
        '#!{python}\n'
        'import json, os, sys\n'
        'name = os.path.basename(sys.argv[0])\n'
        'with open({log!r}, "a") as log:\n'
        '    log.write(json.dumps([name] + sys.argv[1:]) + "\\n")\n'
        'spec = json.load(open({specs!r})).get(name, {{}})\n'
        'spec = spec.get("by_last_argument", {{}}).get(sys.argv[-1], spec)\n'
        'sys.stdout.write(spec.get("stdout", ""))\n'
        'sys.stderr.write(spec.get("stderr", ""))\n'
        'sys.exit(spec.get("exit", 0))\n')

    def __init__(self, directory, monkeypatch):
        self.bin = os.path.join(directory, 'bin')
        os.makedirs(self.bin)
        self.log = os.path.join(directory, 'calls.jsonl')
        self.specs = os.path.join(directory, 'specs.json')
        self._specs = {}
        self._save()
        monkeypatch.setenv('PATH', self.bin + os.pathsep +
                           os.environ.get('PATH', ''))

    def _save(self):
        with open(self.specs, 'w') as stream:
            json.dump(self._specs, stream)

    def set(self, name, stdout='', exit=0, stderr='', by_last_argument=None):
        """Make `name` print stdout/stderr and exit with `exit`;
        by_last_argument: last argument -> {stdout, exit, stderr} where it
        answers otherwise (dpkg-query for one package)."""
        path = os.path.join(self.bin, name)
        if not os.path.exists(path):
            with open(path, 'w') as stream:
                stream.write(self.SCRIPT.format(
                    python=sys.executable, log=self.log, specs=self.specs))
            os.chmod(path, 0o755)
        self._specs[name] = {'stdout': stdout, 'exit': exit,
                             'stderr': stderr,
                             'by_last_argument': by_last_argument or {}}
        self._save()

    @property
    def calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as stream:
            return [json.loads(line) for line in stream]
