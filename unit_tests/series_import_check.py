"""Compile and import everything that runs inside a unit's hook process,
under the Python running this script (each series' one, from
test_python_versions.py), with the series' run-time packages.

Prints one JSON document: {"python": "X.Y", "compiled": N, "imported": [...],
"failures": [[what, error], ...]}. It changes nothing outside a temporary
directory.
"""
import importlib
import importlib.util
import json
import os
import sys
import tempfile
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What runs in a hook process: the charm layer, the interface layer, the
# simulator's stand-ins for the layers and charms.openstack, and its
# in-process patches.
HOOK_SIDE = ('src', 'interfaces', os.path.join('sim', 'emulation'),
             os.path.join('sim', 'runtime'),
             os.path.join('sim', 'stand_ins'))
# Scripts that act when run (hook stubs, actions): compiled, not imported.
SCRIPTS = ('actions', 'hook.py', 'os_actions.py', 'charm-pre-install')


def python_files():
    for top in HOOK_SIDE:
        for directory, dirnames, files in os.walk(os.path.join(REPO, top)):
            dirnames[:] = [name for name in dirnames
                           if name != '__pycache__']
            for name in sorted(files):
                path = os.path.join(directory, name)
                if os.path.islink(path):
                    continue
                if name.endswith('.py'):
                    yield path
                elif os.access(path, os.X_OK):
                    with open(path, 'rb') as stream:
                        if b'python' in stream.readline():
                            yield path


def is_script(path):
    relative = os.path.relpath(path, REPO)
    return any(part in SCRIPTS for part in relative.split(os.sep))


def import_file(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


def main():
    failures = []
    compiled = 0
    for path in python_files():
        with open(path, 'rb') as stream:
            source = stream.read()
        try:
            compile(source, path, 'exec', dont_inherit=True)
            compiled += 1
        except SyntaxError as error:
            failures.append([os.path.relpath(path, REPO), repr(error)])

    work = tempfile.mkdtemp(prefix='series-import-')
    os.environ.update({'CHARM_DIR': os.path.join(REPO, 'src'),
                       'JUJU_CHARM_DIR': os.path.join(REPO, 'src'),
                       'UNIT_STATE_DB': os.path.join(work, 'unit-state.db'),
                       'JUJU_UNIT_NAME': 'nova-compute-nvidia-vgpu/0',
                       'NVIDIA_VGPU_HOST_ROOT': work})
    import charmhelpers.osplatform
    # charmhelpers refuses Debian, where these checks may run.
    charmhelpers.osplatform.get_platform = lambda: 'ubuntu'
    sys.path[:0] = [os.path.join(REPO, 'src', 'lib'),
                    os.path.join(REPO, 'sim', 'stand_ins'),
                    os.path.join(REPO, 'sim', 'runtime')]
    imported = []
    modules = []
    lib = os.path.join(REPO, 'src', 'lib')
    for path in python_files():
        if is_script(path) or not path.startswith(lib + os.sep):
            continue
        relative = os.path.relpath(path, lib)[:-len('.py')]
        modules.append(relative.replace(os.sep, '.').replace(
            '.__init__', ''))
    stand_ins = os.path.join(REPO, 'sim', 'stand_ins')
    for path in python_files():
        if path.startswith(stand_ins + os.sep):
            relative = os.path.relpath(path, stand_ins)[:-len('.py')]
            modules.append(relative.replace(os.sep, '.').replace(
                '.__init__', ''))
    modules.append('sitecustomize')
    for name in modules:
        try:
            importlib.import_module(name)
            imported.append(name)
        except Exception:
            failures.append([name, traceback.format_exc().splitlines()[-1]])
    files = [('relations.nova_vgpu.provides',
              os.path.join(REPO, 'interfaces', 'nova-vgpu', 'provides.py')),
             ('relations.cos_agent.provides',
              os.path.join(REPO, 'interfaces', 'cos-agent', 'provides.py'))]
    for name in sorted(os.listdir(os.path.join(REPO, 'src', 'reactive'))):
        if name.endswith('.py'):
            files.append(('reactive.' + name[:-3],
                          os.path.join(REPO, 'src', 'reactive', name)))
    for name in ('basic', 'layer_openstack', 'juju_info',
                 'tls_certificates'):
        files.append(('emulation.' + name, os.path.join(
            REPO, 'sim', 'emulation', name + '.py')))
    for name, path in files:
        try:
            import_file(name, path)
            imported.append(name)
        except Exception:
            failures.append([name, traceback.format_exc().splitlines()[-1]])
    json.dump({'python': '{}.{}'.format(*sys.version_info[:2]),
               'compiled': compiled, 'imported': sorted(imported),
               'failures': failures}, sys.stdout)


if __name__ == '__main__':
    main()
