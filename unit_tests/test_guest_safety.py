"""Actions that stop the vGPU Manager are refused while running guests use
vGPUs; a retype waits for every guest defined with one."""
from nvidia_vgpu.nova import guest_safety
from nvidia_vgpu import model


def test_nothing_in_use_nothing_refused():
    assert guest_safety.refusal('restart-services', []) is None


def test_the_refusal_names_vgpus_gpus_and_guests():
    in_use = [('0000:85:00.0', ['instance-b']),
              ('0000:84:00.0', ['instance-a', 'instance-b'])]
    assert guest_safety.refusal('restart-services', in_use) == (
        'Refusing to restart-services: 2 vGPUs on 0000:84:00.0, '
        '0000:85:00.0 in use by 2 running guests (instance-a, instance-b); '
        'stopping the vGPU Manager would break them. Stop, migrate, resize, '
        'shelve-offload or delete those guests first, or run '
        'restart-services with force=true')


def test_one_vgpu_one_guest_reads_in_the_singular():
    assert guest_safety.refusal('pause', [('0000:84:00.0', ['i-1'])]) == (
        'Refusing to pause: 1 vGPU on 0000:84:00.0 in use by running guest '
        '(i-1); stopping the vGPU Manager would break it. Stop, migrate, '
        'resize, shelve-offload or delete the guest first, or run pause '
        'with force=true')


def test_a_driver_replacement_says_so_and_names_few_guests():
    in_use = [('0000:84:00.0', ['i-{}'.format(n)]) for n in range(1, 6)]
    assert guest_safety.refusal('install-vgpu-software', in_use) == (
        'Refusing to install-vgpu-software: 5 vGPUs on 0000:84:00.0 in use '
        'by 5 running guests (i-1, i-2, i-3 and 2 more); replacing the vGPU '
        'Manager would break them. Stop, migrate, resize, shelve-offload or '
        'delete those guests first, or run install-vgpu-software with '
        'force=true')


V100_A = '0000:84:00.0'
V100_B = '0000:85:00.0'
A100 = '0000:41:00.0'
A100_VFS = ['0000:41:00.4', '0000:41:00.5', '0000:41:00.6']
GPU_OF = dict({V100_A: V100_A, V100_B: V100_B, A100: A100},
              **{vf: A100 for vf in A100_VFS})


def test_only_vgpus_a_guest_uses_count():
    mdevs = [('uuid-1', V100_A, 'nvidia-108'),
             ('uuid-2', V100_A, 'nvidia-108'),
             ('uuid-3', V100_B, 'nvidia-105')]
    users = {'uuid-2': ['instance-a'], 'uuid-9': ['instance-z']}
    assert guest_safety.vgpus_in_use(mdevs, users, {}, {}) == [
        model.VgpuInUse(V100_A, 'nvidia-108', ['instance-a'])]


def test_a_typed_vf_a_guest_has_is_a_vgpu_in_use():
    # Vendor-specific VFIO: no mdev; the VF's vGPU type and the guest's
    # PCI hostdev say it. A typed VF no guest has, or a guest's VF without
    # a type (a NIC, or a VF not typed again after a boot), is none.
    vf_types = {'0000:41:00.4': 1148, '0000:41:00.5': 1148,
                '0000:41:00.6': 0}
    pci_users = {'0000:41:00.4': ['instance-l'],
                 '0000:41:00.6': ['instance-m'], '0000:03:00.0': ['nic']}
    assert guest_safety.vgpus_in_use([], {}, vf_types, pci_users) == [
        model.VgpuInUse('0000:41:00.4', 'nvidia-1148', ['instance-l'])]


def in_use(device, vgpu_type, *guests):
    return model.VgpuInUse(device, vgpu_type, list(guests))


def test_a_retype_of_a_gpu_in_use_keeps_what_nova_had_there():
    published = {'nvidia-108': [V100_A, V100_B]}
    wanted = {'nvidia-105': [V100_A, V100_B]}
    effective, held = guest_safety.hold_for_guests(
        wanted, published, [in_use(V100_A, 'nvidia-108', 'i-1')], GPU_OF)
    assert effective == {'nvidia-105': [V100_B], 'nvidia-108': [V100_A]}
    assert held == [model.HeldGpu(
        V100_A, ('nvidia-108',), ('nvidia-105',), ['i-1'])]


def test_taking_a_gpu_in_use_out_of_the_mapping_waits_too():
    published = {'nvidia-108': [V100_A, V100_B]}
    effective, held = guest_safety.hold_for_guests(
        {'nvidia-108': [V100_B]}, published,
        [in_use(V100_A, 'nvidia-108', 'i-2', 'i-1')], GPU_OF)
    assert effective == published
    assert held[0].wants == () and held[0].guests == ['i-1', 'i-2']


def test_a_change_that_leaves_in_use_vgpus_their_type_applies():
    # More VFs of the same type on the busy GPU, another GPU retyped.
    published = {'nvidia-557': A100_VFS[:1], 'nvidia-108': [V100_B]}
    wanted = {'nvidia-557': A100_VFS, 'nvidia-105': [V100_B]}
    assert guest_safety.hold_for_guests(
        wanted, published, [in_use(A100_VFS[0], 'nvidia-557', 'i-1')],
        GPU_OF) == (wanted, [])


def test_a_vgpu_on_a_vf_listed_under_several_mig_backed_types_holds_none():
    # Before a GPU in MIG mode's VFs are shared out, a VF may be listed
    # under each of its types: a vGPU of any of them keeps its type.
    wanted = {'nvidia-1130': A100_VFS, 'nvidia-1133': A100_VFS}
    assert guest_safety.hold_for_guests(
        wanted, None, [in_use(A100_VFS[1], 'nvidia-1133', 'i-1')],
        GPU_OF) == (wanted, [])


def test_a_busy_sriov_gpu_keeps_all_its_vfs_as_they_were():
    # A GPU runs one type at a time: the free VFs of a GPU whose VF hosts
    # a guest's vGPU cannot take the new type either.
    published = {'nvidia-557': A100_VFS}
    wanted = {'nvidia-558': A100_VFS}
    effective, held = guest_safety.hold_for_guests(
        wanted, published, [in_use(A100_VFS[1], 'nvidia-557', 'i-1')],
        GPU_OF)
    assert effective == published
    assert [gpu.gpu for gpu in held] == [A100]


def test_without_a_record_only_the_vgpus_in_use_are_kept():
    # The charm is new on a host where guests run: nothing says what Nova
    # had, so the in-use devices keep their vGPUs' type and the busy
    # GPU's other VFs wait with the change.
    effective, held = guest_safety.hold_for_guests(
        {'nvidia-558': A100_VFS}, None,
        [in_use(A100_VFS[1], 'nvidia-557', 'i-1')], GPU_OF)
    assert effective == {'nvidia-557': [A100_VFS[1]]}
    assert held[0].keeps == ('nvidia-557',)


def test_the_held_message_says_device_guests_and_when():
    held = [model.HeldGpu(V100_A, ('nvidia-108',), ('nvidia-105',),
                          ['i-1', 'i-2', 'i-3', 'i-4', 'i-5']),
            model.HeldGpu(V100_B, ('nvidia-108',), (), ['i-6'])]
    assert guest_safety.held_message(held) == (
        'Change of vgpu-device-mappings waits for guests using vGPUs: '
        '0000:84:00.0 keeps nvidia-108 for i-1, i-2, i-3 and 2 more '
        '(wanted: nvidia-105); 0000:85:00.0 keeps nvidia-108 for i-6 '
        '(wanted: out of the mapping); it applies once they are gone '
        '(migrate, resize, shelve-offload or delete them; a stopped guest '
        'keeps its vGPU)')


def test_the_software_message_names_version_and_guests():
    assert guest_safety.software_waits_message(
        'nvidia-vgpu-ubuntu-550', '550.90.05', ['i-1']) == (
        'Attached vGPU software nvidia-vgpu-ubuntu-550 550.90.05 waits for '
        '1 guest using vGPUs (i-1): it installs once it no longer runs here '
        '(stop, migrate, resize, shelve-offload or delete it), or run '
        'install-vgpu-software with force=true')
    assert guest_safety.software_waits_message(
        'nvidia-vgpu-ubuntu-550', '550.90.05', ['i-1', 'i-2']) == (
        'Attached vGPU software nvidia-vgpu-ubuntu-550 550.90.05 waits for '
        '2 guests using vGPUs (i-1, i-2): it installs once they no longer '
        'run here (stop, migrate, resize, shelve-offload or delete them), '
        'or run install-vgpu-software with force=true')


def test_with_one_type_per_host_the_message_says_the_whole_host_waits():
    held = [model.HeldGpu(V100_A, ('nvidia-108',), ('nvidia-105',),
                          ['i-1'])]
    assert guest_safety.held_message(held, whole_host=True).endswith(
        '(wanted: nvidia-105); with one vGPU type per host on this release '
        'the whole host waits; it applies once they are gone (migrate, '
        'resize, shelve-offload or delete them; a stopped guest keeps its '
        'vGPU)')


def test_only_running_guests_count_where_the_vgpu_manager_stops():
    vgpus = [in_use(V100_A, 'nvidia-108', 'up', 'off'),
             in_use(V100_B, 'nvidia-108', 'off-too')]
    assert guest_safety.running(vgpus, frozenset({'up', 'elsewhere'})) == [
        in_use(V100_A, 'nvidia-108', 'up')]
    assert guest_safety.running(vgpus, frozenset()) == []
    # Not known: every guest counts, as before the charm read it.
    assert guest_safety.running(vgpus, None) == vgpus
