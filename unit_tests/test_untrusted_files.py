"""Files the charm did not just write, read as untrusted (issue 38): a
record or a guest definition that cannot be read is ignored with a
reason, the boot units go on with the rest, and a guest whose vGPUs are
unknown holds every vGPU on the host, as a guest that uses them would.
"""
import os

import pytest

from nvidia_vgpu import model
from nvidia_vgpu.driver import mig_boot, restore
from nvidia_vgpu.host import boot_records, libvirt, snapshot
from nvidia_vgpu.host.hostfs import host_path
from nvidia_vgpu.nova import guest_safety

GPU = '0000:41:00.0'
UUID = '4b20d080-1b54-4048-85b3-a6a62d165c01'
OTHER = '5e6f7081-92a3-4b4c-8d5e-6f708192a3b4'
DEEP = '[' * 100000 + ']' * 100000


@pytest.fixture
def host(tmp_path, monkeypatch):
    monkeypatch.setenv('NVIDIA_VGPU_HOST_ROOT', str(tmp_path))

    def write(path, text):
        os.makedirs(os.path.dirname(host_path(path)), exist_ok=True)
        with open(host_path(path), 'wb') as stream:
            stream.write(text if isinstance(text, bytes) else text.encode())
    return write


@pytest.mark.parametrize('text,why', [
    (DEEP, 'nested deeper than 32 levels'),
    ('{"0000:41:00.0": ["1g.10gb"]', 'Expecting'),
    ('["1g.10gb"]', 'a JSON list where an object belongs'),
    (b'\xff{}', 'utf-8'),
])
def test_a_record_that_cannot_be_read_is_ignored_and_said(host, text, why):
    host(boot_records.MIG, text)
    assert boot_records.recorded_mig() == {}
    problem, = boot_records.problems()
    assert problem.startswith(boot_records.MIG + ' ignored: ')
    assert why in problem


def test_entries_that_would_write_outside_sysfs_are_left_out(host):
    host(boot_records.INVENTORY, '{"%s": ["../../../etc", "nvidia-1"], '
         '"%s": ["%s", "nvidia-108"], "x": 1}' % (UUID, OTHER, GPU))
    host(boot_records.SETTINGS, '{"vf_vgpu_types": {"../x": 5, '
         '"0000:41:00.4": 5, "0000:41:00.5": true}, "restore_mdevs": 1}')
    assert boot_records.recorded_inventory() == {OTHER: (GPU, 'nvidia-108')}
    assert boot_records.recorded_vf_types() == {'0000:41:00.4': 5}
    assert boot_records.problems() == []


def test_placements_that_would_write_outside_sysfs_are_left_out(host):
    """The boot unit writes a placement's type into a path and its id
    into vgpu_params: only addresses, type ids and small whole numbers
    pass."""
    host(boot_records.SETTINGS, '{"mixed_sizes": {"0000:41:00.0": {'
         '"0000:41:00.4": ["nvidia-1148", 0], '
         '"0000:41:00.5": ["../../etc", 4], '
         '"0000:41:00.6": ["nvidia-1148", "6\\nx"], '
         '"0000:41:00.7": ["nvidia-1148", true], '
         '"../x": ["nvidia-1148", 10], '
         '"0000:41:01.0": ["nvidia-1147", 99999]}, '
         '"x": {"0000:41:00.4": ["nvidia-1148", 0]}}}')
    assert boot_records.recorded_placements() == {
        GPU: {'0000:41:00.4': ('nvidia-1148', 0)}}


def test_the_boot_units_go_on_without_a_record_they_cannot_read(
        host, fake_commands, capsys):
    host(boot_records.SETTINGS, DEEP)
    host(boot_records.MIG, '{"%s": "7g.80gb"}' % GPU)
    fake_commands.set('nvidia-smi', stdout='')
    assert restore.main() == 0
    assert mig_boot.main(['mig_boot', 'mode']) == 0
    assert fake_commands.calls == []      # nothing asked of the GPU
    said = capsys.readouterr().err
    assert boot_records.SETTINGS + ' ignored: ' in said


def test_a_definition_with_entities_is_not_expanded_but_unreadable(host):
    host(libvirt.DOMAINS + '/instance-0000002a.xml',
         '<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">]><domain><name>&a;</name>'
         '</domain>')
    found = libvirt.definitions()
    assert found.mdevs == {} and list(found.unreadable) == [
        'instance-0000002a']
    assert 'DTD' in found.unreadable['instance-0000002a']


def test_a_guest_whose_definition_cannot_be_read_holds_every_vgpu(host):
    host(libvirt.DOMAINS + '/instance-0000002a.xml',
         "<domain><name>instance-0000002a</name><devices><hostdev "
         "type='mdev'><source><address uuid='{}'/></source></hostdev>"
         "</devices></domain>".format(UUID))
    host(libvirt.DOMAINS + '/instance-0000002b.xml', '<domain><name>')
    mdev_users, pci_users = snapshot.with_unknown_users(
        libvirt.definitions(), [model.Mdev(UUID, GPU, 'nvidia-108'),
                                model.Mdev(OTHER, GPU, 'nvidia-108')],
        {'0000:41:00.4': 5, '0000:41:00.5': 0})
    assert mdev_users == {UUID: ['instance-0000002a', 'instance-0000002b'],
                          OTHER: ['instance-0000002b']}
    assert pci_users == {'0000:41:00.4': ['instance-0000002b']}
    # So a change that would destroy the free-looking vGPU waits for it,
    # naming it.
    in_use = guest_safety.vgpus_in_use(
        [(OTHER, GPU, 'nvidia-108')], mdev_users, {}, pci_users)
    assert in_use == [model.VgpuInUse(GPU, 'nvidia-108',
                                      ['instance-0000002b'])]


def test_the_restore_unit_names_a_guest_it_cannot_read(host, capsys):
    host(boot_records.SETTINGS, '{"restore_mdevs": true}')
    host(libvirt.DOMAINS + '/instance-0000002b.xml', '<domain><name>')
    assert restore.main() == 0
    said = capsys.readouterr().err
    assert 'cannot read the definition of guest instance-0000002b' in said


def test_deep_records_read_again_and_again_never_abort_the_process(host):
    """Python 3.8's C JSON decoder aborted the whole focal test run
    ("Fatal Python error: Cannot recover from stack overflow") after the
    fuzz test's RecursionErrors, deep in pytest's stack; the nesting is
    now refused before the decoder sees it, however often it is read.
    (The series envs run the fuzz tests under each series' Python: that
    run is the reproducer.)"""
    host(boot_records.MIG, DEEP)
    host(boot_records.INVENTORY, '{"k":' * 100000 + '1' + '}' * 100000)
    for _ in range(50):
        assert boot_records.recorded_mig() == {}
        assert len(boot_records.problems()) == 2
