"""The fake nvidia-smi's MIG forms, answered from the host state's MIG
(sim/mig.py holds the rules) in the forms NVIDIA prints them.

Output forms are taken from the examples in NVIDIA's MIG User Guide,
"Getting Started with MIG"
(https://docs.nvidia.com/datacenter/tesla/mig-user-guide/getting-started-with-mig.html):
`-i N -mig 1` ("Enabled MIG Mode for GPU ...", the "pending enable
state" warnings), `--query-gpu=pci.bus_id,mig.mode.current
--format=csv`, `mig -lgip`, `mig -cgi ... [-C]`, `mig -lgi`, `mig
-dgi`; the "Unable to ... : <reason>" / "Failed to ... GPU instances:
<reason>" pair is that guide's -cgi error form, used here for -dgi too.
Columns the scenario gives no figures for (memory, SMs, engines) read
N/A. A GPU that is not MIG-capable reads [N/A] in a query, as
nvidia-smi shows a field a GPU does not support.

Exit statuses are those the nvidia-smi man page lists under RETURN
VALUE (https://docs.nvidia.com/deploy/nvidia-smi/index.html): 2 a bad
argument, 3 not available on the target device, 6 nothing found, 255
other error. What NVIDIA's examples do not show is said on stderr in a
line that starts "simulated nvidia-smi:".
"""
import copy
import os
import sys

from sim.fakebin.state import HOST_ROOT, Exit, parse

SIMULATED = 'simulated nvidia-smi: '
# NVML's texts for its errors, as nvidia-smi ends its messages with them.
IN_USE = 'In use by another client'
INSUFFICIENT = 'Insufficient Resources'
# The compute instance profile that spans a whole GPU instance of n
# slices (NVML's NVML_COMPUTE_INSTANCE_PROFILE_<n>_SLICE), which -C
# creates.
FULL_CI_PROFILE = {1: 0, 2: 1, 3: 2, 4: 3, 6: 6, 7: 4}
_GPU_OPTIONS = ('-i', '--id', '-mig', '--multi-instance-gpu',
                '--query-gpu', '--query-remapped-rows', '--format')
_QUERIES = ('--query-gpu', '--query-remapped-rows')
_GPU_ACTIONS = ('-mig', '--multi-instance-gpu', '-r',
                '--gpu-reset') + _QUERIES
_MIG_OPTIONS = ('-i', '--id', '-cgi', '--create-gpu-instance', '-gi',
                '--gpu-instance-id')
_MIG_FLAGS = ('-lgip', '--list-gpu-instance-profiles', '-lgipp',
              '--list-gpu-instance-possible-placements', '-lgi',
              '--list-gpu-instances', '-dgi', '--destroy-gpu-instance',
              '-C', '--default-compute-instance')
_MIG_ACTIONS = {'-lgip': 'lgip', '--list-gpu-instance-profiles': 'lgip',
                '-lgipp': 'lgipp',
                '--list-gpu-instance-possible-placements': 'lgipp',
                '-lgi': 'lgi', '--list-gpu-instances': 'lgi',
                '-cgi': 'cgi', '--create-gpu-instance': 'cgi',
                '-dgi': 'dgi', '--destroy-gpu-instance': 'dgi'}


def _sim():
    """The simulator's own modules, imported only when a MIG form is
    asked (the launcher put the simulator's tree on sys.path)."""
    from sim import host, mig
    return host, mig


def answer(state, argv):
    """Answer a MIG form: (exit status, whether the host changed); None
    for any other argv (the caller says it does not emulate it)."""
    if argv[:1] == ['mig']:
        return _mig_command(state, argv[1:])
    if argv == ['-q']:
        return _finish(_query_lines(state), 0, False)
    if argv == ['vgpu', '-s', '-v']:
        return _finish(_supported_type_lines(state), 0, False)
    if argv[:1] == ['vgpu'] and '-shm' in argv:
        return _heterogeneous_mode(state, argv[1:])
    opts, rest = parse(argv, _GPU_OPTIONS, ('-r', '--gpu-reset'))
    actions = [name for name in _GPU_ACTIONS if name in opts]
    if rest or len(actions) != 1 or (
            '--format' in opts) != (actions[0] in _QUERIES):
        return None
    gpus = select(state, opts.get('-i', opts.get('--id')))
    if actions[0] in _QUERIES:
        return query(state, gpus, actions[0], opts[actions[0]],
                     opts['--format'])
    if actions[0] in ('-r', '--gpu-reset'):
        return reset(state, gpus)
    return set_mode(state, gpus, opts[actions[0]])


def bus_id(address):
    """A PCI address as nvidia-smi prints it: 0000:4f:00.0 ->
    00000000:4F:00.0."""
    domain, rest = address.split(':', 1)
    return '{:0>8}:{}'.format(domain, rest).upper()


def gpus_of(state):
    """The GPUs nvidia-smi numbers: the NVIDIA GPUs (the driver binds
    them all once it is loaded), in PCI address order."""
    host, _ = _sim()
    return sorted((function for function in state['host']['pci']
                   if host.is_nvidia_gpu(function)),
                  key=lambda function: function['address'].lower())


def select(state, ids):
    """[(index, function)] of the GPUs -i names (indexes or PCI bus ids,
    comma-separated; 00000000:41:00.0 or 0000:41:00.0), or all."""
    gpus = list(enumerate(gpus_of(state)))
    if ids is None:
        return gpus
    chosen = []
    for token in ids.split(','):
        token = token.strip().lower()
        found = [(index, function) for index, function in gpus
                 if token == str(index) or token in (
                     function['address'].lower(),
                     bus_id(function['address']).lower())]
        if not found:
            raise Exit(6, '{}no GPU {} on this host (it has {})\n'.format(
                SIMULATED, token, len(gpus)))
        chosen += [gpu for gpu in found if gpu not in chosen]
    return chosen


def _field(depth, name, value):
    """A field as `nvidia-smi -q` prints it: four spaces a level, the
    name padded so that ' : ' starts at column 42."""
    return '{}{} : {}'.format(' ' * 4 * depth, name.ljust(42 - 4 * depth),
                              value)


def _mixed_size(function):
    return function.get('sriov', {}).get('mixed_size')


def _query_lines(state):
    """`nvidia-smi -q`, its vGPU fields only, in the layout of NVIDIA's
    vGPU User Guide ("Putting a GPU Into Mixed-Size Mode"): under each
    GPU, "vGPU Device Capability" and "GPU Virtualization Mode". A GPU
    whose scenario says nothing of mixed-size mode prints no such field
    (as a driver before the mode); other fields read N/A here."""
    lines = []
    for function in gpus_of(state):
        lines.append('GPU {}'.format(bus_id(function['address'])))
        mixed = _mixed_size(function)
        if mixed is None:
            continue
        lines += ['    vGPU Device Capability', _field(
            2, 'Heterogeneous Time-Slice Sizes',
            'Supported' if mixed['supported'] else 'Not Supported'),
            '    GPU Virtualization Mode',
            _field(2, 'Virtualization Mode', 'Host VGPU'),
            _field(2, 'Host VGPU Mode', 'SR-IOV'),
            _field(2, 'vGPU Heterogeneous Mode', mixed_mode(
                state['host'], function) if mixed['supported'] else 'N/A')]
    return lines


def mixed_mode(host, function):
    """A GPU's mixed-size mode now: runtime state, Disabled after every
    reboot (the host's mixed_modes)."""
    return host.get('mixed_modes', {}).get(function['address'], 'Disabled')


def _heterogeneous_mode(state, args):
    """`vgpu -i GPU -shm 1|0`, NVIDIA's vGPU User Guide, "Putting a GPU
    Into Mixed-Size Mode": refused with NVML's "In use by another
    client" while a vGPU exists on the GPU (its driver's source, and a
    third-party report: docs/facts/mixed-size.md), "Not Supported" where
    the driver does not mix sizes. Its success line is not in the
    guide, so the simulator's own."""
    opts, rest = parse(args, ('-i', '-shm'), ())
    if rest or opts.get('-shm') not in ('0', '1') or '-i' not in opts:
        raise Exit(2, SIMULATED + 'vgpu -shm takes -i GPU and 1 or 0\n')
    host, _ = _sim()
    wanted = 'Enabled' if opts['-shm'] == '1' else 'Disabled'
    code = 0
    for _, function in select(state, opts['-i']):
        bus = bus_id(function['address'])
        vfs = set(host.vf_addresses(function['address'], state['host'].get(
            'vfs', {}).get(function['address'], 0)))
        if not (_mixed_size(function) or {}).get('supported'):
            sys.stderr.write('Failed to set vGPU heterogeneous mode for GPU '
                             '{}: Not Supported\n'.format(bus))
            code = max(code, 3)
        elif any(mdev['parent'] in vfs for mdev in host.mdevs_now(
                os.path.join(HOST_ROOT, 'sys'), state['host']['mdevs'])):
            sys.stderr.write('Failed to set vGPU heterogeneous mode for GPU '
                             '{}: {}\n'.format(bus, IN_USE))
            code = max(code, 19)
        else:
            state['host'].setdefault('mixed_modes', {})[
                function['address']] = wanted
            sys.stdout.write('{}vGPU heterogeneous mode {} for GPU {}\n'
                             .format(SIMULATED, wanted.lower(), bus))
    return code, True


def _supported_type_lines(state):
    """`nvidia-smi vgpu -s -v` as NVIDIA's guide prints it ("Placing a
    vGPU on a Physical GPU in Mixed-Size Mode"), with the "Max Instances"
    of a real capture (docs/facts/mixed-size.md): each
    time-sliced type of each GPU with its name and, where the scenario
    gives them, its maximum per GPU (sriov.vgpu_type_max_instances) and
    its placements (sriov.mixed_size)."""
    lines = []
    for function in gpus_of(state):
        lines.append('GPU {}'.format(bus_id(function['address'])))
        sriov = function.get('sriov', {})
        placements = (_mixed_size(function) or {}).get('placements', {})
        most = {int(number): count for number, count in
                sriov.get('vgpu_type_max_instances', {}).items()}
        names = {int(type_id.split('-')[-1]): spec.get('name', type_id)
                 for type_id, spec in sriov.get('vf_mdev_types', {}).items()}
        names.update({int(number): name for number, name
                      in sriov.get('vf_vgpu_types', {}).items()})
        on_gis = _types_on_gis(function)
        names.update({number: name for number, (name, _, _, _)
                      in on_gis.items()})
        for number, name in sorted(names.items()):
            lines += [_field(1, 'vGPU Type ID', '{:#x}'.format(number)),
                      _field(2, 'Name', name)]
            if number in most:
                lines.append(_field(2, 'Max Instances', most[number]))
            if on_gis:
                lines += _gi_fields(on_gis.get(number))
            placed = placements.get('nvidia-{}'.format(number))
            if placed:
                lines += [_field(2, 'Placement Size', placed['size']),
                          _field(2, 'Supported Placement IDs', ' '.join(
                              str(start) for start in placed['ids']))]
    return lines


def _types_on_gis(function):
    """{type number: (name, GPU instance profile id, max per card, max
    per GI)} of a GPU whose driver prints the GPU-instance fields
    (vendor-specific VFIO, mig.vgpu_types_per_gi given: a driver of
    Blackwell's time-sliced-on-MIG, R575 on); {} for any other GPU."""
    _, mig = _sim()
    spec = function.get('mig', {})
    if 'vgpu_types_per_gi' not in spec or not mig.vfio_form(function):
        return {}
    profiles = {profile['name']: profile
                for profile in spec.get('gpu_instance_profiles', [])}
    return {int(number): (name, profiles[profile]['id'],
                          profiles[profile]['max'] * mig.per_gi(
                              function, int(number)),
                          mig.per_gi(function, int(number)))
            for profile, types in spec.get('vgpu_types', {}).items()
            for number, name in types.items()}


def _gi_fields(on_gi):
    """A type's GPU-instance fields: N/A for a time-sliced type (it runs
    on no GPU instance), as drivers with these fields print them."""
    if on_gi is None:
        return [_field(2, 'GPU Instance Profile ID', 'N/A'),
                _field(2, 'Max Instances Per GI', 'N/A')]
    _, profile_id, per_card, per_gi = on_gi
    return [_field(2, 'Max Instances', per_card),
            _field(2, 'GPU Instance Profile ID', profile_id),
            _field(2, 'Max Instances Per GI', per_gi)]


def _finish(lines, code, changed):
    sys.stdout.write(''.join(line + '\n' for line in lines))
    return code, changed


# ------------------------------------------------------------ GPU forms

def set_mode(state, gpus, value):
    """-mig 1|0 on each GPU: applied, or pending (sim/mig.py set_mode)."""
    _, mig = _sim()
    if value not in ('0', '1'):
        raise Exit(2, SIMULATED + '-mig takes 1 or 0\n')
    wanted = 'enabled' if value == '1' else 'disabled'
    lines, code = [], 0
    for _, function in gpus:
        bus = bus_id(function['address'])
        if 'mig' not in function:
            sys.stderr.write('{}GPU {} is not MIG-capable (no mig: in the '
                             'scenario)\n'.format(SIMULATED, bus))
            code = max(code, 3)
            continue
        outcome = mig.set_mode(state['host'], function, wanted)
        pending = ('Warning: MIG mode is in pending {} state for GPU {}:'
                   .format('enable' if value == '1' else 'disable', bus))
        if outcome == 'applied':
            lines.append('{} MIG Mode for GPU {}'.format(
                wanted.capitalize(), bus))
        elif outcome == 'reset':
            lines += [pending + 'Not Supported',
                      'Reboot the system or try nvidia-smi --gpu-reset to '
                      'make MIG mode effective on GPU {}'.format(bus)]
        else:
            lines += [pending + IN_USE,
                      '{} is currently being used by one or more other '
                      'processes (e.g. CUDA application or a monitoring '
                      'application such as another instance of nvidia-smi).'
                      ' Please first kill all processes using the device '
                      'and retry the command or reboot the system to make '
                      'MIG mode effective.'.format(bus)]
            code = 255
    return _finish(lines + ['All done.'], code, True)


def reset(state, gpus):
    """-r: each GPU is reset unless it is in use (sim/mig.py reset)."""
    _, mig = _sim()
    lines, code = [], 0
    for _, function in gpus:
        bus = bus_id(function['address'])
        busy = mig.reset(state['host'], function)
        if busy:
            sys.stderr.write('{}GPU {} is in use ({}): not reset\n'.format(
                SIMULATED, bus, busy))
            code = 255
        else:
            lines.append('{}GPU {} reset'.format(SIMULATED, bus))
    return _finish(lines, code, True)


# What each query form answers, by field (the man page's names;
# --query-remapped-rows names the GPU gpu_bus_id).
_QUERY_FIELDS = {
    '--query-gpu': ('index', 'pci.bus_id', 'mig.mode.current',
                    'mig.mode.pending',
                    'ecc.errors.uncorrected.volatile.total'),
    '--query-remapped-rows': ('gpu_bus_id', 'remapped_rows.pending',
                              'remapped_rows.failure'),
}
# nvidia-smi's exit status for a GPU that "has fallen off the bus or has
# otherwise become inaccessible" (man page, RETURN VALUE).
GPU_LOST = 15


def query(state, gpus, form_name, fields, form):
    """--query-gpu=FIELDS or --query-remapped-rows=FIELDS,
    --format=csv[,noheader][,nounits]: a line per GPU. A GPU that fell
    off the bus (an Xid 79 this boot, sim/gpu_errors.py) is not listed,
    and the exit status says one was lost. Row remapping reads [N/A]
    where the GPU does not report it, 0 or 1 elsewhere (the values a
    third party's compatibility test of this query expects)."""
    from sim import gpu_errors   # as _sim(): only when asked
    names = [name.strip() for name in fields.split(',')]
    form = form.split(',')
    if form[0] != 'csv' or set(form[1:]) - {'noheader', 'nounits'} or \
            set(names) - set(_QUERY_FIELDS[form_name]):
        return None
    host = state['host']
    mig_state = host.get('mig', {})

    def value(index, function, name):
        errors = gpu_errors.errors_of(host, function['address'])
        gpu = mig_state.get(function['address'])
        if name == 'index':
            return str(index)
        if name in ('pci.bus_id', 'gpu_bus_id'):
            return bus_id(function['address'])
        if name == 'ecc.errors.uncorrected.volatile.total':
            return str(errors['ecc_uncorrected'])
        if name.startswith('remapped_rows.'):
            if not gpu_errors.reports_rows(function, gpu):
                return '[N/A]'
            key = 'rows_pending' if name.endswith('pending') else \
                'rows_failed'
            return '1' if errors[key] else '0'
        if gpu is None:
            return '[N/A]'
        mode = gpu['mode' if name == 'mig.mode.current' else 'pending']
        return mode.capitalize()
    listed = [(index, function) for index, function in gpus
              if not gpu_errors.lost(host, function['address'])]
    lines = [] if 'noheader' in form else [', '.join(names)]
    lines += [', '.join(value(index, function, name) for name in names)
              for index, function in listed]
    for _, function in gpus:
        if gpu_errors.lost(host, function['address']):
            sys.stderr.write('{}GPU {} has fallen off the bus: not '
                             'listed\n'.format(
                                 SIMULATED, bus_id(function['address'])))
    return _finish(lines, 0 if len(listed) == len(gpus) else GPU_LOST,
                   False)


# ------------------------------------------------------------ mig forms

def _mig_command(state, args):
    opts, rest = parse(args, _MIG_OPTIONS, _MIG_FLAGS)
    actions = [_MIG_ACTIONS[name] for name in opts if name in _MIG_ACTIONS]
    if rest or len(actions) != 1:
        return None
    action = actions[0]
    compute = opts.get('-C', opts.get('--default-compute-instance'))
    gis = opts.get('-gi', opts.get('--gpu-instance-id'))
    if (compute and action != 'cgi') or (gis and action != 'dgi'):
        return None
    gpus = _mig_enabled(state, select(state, opts.get('-i', opts.get(
        '--id'))), 3 if action == 'cgi' else 6)
    if action == 'lgip':
        return _finish(profiles_table(state, gpus), 0, False)
    if action == 'lgipp':
        return placements_list(gpus)
    if action == 'lgi':
        return list_instances(state, gpus)
    if action == 'cgi':
        return create(state, gpus, opts.get('-cgi', opts.get(
            '--create-gpu-instance')), bool(compute))
    return destroy(state, gpus, gis)


def _mig_enabled(state, gpus, code):
    """The GPUs among these whose MIG mode is enabled; none: exit."""
    _, mig = _sim()
    enabled = [(index, function) for index, function in gpus
               if mig.mig_enabled(state['host'], function)]
    if not enabled:
        raise Exit(code, '{}MIG mode is not enabled on GPU {}\n'.format(
            SIMULATED, ', '.join(bus_id(function['address'])
                                 for _, function in gpus) or '(none)'))
    return enabled


def profiles_table(state, gpus):
    """mig -lgip: each GPU's profiles, Free/Total as sim/mig.py counts
    them; the Name column widens for a longer profile name."""
    _, mig = _sim()
    rows = [(index, function, profile) for index, function in gpus
            for profile in mig.profiles(function)]
    width = max([16] + [len('MIG ' + profile['name'])
                        for _, _, profile in rows])
    extra = width - 16
    rule = '+' + '-' * (77 + extra) + '+'
    lines = [rule, '| GPU instance profiles:'.ljust(78 + extra) + '|',
             '| GPU   Name' + ' ' * (13 + extra) +
             'ID    Instances   Memory     P2P    SM    DEC   ENC  |',
             '|' + ' ' * (30 + extra) +
             'Free/Total   GiB              CE    JPEG  OFA  |',
             '|' + '=' * (77 + extra) + '|']
    for index, function, profile in rows:
        free = mig.free_instances(
            function, state['host']['mig'][function['address']], profile)
        lines += [
            '|{:>4}  {:<{}}{:>4}{:>6}/{:<3}      {:<11}{:<6}{:>3}{:>6}{:>6}'
            '   |'.format(index, 'MIG ' + profile['name'], width,
                          profile['id'], free, profile['max'], 'N/A', 'N/A',
                          'N/A', 'N/A', 'N/A'),
            '|' + ' ' * (59 + extra) + '{:>3}{:>6}{:>6}   |'.format(
                'N/A', 'N/A', 'N/A'),
            rule]
    return lines


def placements_list(gpus):
    """mig -lgipp: each profile's possible placements, {starts}:size in
    memory slices, as NVIDIA's MIG User Guide prints them; None (not
    emulated) where the scenario gives none of these GPUs placements."""
    _, mig = _sim()
    lines = []
    for index, function in gpus:
        if not mig.placed(function):
            continue
        for profile in mig.profiles(function):
            starts = sorted(profile.get('placements', []))
            if starts:
                lines.append('GPU {:2d} Profile ID {:2d} {}: {{{}}}:{}'.format(
                    index, profile['id'],
                    'Placements' if len(starts) > 1 else 'Placement ',
                    ','.join(str(start) for start in starts),
                    profile['size']))
    return _finish(lines, 0, False) if lines else None


def list_instances(state, gpus):
    """mig -lgi: the GIs, by GPU, then as NVIDIA's examples order them
    (profile ID descending, then GI ID); the Name column widens for a
    longer profile name."""
    rows = [(index, gi) for index, function in gpus
            for gi in sorted(state['host']['mig'][function['address']][
                'gpu_instances'], key=lambda gi: (-gi['profile_id'],
                                                  gi['id']))]
    if not rows:
        raise Exit(6, SIMULATED + 'no GPU instances\n')
    width = max([15] + [len('MIG ' + gi['profile']) for _, gi in rows])
    extra = width - 15
    rule = '+' + '-' * (52 + extra) + '+'
    lines = [rule, '| GPU instances:'.ljust(53 + extra) + '|',
             '| GPU   Name' + ' ' * (10 + extra) +
             'Profile  Instance   Placement  |',
             '|' + ' ' * (23 + extra) + 'ID       ID       Start:Size |',
             '|' + '=' * (52 + extra) + '|']
    for index, gi in rows:
        lines += ['|{:>4}  {:<{}}{:>4}{:>9}{:>13}     |'.format(
            index, 'MIG ' + gi['profile'], width, gi['profile_id'], gi['id'],
            '{}:{}'.format(gi['start'], gi['size'])), rule]
    return _finish(lines, 0, False)


def _wanted(mig, index, function, tokens):
    """[(profile, start or None)] of -cgi's PROFILE[:START],... (a
    profile by ID or name); a start where the scenario gives the GPU no
    placements, or one not a number, is a bad argument."""
    wanted = []
    for token in tokens.split(','):
        name, colon, start = token.strip().partition(':')
        profile = mig.find_profile(function, name.strip())
        if profile is None:
            raise Exit(2, "{}GPU {} has no GPU instance profile {!r}\n"
                       .format(SIMULATED, index, token))
        start = start.strip()
        if colon and not (start.isascii() and start.isdigit() and
                          mig.placed(function)):
            raise Exit(2, '{}GPU {}: {!r} asks for a placement the scenario '
                       'does not model (no placements)\n'.format(
                           SIMULATED, index, token))
        wanted.append((profile, int(start) if colon else None))
    return wanted


def create(state, gpus, tokens, compute):
    """mig -cgi <profile IDs or names>[:<start>][,...] [-C] on each GPU:
    the GIs in order until one does not fit (at its start, where one is
    given); those made before it stay (sim/mig.py create)."""
    _, mig = _sim()
    trial = copy.deepcopy(state['host']['mig'])
    lines = []
    for index, function in gpus:
        wanted = _wanted(mig, index, function, tokens)
        made, failed = mig.create(function, trial[function['address']],
                                  wanted, compute)
        for gi in made:
            lines.append(
                'Successfully created GPU instance ID {:2d} on GPU {:2d} '
                'using profile MIG {} (ID {:2d})'.format(
                    gi['id'], index, gi['profile'], gi['profile_id']))
            if compute:
                lines.append(
                    'Successfully created compute instance ID  0 on GPU {:2d}'
                    ' GPU instance ID {:2d} using profile MIG {} (ID {:2d})'
                    .format(index, gi['id'], gi['profile'],
                            FULL_CI_PROFILE.get(
                                mig.slice_count(gi['profile']), 0)))
        if failed is not None:
            state['host']['mig'] = trial
            return _finish(lines + [
                'Unable to create a GPU instance on GPU {:2d} using profile '
                '{}: {}'.format(index, tokens.split(',')[failed].strip(),
                                INSUFFICIENT),
                'Failed to create GPU instances: ' + INSUFFICIENT], 255,
                bool(made))
    state['host']['mig'] = trial
    return _finish(lines, 0, True)


def destroy(state, gpus, ids):
    """mig -dgi [-gi IDs]: the GIs named (all without -gi), or none
    while a vGPU has one of them."""
    _, mig = _sim()
    try:
        wanted = None if ids is None else {int(gi) for gi in ids.split(',')}
    except ValueError:
        raise Exit(2, SIMULATED + '-gi takes GPU instance IDs\n')
    chosen = [(index, function, gi) for index, function in gpus
              for gi in state['host']['mig'][function['address']][
                  'gpu_instances'] if wanted is None or gi['id'] in wanted]
    if not chosen or wanted and wanted - {gi['id'] for _, _, gi in chosen}:
        raise Exit(6, SIMULATED + 'no such GPU instance\n')
    busy = [(index, gi) for index, function, gi in chosen
            if gi['id'] in mig.gi_users(state['host'], function)]
    if busy:
        return _finish([
            'Unable to destroy GPU instance ID {:2d} from GPU {:2d}: {}'
            .format(busy[0][1]['id'], busy[0][0], IN_USE),
            'Failed to destroy GPU instances: ' + IN_USE], 255, False)
    lines = []
    for index, function, gi in sorted(chosen, key=lambda item: (
            item[0], item[2]['id'])):
        state['host']['mig'][function['address']]['gpu_instances'].remove(gi)
        lines.append('Successfully destroyed GPU instance ID {:2d} from GPU '
                     '{:2d}'.format(gi['id'], index))
    return _finish(lines, 0, True)
