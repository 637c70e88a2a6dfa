"""What Nova itself makes of what the charm publishes.

Each case lays out a host, lets the charm class decide what to publish
over nova-vgpu, renders nova.conf through charm-nova-compute's consumer,
and starts Nova's real LibvirtDriver on it over Nova's own fake libvirt
(showing the same hardware). The assertions are what an operator sees
in Placement: one provider per device, its resource class and total,
the totals per physical GPU, and where Nova creates a guest's vGPU.

Runs against the nova installed in the tox env (nova34, nova29, nova28).
Before Caracal (nova 28 here) Nova gives a host's one enabled type to
every device offering it, whatever device_addresses says: the charm says
so in its status (nova_adds), and every case checks that what Nova takes
beyond the addresses is exactly what the charm says it takes.
"""
import importlib.metadata
import json
import re

import pytest
from nova import exception

from charm_side import publish
from nvidia_vgpu.nova import vfio_migration
from nova_host import FakeHost, NovaCompute, per_gpu
from sim.host import vf_addresses

NOVA = importlib.metadata.version('nova')
NOVA_MAJOR = int(NOVA.split('.')[0])
# As Ubuntu's nova-common reports the same release.
NOVA_COMMON = '3:{}-0ubuntu1'.format(NOVA)
# Nova keeps one type to its device_addresses from Caracal (29) on.
KEEPS_ONE_TYPE_TO_ITS_ADDRESSES = NOVA_MAJOR >= 29


def v100(address, **extra):
    """Tesla V100 PCIe 16GB: mdev on the GPU itself (pre-Ampere)."""
    return dict({
        'address': address, 'vendor': '10de', 'device': '1db4',
        'class': '030200', 'subsystem_vendor': '10de',
        'subsystem_device': '1214',
        'mdev_types': {
            'nvidia-105': {'name': 'GRID V100-1Q', 'available_instances': 16,
                           'description': 'num_heads=4, frl_config=60, '
                           'framebuffer=1024M, max_resolution=5120x2880, '
                           'max_instance=16'},
            'nvidia-108': {'name': 'GRID V100-8Q', 'available_instances': 2,
                           'description': 'num_heads=4, frl_config=60, '
                           'framebuffer=8192M, max_resolution=7680x4320, '
                           'max_instance=2'}}}, **extra)


def t4(address):
    """Tesla T4: mdev on the GPU itself."""
    return {
        'address': address, 'vendor': '10de', 'device': '1eb8',
        'class': '030200', 'subsystem_vendor': '10de',
        'subsystem_device': '12a2',
        'mdev_types': {
            'nvidia-222': {'name': 'GRID T4-1B', 'available_instances': 16,
                           'description': 'num_heads=4, frl_config=45, '
                           'framebuffer=1024M, max_resolution=5120x2880, '
                           'max_instance=16'},
            'nvidia-234': {'name': 'GRID T4-16C', 'available_instances': 1,
                           'description': 'num_heads=1, frl_config=60, '
                           'framebuffer=16384M, max_resolution=4096x2160, '
                           'max_instance=1'}}}


def a40(address):
    """A40: SR-IOV, 32 VFs; A40-2Q hosts at most 24 per GPU, yet every
    free VF shows one free instance until the GPU is full."""
    return {
        'address': address, 'vendor': '10de', 'device': '2235',
        'class': '030200', 'subsystem_vendor': '10de',
        'subsystem_device': '145a',
        'sriov': {'total_vfs': 32, 'vf_mdev_types': {
            'nvidia-557': {'name': 'NVIDIA A40-2Q', 'available_instances': 1,
                           'description': 'num_heads=4, frl_config=60, '
                           'framebuffer=2048M, max_resolution=7680x4320, '
                           'max_instance=24'},
            'nvidia-566': {'name': 'NVIDIA A40-48Q', 'available_instances': 1,
                           'description': 'num_heads=4, frl_config=60, '
                           'framebuffer=49152M, max_resolution=7680x4320, '
                           'max_instance=1'}}}}


STARTED = []
A40_1, A40_2 = '0000:51:00.0', '0000:52:00.0'
# Providers Nova makes of one A40 under one type of A40-2Q: the 24 VFs the
# charm chose (the GPU hosts 24), or before Caracal all 32.
A40_OFFERED = 24 if KEEPS_ONE_TYPE_TO_ITS_ADDRESSES else 32


def nova_on(tmp_path, fake_commands, pci, mappings, mdevs=None,
            domains=None, order='lspci', extra_conf='', resource_class=None):
    """The charm's decision, and Nova started on what it rendered."""
    published = publish(tmp_path, fake_commands, pci, mappings, NOVA_COMMON,
                        mdevs=mdevs, domains=domains,
                        resource_class=resource_class)
    assert published.status is None, published.status
    compute = start_nova(tmp_path, published.nova_conf + extra_conf, pci,
                         mdevs, order)
    # What Nova takes beyond the addresses is what the charm's status
    # names (nothing from Caracal on).
    assert beyond_the_addresses(compute, published.nova_conf) == sorted(
        device for devices in published.nova_adds.values()
        for device in devices)
    return compute


def beyond_the_addresses(compute, nova_conf):
    """Devices Nova offers vGPUs on that no device_addresses names."""
    named = {address for line in re.findall(
        r'(?m)^device_addresses = (.*)$', nova_conf)
        for address in line.split(',')}
    return sorted(set(compute.report()) - named)


def start_nova(tmp_path, nova_conf, pci, mdevs=None, order='lspci',
               database=False, versions=None):
    """versions: (libvirt, QEMU) the fake libvirt reports (default: its
    own, Nova's minimum libvirt and QEMU)."""
    path = tmp_path / 'nova.conf'
    path.write_text(nova_conf)
    compute = NovaCompute(str(path), FakeHost(pci, mdevs, order, versions),
                          database)
    compute.setUp()
    STARTED.append(compute)
    return compute


@pytest.fixture(autouse=True)
def stop_nova():
    """Each test's nova-compute is stopped after it (CONF reset too)."""
    yield
    while STARTED:
        STARTED.pop().cleanUp()


def assert_reports(compute, expected_per_gpu, resource_class='VGPU'):
    """Nova's providers add up, per physical GPU, to what each can host."""
    report = compute.report()
    assert {rc for inventory in report.values() for rc in inventory} <= {
        resource_class}
    assert per_gpu(report, compute.host) == {
        gpu: {resource_class: total}
        for gpu, total in expected_per_gpu.items()}
    return report


# ------------------------------------------------------ GPUs without SR-IOV

def test_two_v100s_with_two_types(tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands,
                      [v100('0000:84:00.0'), v100('0000:85:00.0')],
                      "{'nvidia-105': ['0000:84:00.0'], "
                      "'nvidia-108': ['0000:85:00.0']}")
    assert_reports(compute, {'0000:84:00.0': 16, '0000:85:00.0': 2})
    assert compute.allocate('0000:84:00.0') == [
        ('0000:84:00.0', 'nvidia-105')]
    assert compute.allocate('0000:85:00.0') == [
        ('0000:85:00.0', 'nvidia-108')]


def test_two_v100s_with_one_type(tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands,
                      [v100('0000:84:00.0'), v100('0000:85:00.0')],
                      "{'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}")
    assert_reports(compute, {'0000:84:00.0': 2, '0000:85:00.0': 2})
    assert compute.allocate('0000:85:00.0') == [
        ('0000:85:00.0', 'nvidia-108')]


def test_one_type_on_one_of_two_gpus(tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands,
                      [v100('0000:84:00.0'), v100('0000:85:00.0')],
                      "{'nvidia-108': ['0000:85:00.0']}")
    if KEEPS_ONE_TYPE_TO_ITS_ADDRESSES:
        assert_reports(compute, {'0000:85:00.0': 2})
    else:
        assert_reports(compute, {'0000:84:00.0': 2, '0000:85:00.0': 2})


FLEET = ("{'nvidia-108': ['10de:1db4'], "
         "'nvidia-234': ['10de:1eb8:10de:12a2']}")


def test_model_selectors_on_a_v100_host(tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands,
                      [v100('0000:84:00.0'), v100('0000:85:00.0')], FLEET)
    assert_reports(compute, {'0000:84:00.0': 2, '0000:85:00.0': 2})
    assert compute.allocate('0000:84:00.0') == [
        ('0000:84:00.0', 'nvidia-108')]


def test_model_selectors_on_a_t4_host(tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands,
                      [t4('0000:af:00.0'), t4('0000:b0:00.0')], FLEET)
    assert_reports(compute, {'0000:af:00.0': 1, '0000:b0:00.0': 1})
    assert compute.allocate('0000:b0:00.0') == [
        ('0000:b0:00.0', 'nvidia-234')]


def test_an_address_typed_in_upper_case(tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands, [v100('0000:8a:00.0')],
                      "{'nvidia-108': ['0000:8A:00.0']}")
    assert_reports(compute, {'0000:8a:00.0': 2})


def test_pci_domain_0001(tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands,
                      [v100('0001:84:00.0'), v100('0000:84:00.0')],
                      "{'nvidia-105': ['0001:84:00.0']}")
    if KEEPS_ONE_TYPE_TO_ITS_ADDRESSES:
        assert_reports(compute, {'0001:84:00.0': 16})
    else:
        assert_reports(compute, {'0001:84:00.0': 16, '0000:84:00.0': 16})
    assert compute.allocate('0001:84:00.0') == [
        ('0001:84:00.0', 'nvidia-105')]


# -------------------------------------------------------- SR-IOV GPUs

def test_one_a40(tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands, [a40(A40_1)],
                      "{'nvidia-557': ['%s']}" % A40_1)
    report = assert_reports(compute, {A40_1: A40_OFFERED})
    # The lowest 24 VFs, one vGPU each (before Caracal: every VF).
    assert report == {vf: {'VGPU': 1}
                      for vf in vf_addresses(A40_1, A40_OFFERED)}
    assert compute.allocate('0000:51:00.4') == [('0000:51:00.4',
                                                 'nvidia-557')]


@pytest.mark.parametrize('order', ['lspci', 'reversed'])
def test_two_a40s_each_get_their_own_capacity(tmp_path, fake_commands,
                                              order):
    compute = nova_on(tmp_path, fake_commands, [a40(A40_1), a40(A40_2)],
                      "{'nvidia-557': ['10de:2235']}", order=order)
    assert_reports(compute, {A40_1: A40_OFFERED, A40_2: A40_OFFERED})


def test_every_vgpu_placement_offers_on_an_a40_can_be_created(
        tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands, [a40(A40_1), a40(A40_2)],
                      "{'nvidia-557': ['%s', '%s']}" % (A40_1, A40_2))
    offered = [address for address in sorted(compute.report())
               if compute.host.gpu_of[address] == A40_1]
    # One guest per provider: Nova must create each vGPU where Placement
    # put it (ComputeResourcesUnavailable otherwise).
    assert len(offered) == A40_OFFERED
    for address in offered[:24]:
        assert compute.allocate(address) == [(address, 'nvidia-557')]
    # Before Caracal Placement offers 8 more the full GPU cannot create:
    # guests sent there fail to boot (the charm's status names them).
    for address in offered[24:]:
        with pytest.raises(exception.ComputeResourcesUnavailable):
            compute.allocate(address)
    # The GPU is full; Nova still counts what it hosts, nothing more
    # (before Caracal the 8 stay in Placement: Nova never reports a
    # total of 0, it leaves the last inventory there).
    assert_reports(compute, {A40_1: A40_OFFERED, A40_2: A40_OFFERED})


@pytest.mark.skipif(NOVA_MAJOR < 29, reason='no max_instances before '
                    'Caracal')
def test_max_instances_would_change_nothing(tmp_path, fake_commands):
    # The host-wide cap Nova applies, at what the GPUs can host together:
    # the charm's per-GPU VFs already add up to it, so it never binds.
    compute = nova_on(tmp_path, fake_commands, [a40(A40_1), a40(A40_2)],
                      "{'nvidia-557': ['10de:2235']}",
                      extra_conf='max_instances = 48\n')
    assert_reports(compute, {A40_1: 24, A40_2: 24})


def test_a_vf_a_guest_uses_stays_with_nova(tmp_path, fake_commands):
    # A guest got its vGPU on the 31st VF (an earlier mapping); it keeps
    # it, and the GPU still offers what it can host in all.
    in_use = vf_addresses(A40_1, 32)[30]
    uuid = '4b20d080-1b54-4048-85b3-a6a62d165c01'
    mdevs = [{'uuid': uuid, 'parent': in_use, 'type': 'nvidia-557'}]
    compute = nova_on(tmp_path, fake_commands, [a40(A40_1)],
                      "{'nvidia-557': ['%s']}" % A40_1, mdevs=mdevs,
                      domains=[{'name': 'instance-0000002a',
                                'mdevs': [uuid]}])
    report = assert_reports(compute, {A40_1: A40_OFFERED})
    assert in_use in report


# ------------------------------------- NVIDIA's vendor-specific VFIO driver

def l40s(address):
    """L40S on the vendor-specific VFIO driver: no mdev, each VF takes a
    vGPU type through sysfs."""
    return {
        'address': address, 'vendor': '10de', 'device': '26b9',
        'class': '030200', 'subsystem_vendor': '10de',
        'subsystem_device': '1851',
        'sriov': {'total_vfs': 8, 'vf_vgpu_types': {
            1148: 'NVIDIA L40S-2Q', 1155: 'NVIDIA L40S-48Q'}}}


L40S = '0000:41:00.0'
L40S_VFS = "{'nvidia-1148': ['0000:41:00.4', '0000:41:00.5']}"


# libvirt and QEMU as noble has them (the charm side's default packages)
NOBLE_VERSIONS = ((10, 0, 0), (8, 2, 2))
# jammy's: below Nova's minimums for live_migratable devices
JAMMY_PACKAGES = {'libvirt-daemon-system': '8.0.0-1ubuntu7.11',
                  'qemu-system-x86': '1:6.2+dfsg-2ubuntu6.24'}
JAMMY_VERSIONS = ((8, 0, 0), (6, 2, 0))


@pytest.mark.skipif(NOVA_MAJOR < 31, reason='Nova takes these VFs from '
                    'Epoxy (31) on; before, the charm is blocked (below)')
def test_l40s_vfs_through_nova_pci_tracker(tmp_path, fake_commands):
    published = publish(tmp_path, fake_commands, [l40s(L40S)], L40S_VFS,
                        NOVA_COMMON)
    assert published.status is None, published.status
    compute = start_nova(tmp_path, published.nova_conf, [l40s(L40S)],
                         database=True, versions=NOBLE_VERSIONS)
    assert compute.report() == {}   # nothing through mdev
    # Placement: the two typed VFs, under their GPU, in the type's class.
    assert compute.report_pci() == {L40S: {'CUSTOM_NVIDIA_1148': 2}}
    assert compute.flavor_fits(
        {'pci_passthrough:alias': 'nvidia-1148:1'})
    assert compute.flavor_fits(
        {'pci_passthrough:alias': 'nvidia-1148:2'})
    assert not compute.flavor_fits(
        {'pci_passthrough:alias': 'nvidia-1148:3'})


def device_specs_and_aliases(nova_conf):
    """[pci] device_spec and alias values, as JSON objects."""
    return [json.loads(value) for value in re.findall(
        r'(?m)^(?:device_spec|alias) = (.*)$', nova_conf)]


@pytest.mark.skipif(NOVA_MAJOR < 31, reason='live_migratable PCI devices '
                    'from Epoxy (31) on')
def test_nova_s_own_minimums_are_the_charm_s():
    from nova.virt.libvirt import driver
    assert (driver.MIN_VFIO_PCI_VARIANT_LIBVIRT_VERSION,
            driver.MIN_VFIO_PCI_VARIANT_QEMU_VERSION) == tuple(
                minimum for _, minimum in vfio_migration.MINIMUMS)


@pytest.mark.skipif(NOVA_MAJOR < 31, reason='live_migratable PCI devices '
                    'from Epoxy (31) on')
def test_live_migratable_vfs_where_libvirt_and_qemu_allow_it(
        tmp_path, fake_commands):
    published = publish(tmp_path, fake_commands, [l40s(L40S)], L40S_VFS,
                        NOVA_COMMON)
    assert published.status is None, published.status
    entries = device_specs_and_aliases(published.nova_conf)
    assert len(entries) == 3    # two VFs, one alias
    assert all(entry['live_migratable'] == 'yes' for entry in entries)
    compute = start_nova(tmp_path, published.nova_conf, [l40s(L40S)],
                         database=True, versions=NOBLE_VERSIONS)
    # nova-compute's own start check (init_host) accepts it here.
    compute.driver._check_pci_whitelist()
    assert compute.report_pci() == {L40S: {'CUSTOM_NVIDIA_1148': 2}}
    # The alias, as published and as nova-cloud-controller must have it,
    # asks for live-migratable VFs (conductor migrates only such
    # requests), and they fit on the published VFs.
    alias = {'pci_passthrough:alias': 'nvidia-1148:2'}
    controller_alias = [line.split(' = ', 1)[1] for line in
                        published.nova_conf.splitlines()
                        if line.startswith('alias = ')]
    for aliases in (None, controller_alias):
        requests = compute.pci_requests(alias, aliases)
        assert [request.is_live_migratable()
                for request in requests.requests] == [True]
        assert compute.flavor_fits(alias, aliases)
    # A controller alias without the tag still places guests here, but
    # Nova will not live-migrate them.
    untagged = [json.dumps({key: value for key, value in json.loads(
        controller_alias[0]).items() if key != 'live_migratable'})]
    assert not compute.pci_requests(
        alias, untagged).requests[0].is_live_migratable()
    assert compute.flavor_fits(alias, untagged)


@pytest.mark.skipif(NOVA_MAJOR < 31, reason='live_migratable PCI devices '
                    'from Epoxy (31) on')
def test_no_live_migratable_tag_below_nova_s_minimums(tmp_path,
                                                      fake_commands):
    published = publish(tmp_path, fake_commands, [l40s(L40S)], L40S_VFS,
                        NOVA_COMMON, packages=JAMMY_PACKAGES)
    assert published.status is None, published.status
    assert 'live_migratable' not in published.nova_conf
    compute = start_nova(tmp_path, published.nova_conf, [l40s(L40S)],
                         database=True, versions=JAMMY_VERSIONS)
    compute.driver._check_pci_whitelist()    # nova-compute starts
    assert compute.report_pci() == {L40S: {'CUSTOM_NVIDIA_1148': 2}}
    assert compute.flavor_fits({'pci_passthrough:alias': 'nvidia-1148:2'})
    # A controller alias asking for live-migratable VFs finds none here.
    tagged = [json.dumps(dict(entry, live_migratable='yes'))
              for entry in device_specs_and_aliases(published.nova_conf)
              if 'device_type' in entry]
    assert not compute.flavor_fits(
        {'pci_passthrough:alias': 'nvidia-1148:1'}, tagged)


@pytest.mark.skipif(NOVA_MAJOR < 31, reason='live_migratable PCI devices '
                    'from Epoxy (31) on')
@pytest.mark.parametrize('versions', [
    pytest.param(JAMMY_VERSIONS, id='both below'),
    pytest.param(((9, 6, 0), (8, 2, 2)), id='libvirt below'),
    pytest.param(((10, 0, 0), (8, 2, 1)), id='QEMU below')])
def test_with_the_tag_an_older_libvirt_or_qemu_stops_nova_compute(
        tmp_path, fake_commands, versions):
    # ... which is why the charm leaves it out there: what it publishes
    # on noble, on a host below either minimum.
    published = publish(tmp_path, fake_commands, [l40s(L40S)], L40S_VFS,
                        NOVA_COMMON)
    compute = start_nova(tmp_path, published.nova_conf, [l40s(L40S)],
                         versions=versions)
    with pytest.raises(exception.InvalidConfiguration):
        compute.driver._check_pci_whitelist()


@pytest.mark.skipif(NOVA_MAJOR >= 31, reason='Epoxy and later take them')
def test_l40s_vfs_before_epoxy_block_and_publish_nothing(tmp_path,
                                                         fake_commands):
    published = publish(tmp_path, fake_commands, [l40s(L40S)], L40S_VFS,
                        NOVA_COMMON)
    assert published.status[0] == 'blocked'
    assert 'Epoxy' in published.status[1]
    assert published.relation_data == {}


# ------------------------------------------------- cases that must fail

def test_a_type_the_gpu_lacks_gets_nothing_from_nova(tmp_path,
                                                     fake_commands):
    nova_conf = ('[devices]\nenabled_mdev_types = nvidia-557\n'
                 '[mdev_nvidia-557]\ndevice_addresses = 0000:84:00.0\n')
    compute = start_nova(tmp_path, nova_conf, [v100('0000:84:00.0')])
    with pytest.raises(AssertionError):
        assert_reports(compute, {'0000:84:00.0': 2})
    # ... which is why the charm refuses it.
    published = publish(tmp_path, fake_commands, [v100('0000:84:00.0')],
                        "{'nvidia-557': ['0000:84:00.0']}", NOVA_COMMON)
    assert published.status[0] == 'blocked'
    assert published.relation_data == {}


def test_a_pf_address_for_an_sriov_gpu_gets_nothing_from_nova(
        tmp_path, fake_commands):
    nova_conf = ('[devices]\nenabled_mdev_types = nvidia-557\n'
                 '[mdev_nvidia-557]\ndevice_addresses = %s\n' % A40_1)
    compute = start_nova(tmp_path, nova_conf, [a40(A40_1)])
    with pytest.raises(AssertionError):
        assert_reports(compute, {A40_1: 24})


@pytest.mark.skipif(NOVA_MAJOR < 29, reason='before Caracal one type goes '
                    'to every GPU, whatever its address says')
def test_an_upper_case_address_left_as_typed_gets_nothing_from_nova(
        tmp_path, fake_commands):
    nova_conf = ('[devices]\nenabled_mdev_types = nvidia-108\n'
                 '[mdev_nvidia-108]\ndevice_addresses = 0000:8A:00.0\n')
    compute = start_nova(tmp_path, nova_conf, [v100('0000:8a:00.0')])
    with pytest.raises(AssertionError):
        assert_reports(compute, {'0000:8a:00.0': 2})


def test_every_vf_published_overcommits_the_first_a40(tmp_path,
                                                      fake_commands):
    # What the charm published before it chose VFs per GPU: all 64 VFs,
    # capped host-wide (from Caracal). Nova gives the first GPU 32
    # providers; before Caracal, with no cap, both get 32.
    vfs = vf_addresses(A40_1, 32) + vf_addresses(A40_2, 32)
    nova_conf = ('[devices]\nenabled_mdev_types = nvidia-557\n'
                 '[mdev_nvidia-557]\ndevice_addresses = %s\n'
                 'max_instances = 48\n' % ','.join(vfs))
    compute = start_nova(tmp_path, nova_conf, [a40(A40_1), a40(A40_2)])
    with pytest.raises(AssertionError):
        assert_reports(compute, {A40_1: 24, A40_2: 24})
    assert per_gpu(compute.report(), compute.host) == {
        A40_1: {'VGPU': 32},
        A40_2: {'VGPU': 16 if KEEPS_ONE_TYPE_TO_ITS_ADDRESSES else 32}}
