"""Actions that stop the vGPU Manager are refused while guests use vGPUs."""
from nvidia_vgpu import guest_safety


def test_nothing_in_use_nothing_refused():
    assert guest_safety.refusal('restart-services', []) is None


def test_the_refusal_names_vgpus_gpus_and_guests():
    in_use = [('0000:85:00.0', ['instance-b']),
              ('0000:84:00.0', ['instance-a', 'instance-b'])]
    assert guest_safety.refusal('restart-services', in_use) == (
        'Refusing to restart-services: 2 vGPUs on 0000:84:00.0, '
        '0000:85:00.0 in use by 2 guests (instance-a, instance-b); stopping '
        'the vGPU Manager would break them. Stop or migrate those guests, '
        'or run restart-services with force=true')


def test_one_vgpu_one_guest_reads_in_the_singular():
    assert guest_safety.refusal('pause', [('0000:84:00.0', ['i-1'])]) == (
        'Refusing to pause: 1 vGPU on 0000:84:00.0 in use by guest (i-1); '
        'stopping the vGPU Manager would break them. Stop or migrate those '
        'guests, or run pause with force=true')


def test_only_vgpus_a_guest_uses_count():
    mdevs = [('uuid-1', '0000:84:00.0'), ('uuid-2', '0000:84:00.0'),
             ('uuid-3', '0000:85:00.0')]
    users = {'uuid-2': ['instance-a'], 'uuid-9': ['instance-z']}
    assert guest_safety.in_use(mdevs, users) == [
        ('0000:84:00.0', ['instance-a'])]
