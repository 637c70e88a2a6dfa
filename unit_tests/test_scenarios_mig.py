"""MIG layouts end to end (scenarios/mig/*.yaml): the simulated host does
MIG as NVIDIA documents it (sim/mig.py); the charm cuts the GPUs at
install and at every boot, Nova gets one VF per GPU instance of a
MIG-backed type, and nothing changes under a guest."""
import json

from simulation import scenario, sections

H100 = '0000:41:00.0'
FOUR_VFS = '0000:41:00.4,0000:41:00.5,0000:41:00.6,0000:41:00.7'


def statuses(output):
    return [(step['step'], step['status']['workload'],
             step['status']['message']) for step in output['steps']]


def smi(step):
    return [argv for argv in step['commands'] if argv[0] in (
        'nvidia-smi', 'sriov-manage')]


def test_an_h100_is_cut_at_every_boot_in_the_order_mig_needs():
    output = scenario('mig/h100-layout-each-boot.yaml')
    for index in (4, 7):     # the two reboots
        reboot = output['steps'][index]
        assert reboot['step'] == 'reboot'
        order = [argv[:2] if argv[0] == 'sriov-manage' else argv[1:4]
                 for argv in smi(reboot)
                 if argv[0] == 'sriov-manage' or '-mig' in argv or
                 '-cgi' in argv]
        assert order == [['-i', '00000000:41:00.0', '-mig'],
                         ['sriov-manage', '-e'],
                         ['mig', '-i', '00000000:41:00.0']]
    # The instances were there until the unit went (stop): with no guest
    # on them, it destroys them and switches MIG mode off.
    stop = output['steps'][-1]
    assert ['nvidia-smi', 'mig', '-i', '00000000:41:00.0', '-dgi', '-gi',
            '1,2,3,4,5'] in stop['commands']
    assert ['nvidia-smi', '-i', '00000000:41:00.0', '-mig', '0'] in \
        stop['commands']
    assert output['host']['mig'][H100]['gpu_instances'] == []
    # One VF per 1g.10gb instance, not every VF of the GPU.
    assert sections(output)['mdev_nvidia-1130'] == [
        ['device_addresses', FOUR_VFS]]
    listing = output['actions'][0]['results']['output'].splitlines()
    # The MIG line, then live migration's (jammy's GA kernel: not ready).
    assert listing[-1].startswith('Live migration: not ready')
    assert listing[-2] == ('MIG on 0000:41:00.0: enabled; GPU instances: '
                           '3g.40gb x1 giving H100XM-3-40C (nvidia-1133), '
                           '1g.10gb x4 giving H100XM-1-10C (nvidia-1130)')
    # One vGPU per instance, not one per VF.
    assert 'available=4 on 16 VFs' in listing[0]
    # The unit went (stop): its MIG boot units with it.
    assert output['steps'][-1]['step'] == 'stop'
    assert [path for path in output['files']
            if 'nvidia-vgpu-mig' in path] == []


def test_two_sizes_share_an_h100_each_on_vfs_of_its_own():
    output = scenario('mig/h100-mixed-layout.yaml')
    nova = sections(output)
    assert nova['mdev_nvidia-1130'] == [
        ['device_addresses', FOUR_VFS],
        ['mdev_class', 'CUSTOM_VGPU_H100XM_1_10C']]
    assert nova['mdev_nvidia-1133'] == [
        ['device_addresses', '0000:41:01.0'],
        ['mdev_class', 'CUSTOM_VGPU_H100XM_3_40C']]
    found = statuses(output)
    assert all(state == 'active' and 'nvidia-1130: 4 vGPUs on 1 GPU; '
               'nvidia-1133: 1 vGPU on 1 GPU' in message
               for _, state, message in found[4:])
    # The reboot under the guest: instances first, then its vGPU back on
    # its VF; Nova is told nothing new.
    steps = output['steps']
    reboot = steps[-2]
    assert reboot['step'] == 'reboot'
    assert output['host']['mdevs'] == [{
        'uuid': '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f',
        'parent': '0000:41:01.0', 'type': 'nvidia-1133',
        'defined': False}]
    made = [argv for argv in reboot['commands']
            if '-cgi' in argv or 'nvidia-vgpu-restore-mdevs' in argv]
    assert [argv[-1] for argv in made] == [
        '9:4,19:0,19:1,19:2,19:3', 'nvidia-vgpu-restore-mdevs']
    assert [step['relation_sets'] for step in steps[-2:]] == [0, 0]
    assert output['host']['guest_disruptions'] == []


def test_an_a100_whose_mode_needs_a_reboot_says_so_then_is_cut():
    output = scenario('mig/a100-mode-needs-a-reboot.yaml')
    found = statuses(output)
    assert found[4] == ('reboot', 'blocked', (
        'Reboot required: MIG mode of 0000:41:00.0 applies at the next boot '
        '(A100 and A30 switch only at a GPU reset or reboot)'))
    assert found[6][:2] == ('reboot', 'active')
    assert output['host']['mig'][H100]['mode'] == 'enabled'
    assert sections(output)['mdev_nvidia-1130'] == [
        ['device_addresses', FOUR_VFS]]


def test_a_layout_that_does_not_fit_changes_nothing_until_one_does():
    output = scenario('mig/h100-layout-does-not-fit.yaml')
    found = statuses(output)
    assert found[0] == ('install', 'blocked', (
        'Invalid mig-layout: GPU 0000:41:00.0 holds at most 4 GPU '
        'instances of 1g.20gb, not 5'))
    before = output['steps'][:5]
    assert [argv for step in before for argv in smi(step)
            if '-cgi' in argv or '-mig' in argv] == []
    assert found[-1][:2] == ('update-status', 'active')
    assert output['host']['mig'][H100]['gpu_instances'] == ['1g.20gb'] * 4
    assert sections(output)['mdev_nvidia-1131'] == [
        ['device_addresses', FOUR_VFS]]


def test_a_layout_change_waits_for_the_guest_and_keeps_its_instances():
    output = scenario('mig/h100-layout-change-waits-for-guest.yaml')
    found = statuses(output)
    waiting = [message for step, state, message in found
               if state == 'waiting']
    assert waiting and all(message.startswith(
        'Change of mig-layout waits for guests using vGPUs: 0000:41:00.0 '
        'for instance-00000071') for message in waiting)
    steps = output['steps']
    changed = [index for index, step in enumerate(steps)
               if step['step'] == 'config'][0]
    # Under the guest: no instance destroyed, and the reboot makes the
    # old layout again for its vGPU.
    assert [argv for step in steps[changed:-1] for argv in smi(step)
            if '-dgi' in argv] == []
    reboot = steps[changed + 1]
    assert ['nvidia-smi', 'mig', '-i', '00000000:41:00.0', '-cgi',
            '9:4,19:0,19:1,19:2,19:3'] in reboot['commands']
    # Once it is gone: remade as the new layout asks.
    last = steps[-1]
    assert ['nvidia-smi', 'mig', '-i', '00000000:41:00.0', '-dgi', '-gi',
            '1,2,3,4,5'] in last['commands']
    assert output['host']['mig'][H100]['gpu_instances'] == ['7g.80gb']
    assert json.loads(output['relations']['nova-vgpu:1'][
        'subordinate_configuration'])['nova']['/etc/nova/nova.conf'][
        'sections'] == {}


def test_a_layout_that_fits_only_placed_is_made_whole():
    """Four 1g.10gb do not fit beside a 3g.40gb at 0: the charm remakes
    the instances, each at the start it computed, in hooks and at
    boot."""
    output = scenario('mig/h100-layout-made-whole.yaml')
    steps = output['steps']
    assert [argv[-1] for argv in smi(steps[0]) if '-cgi' in argv] == ['9:0']
    grown = [step for step in steps if step['step'] == 'config'][0]
    assert [argv[4:] for argv in smi(grown)
            if '-cgi' in argv or '-dgi' in argv] == [
        ['-dgi', '-gi', '1'], ['-cgi', '9:4,19:0,19:1,19:2,19:3']]
    reboot = [step for step in steps if step['step'] == 'reboot'][0]
    assert [argv[-1] for argv in smi(reboot) if '-cgi' in argv] == [
        '9:4,19:0,19:1,19:2,19:3']
    assert output['host']['mig'][H100]['gpu_instance_placements'] == [
        {'profile': '1g.10gb', 'start': start} for start in range(4)] + [
        {'profile': '3g.40gb', 'start': 4}]
    assert all(state == 'active' for _, state, _ in statuses(output))
    assert sections(output)['mdev_nvidia-1130'][0] == [
        'device_addresses', FOUR_VFS]


def test_a_layout_that_cannot_be_placed_is_refused_before_anything_goes():
    """Seven compute slices, nine memory slices: refused, naming what
    fits; the instances there stay and Nova is told nothing new."""
    output = scenario('mig/h100-layout-placements-do-not-fit.yaml')
    steps = output['steps']
    refused = [index for index, step in enumerate(steps)
               if step['status']['workload'] == 'blocked']
    assert [steps[index]['status']['message'] for index in refused] == [
        "Invalid mig-layout: GPU 0000:41:00.0 cannot hold {'3g.40gb': 2, "
        "'1g.10gb': 1}: they overlap in its memory slices at every "
        "placement it lists (nvidia-smi mig -lgipp); of these it holds "
        "{'3g.40gb': 2} or {'3g.40gb': 1, '1g.10gb': 1}"] * 2
    assert [argv for index in refused for argv in smi(steps[index])
            if '-cgi' in argv or '-dgi' in argv] == []
    assert [steps[index]['relation_sets'] for index in refused] == [0, 0]
    # What fits is made once asked for.
    assert output['host']['mig'][H100]['gpu_instance_placements'] == [
        {'profile': '3g.40gb', 'start': 0}, {'profile': '3g.40gb', 'start': 4}]
    assert statuses(output)[-1][1] == 'active'


# ------------------------------------- NVIDIA's vendor-specific VFIO driver

VFIO = 'mig/h100-vfio-noble-epoxy.yaml'
SMALL_CLASS = 'CUSTOM_VGPU_H100XM_1_10C'
LARGE_CLASS = 'CUSTOM_VGPU_H100XM_3_40C'


def typed_vfs(nova_sections):
    """(VF, resource class) of each typed VF Nova is given."""
    return [(spec['address'], spec['resource_class']) for spec in (
        json.loads(value) for key, value in nova_sections['pci']
        if key == 'device_spec')]


def test_vfio_the_size_gets_one_typed_vf_per_gpu_instance():
    output = scenario(VFIO)
    # Seven 1g.10gb instances: seven typed VFs for Nova.
    assert output['steps'][4]['status']['message'] == (
        'Unit is ready: 1 NVIDIA GPU (H100 SXM5 80GB); 16 SR-IOV VFs; typed '
        'VFs live-migratable; nvidia-1130: 7 vGPUs on 1 GPU; H100XM-1-10C is '
        'nvidia-1130; nvidia-1130 as CUSTOM_VGPU_H100XM_1_10C; nvidia-1130 '
        'on 1 GPU (10de:2330)')
    listed = output['actions'][0]['results']['output'].splitlines()
    assert listed[0].startswith(
        'nvidia-1130, 0000:41:00.0, NVIDIA H100XM-1-10C, no description, '
        'available=7 on 7 VFs, profile=H100XM-1-10C, '
        'resource_class=CUSTOM_VGPU_H100XM_1_10C, '
        'flavor=pci_passthrough:alias=CUSTOM_VGPU_H100XM_1_10C:1')
    assert listed[1] == ('MIG on 0000:41:00.0: enabled; GPU instances: '
                         '1g.10gb x7 giving H100XM-1-10C (nvidia-1130)')
    # At the end, two 3g.40gb: each typed VF holds an instance of its
    # size, the driver refused no write, and flavors ask for the alias.
    assert typed_vfs(sections(output)) == [
        ('0000:41:00.4', LARGE_CLASS), ('0000:41:00.5', LARGE_CLASS)]
    assert output['host']['mig'][H100]['vf_gpu_instances'] == {
        '0000:41:00.4': 1, '0000:41:00.5': 2}
    assert output['host']['vf_type_refusals'] == []
    assert [json.loads(value)['name'] for key, value
            in sections(output)['pci'] if key == 'alias'] == [LARGE_CLASS]


def test_vfio_every_boot_puts_back_mode_vfs_instances_then_types():
    output = scenario(VFIO)
    for index in (4, 7, 16):     # the reboots
        reboot = output['steps'][index]
        assert reboot['step'] == 'reboot'
        order = [argv[:2] if argv[0] == 'sriov-manage' else
                 [arg for arg in argv if arg in ('-mig', '-cgi')]
                 for argv in smi(reboot)
                 if argv[0] == 'sriov-manage' or '-mig' in argv or
                 '-cgi' in argv]
        assert order == [['-mig'], ['sriov-manage', '-e'], ['-cgi']]
    # Nothing changes at a reboot or an update-status: Nova is told once
    # at the first boot, and once when the new layout applies.
    assert [step['relation_sets'] for step in output['steps']
            if step['step'] in ('reboot', 'update-status')] == [
        1, 0, 0, 0, 0, 1, 0, 0, 0, 0]
    assert output['host']['guest_disruptions'] == []


def test_vfio_a_change_waits_then_clears_idle_vfs_first():
    output = scenario(VFIO)
    steps = output['steps']
    for index in (11, 12, 13):
        assert steps[index]['status']['workload'] == 'waiting', index
        # The new size has no instance yet, so no VF names its type:
        # the status gives the profile name the operator mapped.
        assert steps[index]['status']['message'].startswith(
            'Change of vgpu-device-mappings waits for guests using vGPUs: '
            '0000:41:00.0 keeps nvidia-1130 for instance-0000004a (wanted: '
            'H100XM-3-40C)'), index
        assert not any('-dgi' in argv for argv in smi(steps[index]))
    # Gone: the seven typed VFs are cleared, and the driver then destroys
    # the instances they held (it refuses while a VF holds one).
    assert [argv[-3:] for argv in smi(steps[14]) if '-dgi' in argv or
            '-cgi' in argv] == [
        ['-dgi', '-gi', '1,2,3,4,5,6,7'],
        ['00000000:41:00.0', '-cgi', '9:0,9:4']]
    assert output['host']['vf_vgpu_types'] == {
        '0000:41:00.4': '1133', '0000:41:00.5': '1133'}
    assert steps[14]['status']['message'].startswith(
        'Unit is ready: 1 NVIDIA GPU (H100 SXM5 80GB); 16 SR-IOV VFs; typed '
        'VFs live-migratable; nvidia-1133: 2 vGPUs on 1 GPU')


def test_vfio_monitoring_counts_the_typed_vfs_and_finds_them_all():
    steps = scenario(VFIO)['steps']
    capacity, drift = steps[22]['exec'], steps[23]['exec']
    assert (capacity['exit_code'], capacity['stdout']) == (0, (
        "OK: vGPUs: nvidia-1133 (H100XM-3-40C) 1 free of 2 | "
        "'nvidia-1133_free'=1;;;0;2 'nvidia-1133_in_use'=1;;;0;2\n"))
    assert (drift['exit_code'], drift['stdout']) == (0, (
        'OK: The host has every device and vGPU Nova and its guests were '
        'given\n'))


B200_VFIO = 'mig/b200-vfio-noble.yaml'
B200 = '0000:1b:00.0'


def test_b200_profiles_are_found_by_name_and_placed_where_they_fit():
    """A B200's 1g.45gb is a 1-slice profile of two memory slices, with
    an id (15) unlike its 1g.23gb's (19): four instances, placed at the
    starts the driver lists, each with one typed VF for Nova."""
    output = scenario(B200_VFIO)
    steps = output['steps']
    cut = [argv[-3:] for step in steps for argv in smi(step)
           if '-cgi' in argv or '-dgi' in argv]
    assert cut == [
        ['00000000:1b:00.0', '-cgi', '15:0,15:2,15:4,15:6'],   # first boot
        ['-dgi', '-gi', '1,2,3,4'],          # the move to 2g.45gb
        ['00000000:1b:00.0', '-cgi', '14:0,14:2,14:4'],
        ['00000000:1b:00.0', '-cgi', '14:0,14:2,14:4']]         # reboot
    first, last = (output['actions'][index]['results']['output']
                   .splitlines() for index in (0, 1))
    assert first[0].startswith(
        'nvidia-90003, 0000:1b:00.0, NVIDIA B200X-1-45C, no description, '
        'available=4 on 4 VFs, profile=B200X-1-45C, '
        'resource_class=CUSTOM_VGPU_B200X_1_45C')
    assert first[1] == ('MIG on 0000:1b:00.0: enabled; GPU instances: '
                        '1g.45gb x4 giving B200X-1-45C (nvidia-90003)')
    assert last[1] == ('MIG on 0000:1b:00.0: enabled; GPU instances: '
                       '2g.45gb x3 giving B200X-2-45C (nvidia-90004)')
    assert typed_vfs(sections(output)) == [
        ('0000:1b:00.{}'.format(function), 'CUSTOM_VGPU_B200X_2_45C')
        for function in (4, 5, 6)]
    assert output['host']['vf_type_refusals'] == []
    # Nova is told at the first boot and when the layout changes only.
    assert [step['relation_sets'] for step in steps[4:]] == [
        1, 0, 0, 1, 0, 0, 0, 0]
    assert all(step['status']['workload'] == 'active' for step in steps[4:])


RTX_PRO_6000_VFIO = 'mig/rtx-pro-6000-vfio-noble.yaml'
DC_1_3Q_CLASS = 'CUSTOM_VGPU_DC_1_3Q'


def test_blackwell_a_layout_its_12_memory_slices_cannot_hold_is_refused():
    steps = scenario(RTX_PRO_6000_VFIO)['steps']
    boot = steps[4]
    assert boot['status'] == {'workload': 'blocked', 'message': (
        "Invalid mig-layout: GPU 0000:c1:00.0 cannot hold {'2g.48gb+gfx': "
        "1, '1g.24gb+gfx': 3}: they overlap in its memory slices at every "
        "placement it lists (nvidia-smi mig -lgipp); of these it holds "
        "{'2g.48gb+gfx': 1, '1g.24gb+gfx': 2} or {'1g.24gb+gfx': 3}")}
    assert not any('-cgi' in argv for argv in smi(boot))
    assert boot['relation_sets'] == 0


def test_blackwell_time_sliced_on_mig_gives_nova_eight_per_instance():
    """DC-1-3Q's name gives neither its instance (1g.24gb+gfx, profile
    47 on this board) nor how many share one (8): the charm takes both
    from nvidia-smi, cuts four +gfx instances and types 32 VFs, eight on
    each instance, and list-vgpu-types and the capacity check count the
    same 32."""
    output = scenario(RTX_PRO_6000_VFIO)
    steps = output['steps']
    cut = steps[5]
    assert [argv[-3:] for argv in smi(cut) if '-cgi' in argv] == [
        ['00000000:c1:00.0', '-cgi', '47:0,47:3,47:6,47:9']]
    assert 'nvidia-90106: 32 vGPUs on 1 GPU' in cut['status']['message']
    listed = output['actions'][0]['results']['output'].splitlines()
    assert ', available=32 on 32 VFs, profile=DC-1-3Q, ' \
        'resource_class=' + DC_1_3Q_CLASS in listed[0]
    assert listed[1] == ('MIG on 0000:c1:00.0: enabled; GPU instances: '
                         '1g.24gb+gfx x4 giving DC-1-3Q (nvidia-90106)')
    capacity, drift = steps[11]['exec'], steps[12]['exec']
    assert capacity['stdout'].startswith(
        'OK: vGPUs: nvidia-90106 (DC-1-3Q) 31 free of 32 |')
    assert drift['exit_code'] == 0


def test_blackwell_move_to_another_size_waits_then_shares_two_instances():
    output = scenario(RTX_PRO_6000_VFIO)
    steps = output['steps']
    for index in (13, 14, 15):
        assert steps[index]['status']['message'].startswith(
            'Change of vgpu-device-mappings waits for guests using vGPUs: '
            '0000:c1:00.0 keeps nvidia-90106 for instance-0000006a '
            '(wanted: DC-2-12Q)'), index
        assert not any('-dgi' in argv for argv in smi(steps[index]))
    assert [argv[-3:] for argv in smi(steps[16]) if '-dgi' in argv or
            '-cgi' in argv] == [
        ['-dgi', '-gi', '1,2,3,4'],
        ['00000000:c1:00.0', '-cgi', '35:0,35:6']]
    # Four VFs on each 2g.48gb+gfx instance, none refused by the driver.
    held = output['host']['mig']['0000:c1:00.0']['vf_gpu_instances']
    assert sorted(held.values()) == [1, 1, 1, 1, 2, 2, 2, 2]
    assert output['host']['vf_type_refusals'] == []
    assert {spec[1] for spec in typed_vfs(sections(output))} == {
        'CUSTOM_VGPU_DC_2_12Q'}
    assert len(typed_vfs(sections(output))) == 8
    assert output['host']['guest_disruptions'] == []
    assert [step['relation_sets'] for step in steps[5:]] == [
        1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]
    # After the reboot vgpu-health finds the eight, and nothing wrong.
    health = output['actions'][-1]['results']['output'].splitlines()
    assert health[1].split()[-5:] == ['DC-2-12Q)', '8', '0', '8', '-']
    assert health[-1] == 'Healthy'
