"""Functional tests run by zaza against a deployed model.

Written against PyPI zaza only (zaza.model); tests.yaml names them by
dotted path. Without NVIDIA GPUs (the default) they check what every
host must do; with TEST_NVIDIA_VGPU_HOST_SW (path of the vGPU Manager
.deb) and TEST_VGPU_DEVICE_MAPPINGS set for the model's GPUs, the
hardware tests run too, and skip cleanly otherwise. Booting a guest on a
vGPU also needs a whole cloud: its credentials in the usual OS_*
variables, and TEST_VGPU_IMAGE and TEST_VGPU_NETWORK.
"""
import json
import os
import re
import unittest
import uuid

import zaza.model

APPLICATION = 'nova-compute-nvidia-vgpu'
PRINCIPAL = 'nova-compute'
NOVA_CONF = '/etc/nova/nova.conf'
RESOURCE = 'nvidia-vgpu-software'
# Valid on any host; addresses not on a host are left out of its config.
DEFAULT_MAPPINGS = "{'nvidia-108': ['0000:c1:00.0']}"
# Hostile values, each holding a real control character once the charm
# parses it: JSON/YAML double-quoted escapes (the Python text holds the
# backslash sequence the operator would type) and a YAML block scalar's
# final newline. Each must be refused naming the character; nova.conf
# must not change.
HOSTILE_MAPPINGS = [
    ('{"nvidia-108": ["0000:c1:00.0\\n[DEFAULT]\\ndebug=true"]}', '\n'),
    ('{"nvidia-108\\n": ["0000:c1:00.0"]}', '\n'),
    ('{"nvidia-108": ["0000:c1:00.0\\r"]}', '\r'),
    ('{"nvidia-108": ["0000:c1:00.0\\t"]}', '\t'),
    ('{"nvidia-108": ["\\u00000000:c1:00.0"]}', '\x00'),
    ('{"nvidia-108": ["10de:1db4\\n"]}', '\n'),
    ('nvidia-108:\n- |\n  0000:c1:00.0\n', '\n'),
]
VGPU_SECTION = re.compile(r'^\[(?:mdev|vgpu)_nvidia-\d+\]$', re.MULTILINE)
TYPES_OPTION = re.compile(r'^enabled_(?:mdev|vgpu)_types\s*=', re.MULTILINE)
TIMEOUT = 1800
# Option names per nova major version, from Nova's virtual GPU guide:
# Queens-Train one [devices] enabled_vgpu_types; Ussuri-Wallaby add
# [vgpu_<type>] device_addresses; Xena on rename them to mdev.
NOVA_USSURI, NOVA_XENA = 21, 24
GUEST_TIMEOUT = 900
# Nova honours [mdev_<type>] mdev_class from Xena with two or more types
# on a host, from Caracal with any (docs/index.md, Limits).
NOVA_CARACAL = 29
# list-vgpu-types: type, GPU, name, ..., then what the charm publishes.
TYPE_LINE = re.compile(
    r'^nvidia-\d+, [0-9a-f:.]+, .*, profile=(?P<profile>[A-Za-z0-9-]+), '
    r'resource_class=(?P<resource_class>VGPU|CUSTOM_[A-Z0-9_]+|none), '
    r'flavor=(?P<flavor>\S+)$')
MDEV_CLASS = re.compile(r'(?m)^mdev_class\s*=\s*(CUSTOM_VGPU_[A-Z0-9_]+)$')
# [pci] device_spec of a VF typed by NVIDIA's vendor-specific VFIO driver.
PCI_CLASS = re.compile(r'"resource_class": "(CUSTOM_VGPU_[A-Z0-9_]+)"')


def expected_nova_options(nova_version):
    """(types option, per-type group prefix or None) for a nova-common
    version such as 3:29.2.0-0ubuntu1."""
    major = int(nova_version.split(':')[-1].split('.')[0])
    if major >= NOVA_XENA:
        return 'enabled_mdev_types', 'mdev_'
    if major >= NOVA_USSURI:
        return 'enabled_vgpu_types', 'vgpu_'
    return 'enabled_vgpu_types', None


def nova_version(unit_name):
    result = zaza.model.run_on_unit(
        unit_name, "dpkg-query -W -f='${Version}' nova-common")
    return result['Stdout'].strip()


def per_profile_honoured(nova_version, types_on_host):
    """Whether this nova reads a per-profile mdev_class on a host that
    enables this many types (else the charm must refuse it)."""
    major = int(nova_version.split(':')[-1].split('.')[0])
    return major >= NOVA_CARACAL or (major >= NOVA_XENA and
                                     types_on_host >= 2)


def enabled_types(nova_conf_text):
    """The types a nova.conf enables ([devices] enabled_*_types)."""
    match = re.search(r'(?m)^enabled_(?:mdev|vgpu)_types\s*=\s*(.*)$',
                      nova_conf_text)
    return [name.strip() for name in match.group(1).split(',')] \
        if match else []


def vgpu_flavor_specs(trait=None):
    """Extra specs of a flavor asking for one vGPU (of a custom trait's
    type, where the operator gave the type one)."""
    specs = {'resources:VGPU': '1'}
    if trait:
        specs['trait:' + trait] = 'required'
    return specs


def domain_has_vgpu(domain_xml):
    """Whether a libvirt domain holds a vGPU: an mdev hostdev, or on the
    vendor-specific VFIO driver (Epoxy on) a PCI hostdev of a VF."""
    return bool(re.search(
        r"<hostdev[^>]*\btype=['\"](?:mdev|pci)['\"]", domain_xml))


def guest_settings():
    """Image and network for a test guest, when the cloud is there."""
    if not (hardware_mappings() and os.environ.get('OS_AUTH_URL')):
        return None
    image = os.environ.get('TEST_VGPU_IMAGE')
    network = os.environ.get('TEST_VGPU_NETWORK')
    return (image, network) if image and network else None


def hardware_mappings():
    """The operator-given mappings for a model with GPUs, else None."""
    if not os.environ.get('TEST_NVIDIA_VGPU_HOST_SW'):
        return None
    return os.environ.get('TEST_VGPU_DEVICE_MAPPINGS') or None


def mig_settings():
    """(mig-layout, vgpu-device-mappings giving its MIG-backed types)
    for a model whose hosts have MIG-capable GPUs, else None."""
    layout = os.environ.get('TEST_MIG_LAYOUT')
    mappings = os.environ.get('TEST_MIG_MAPPINGS')
    if not (os.environ.get('TEST_NVIDIA_VGPU_HOST_SW') and layout and
            mappings):
        return None
    return layout, mappings


# list-vgpu-types ends with a line per MIG GPU: 'MIG on <GPU>: enabled;
# GPU instances: 3g.40gb x1 giving H100XM-3-40C (nvidia-1133), ...'.
MIG_LINE = re.compile(r'^MIG on [0-9a-f:.]+: enabled; GPU instances: (.*)$',
                      re.MULTILINE)
MIG_SIZE = re.compile(r'^\S+ x(?P<count>\d+)(?: giving (?P<types>.*))?$')
MDEV_GROUP = re.compile(r'(?ms)^\[mdev_(nvidia-\d+)\]\n(.*?)(?=^\[|\Z)')
DEVICE_ADDRESSES = re.compile(r'(?m)^device_addresses\s*=\s*(.*)$')


def vgpus_per_gpu_instance(listing):
    """{type id: GPU instances of its size on this host's MIG GPUs}, from
    list-vgpu-types' output: Nova should offer that many of the type."""
    counts = {}
    for instances in MIG_LINE.findall(listing):
        for size in re.split(r', (?=\S+ x\d+)', instances):
            match = MIG_SIZE.match(size)
            if not match:
                continue
            for type_id in re.findall(r'\((nvidia-\d+)\)',
                                      match.group('types') or ''):
                counts[type_id] = (counts.get(type_id, 0) +
                                   int(match.group('count')))
    return counts


def mdev_devices(nova_conf_text):
    """{type id: its [mdev_<type>] device_addresses} in a nova.conf."""
    found = {}
    for type_id, body in MDEV_GROUP.findall(nova_conf_text):
        match = DEVICE_ADDRESSES.search(body)
        found[type_id] = [address.strip() for address in
                          match.group(1).split(',')] if match else []
    return found


def set_vgpu_device_mappings():
    """Configure step: the model's own mappings, or a harmless default."""
    zaza.model.set_application_config(APPLICATION, {
        'vgpu-device-mappings': hardware_mappings() or DEFAULT_MAPPINGS})
    zaza.model.block_until_all_units_idle()


def nova_conf(unit_name):
    return zaza.model.file_contents(unit_name, NOVA_CONF)


def subordinates_by_principal():
    """{nova-compute unit: our unit beside it}, from the model status."""
    status = zaza.model.get_status().applications[PRINCIPAL]
    return {principal: name
            for principal, unit in sorted(status.units.items())
            for name in (unit.subordinates or {})
            if name.startswith(APPLICATION + '/')}


def subordinate_units():
    """Our units, by name, from the model status."""
    return sorted(subordinates_by_principal().values())


def nova_conf_sections(settings):
    """The nova.conf sections in what a unit published over nova-vgpu,
    read the way charmhelpers' SubordinateConfigContext reads them."""
    blob = json.loads(settings['subordinate_configuration'])
    return blob['nova'][NOVA_CONF]['sections']


def published_settings(principal, subordinate):
    """What our unit published to this nova-compute unit."""
    rid = zaza.model.get_relation_id(
        PRINCIPAL, APPLICATION, remote_interface_name='nova-vgpu')
    result = zaza.model.run_on_unit(
        principal, 'relation-get --format=json -r {} - {}'.format(
            rid, subordinate))
    return json.loads(result['Stdout'])


def subordinate_statuses():
    """{our unit: (workload status, its message)}, from the model."""
    status = zaza.model.get_status().applications[PRINCIPAL]
    return {name: (unit.workload_status.status, unit.workload_status.info)
            for principal in status.units.values()
            for name, unit in (principal.subordinates or {}).items()
            if name.startswith(APPLICATION + '/')}


def ready_units():
    """Our units whose status is 'Unit is ready ...'."""
    return sorted(name for name, (state, message)
                  in subordinate_statuses().items()
                  if state == 'active' and
                  message.startswith('Unit is ready'))


def assert_ready_units_healthy(test):
    """vgpu-health agrees with every ready unit: completed, 'Healthy' in
    its table, healthy with nothing broken in its JSON. Returns {unit:
    its report}."""
    reports = {}
    for unit in ready_units():
        action = zaza.model.run_action(unit, 'vgpu-health')
        test.assertEqual(action.data['status'], 'completed',
                         action.data.get('message'))
        results = action.data['results']
        test.assertEqual(results['output'].splitlines()[-1], 'Healthy')
        report = json.loads(results['health'])
        test.assertIs(report['healthy'], True)
        test.assertEqual([finding for finding in report['findings']
                          if finding['broken']], [])
        reports[unit] = report
    return reports


def refusal_pattern(character):
    """The start of the status naming this character, as a regex."""
    return '^Invalid vgpu-device-mappings: the .* holds {} '.format(
        re.escape(ascii(character)))


def assert_hostile_mappings_refused(test):
    """Each hostile value blocks every unit naming its character, and no
    principal's nova.conf changes; the previous value is put back."""
    principals = [unit.entity_id for unit in zaza.model.get_units(PRINCIPAL)]
    before = {unit: nova_conf(unit) for unit in principals}
    config = zaza.model.get_application_config(APPLICATION)
    previous = config['vgpu-device-mappings']['value']
    try:
        for value, character in HOSTILE_MAPPINGS:
            zaza.model.set_application_config(
                APPLICATION, {'vgpu-device-mappings': value})
            for unit in subordinate_units():
                zaza.model.block_until_unit_wl_message_match(
                    unit, refusal_pattern(character), timeout=TIMEOUT)
            zaza.model.block_until_all_units_idle()
            for unit in principals:
                test.assertEqual(nova_conf(unit), before[unit])
    finally:
        zaza.model.set_application_config(
            APPLICATION, {'vgpu-device-mappings': previous})


class VgpuSubordinateTest(unittest.TestCase):
    """What every host does, with or without NVIDIA GPUs."""

    @classmethod
    def setUpClass(cls):
        cls.units = subordinate_units()
        cls.principals = [unit.entity_id for unit in
                          zaza.model.get_units(PRINCIPAL)]
        cls.has_gpus = hardware_mappings() is not None

    def wait_ready(self):
        zaza.model.wait_for_application_states(states={
            APPLICATION: {'workload-status': 'active',
                          'workload-status-message-prefix': 'Unit is ready'},
            PRINCIPAL: {'workload-status': 'blocked',
                        'workload-status-message-prefix':
                        'Missing relations'}}, timeout=TIMEOUT)

    def test_status_says_what_was_found(self):
        self.assertTrue(self.units, 'no unit of ' + APPLICATION)
        status = zaza.model.get_status().applications[PRINCIPAL]
        for principal in status.units.values():
            for name, unit in (principal.subordinates or {}).items():
                if not name.startswith(APPLICATION + '/'):
                    continue
                self.assertEqual(unit.workload_status.status, 'active')
                message = unit.workload_status.info
                self.assertTrue(message.startswith('Unit is ready'), message)
                if not self.has_gpus:
                    self.assertIn('no NVIDIA GPU', message)

    def test_nova_conf_gets_vgpu_settings_only_where_gpus_are(self):
        for unit in self.principals:
            text = nova_conf(unit)
            if self.has_gpus:
                self.assertRegex(text, TYPES_OPTION)
            else:
                self.assertNotRegex(text, VGPU_SECTION)
                self.assertNotRegex(text, TYPES_OPTION)

    def test_nova_compute_receives_the_subordinate_configuration(self):
        for principal, ours in subordinates_by_principal().items():
            settings = published_settings(principal, ours)
            sections = nova_conf_sections(settings)
            # nova-compute's pause, resume and openstack-upgrade act on
            # every service listed: the vGPU Manager is never listed.
            self.assertEqual(json.loads(settings['services']), [])
            if self.has_gpus:
                self.assertIn('devices', sections)
            else:
                # The mapped addresses are no GPUs here: nothing for nova.
                self.assertEqual(sections, {})

    def test_invalid_mappings_block_and_leave_nova_conf_alone(self):
        assert_hostile_mappings_refused(self)
        self.wait_ready()

    def test_pause_and_resume(self):
        unit = self.units[0]
        action = zaza.model.run_action(unit, 'pause',
                                       raise_on_failure=True)
        self.assertEqual(action.data['status'], 'completed')
        zaza.model.block_until_unit_wl_status(unit, 'maintenance')
        zaza.model.run_action(unit, 'resume', raise_on_failure=True)
        zaza.model.block_until_unit_wl_status(unit, 'active')

    def test_install_vgpu_software_has_nothing_left_to_do(self):
        # After deployment each GPU host has the attached revision; a
        # host without a GPU has nothing to install, and says so.
        action = zaza.model.run_action(self.units[0],
                                       'install-vgpu-software')
        if self.has_gpus:
            self.assertEqual(action.data['status'], 'completed')
            self.assertRegex(action.data['results']['message'],
                             r' is already installed$')
        else:
            self.assertEqual(action.data['status'], 'failed')
            self.assertIn('No NVIDIA GPU on this host',
                          action.data.get('message', ''))

    def test_list_vgpu_types(self):
        action = zaza.model.run_action(self.units[0], 'list-vgpu-types',
                                       raise_on_failure=True)
        output = action.data['results']['output']
        if self.has_gpus:
            lines = output.splitlines()
            found = [TYPE_LINE.match(line) for line in lines]
            self.assertTrue(lines and all(found), output)
            # The default class: a flavor asks for resources:VGPU=1.
            for match in found:
                self.assertEqual(match.group('resource_class'), 'VGPU')
                self.assertEqual(match.group('flavor'), 'resources:VGPU=1')
        else:
            self.assertEqual(output, 'No NVIDIA GPU on this host.')

    def test_vgpu_health_passes_on_every_ready_unit(self):
        checked = assert_ready_units_healthy(self)
        self.assertTrue(checked, 'no unit of {} is ready'.format(
            APPLICATION))
        if not self.has_gpus:
            # Every unit is ready, and none lists a GPU.
            self.assertEqual(sorted(checked), self.units)
            for report in checked.values():
                self.assertEqual(report['gpus'], [])


@unittest.skipUnless(hardware_mappings(),
                     'needs NVIDIA GPUs in the model: set '
                     'TEST_NVIDIA_VGPU_HOST_SW and TEST_VGPU_DEVICE_MAPPINGS')
class VgpuHardwareTest(unittest.TestCase):
    """On hosts with NVIDIA GPUs: the driver, a reboot, the types."""

    def test_driver_installs_and_runs_after_a_reboot(self):
        zaza.model.attach_resource(APPLICATION, RESOURCE,
                                   os.environ['TEST_NVIDIA_VGPU_HOST_SW'])
        units = subordinate_units()
        for unit in units:
            zaza.model.block_until_unit_wl_message_match(
                unit, '.*installed NVIDIA software.*', timeout=TIMEOUT)
        # Before the driver runs: types cannot be checked against sysfs.
        assert_hostile_mappings_refused(self)
        for unit in units:
            zaza.model.run_on_unit(unit, 'sudo shutdown -r +1')
        zaza.model.wait_for_application_states(states={
            APPLICATION: {'workload-status': 'active',
                          'workload-status-message-prefix':
                          'Unit is ready'}}, timeout=TIMEOUT)
        assert_hostile_mappings_refused(self)
        action = zaza.model.run_action(units[0], 'list-vgpu-types',
                                       raise_on_failure=True)
        self.assertRegex(action.data['results']['output'],
                         r'^nvidia-\d+, [0-9a-f:.]+, ')
        for unit in zaza.model.get_units(PRINCIPAL):
            text = nova_conf(unit.entity_id)
            option, prefix = expected_nova_options(
                nova_version(unit.entity_id))
            self.assertRegex(text, r'(?m)^{}\s*=\s*nvidia-\d+'.format(
                option))
            if prefix:
                self.assertRegex(
                    text, r'(?m)^\[{}nvidia-\d+\]$'.format(prefix))
                self.assertRegex(text, r'(?m)^device_addresses\s*=\s*\S')
        # Every GPU host is ready now, and its health check agrees.
        reports = assert_ready_units_healthy(self)
        self.assertEqual(sorted(reports), units)
        for report in reports.values():
            self.assertTrue(report['gpus'])

    def test_nova_compute_pause_leaves_the_vgpu_manager_running(self):
        """nova-compute's maintenance pause stops its own services only:
        guests' vGPUs keep their manager (docs: nova-compute's own
        operations)."""
        principal, ours = sorted(subordinates_by_principal().items())[0]
        zaza.model.run_action(principal, 'pause', raise_on_failure=True)
        try:
            state = zaza.model.run_on_unit(
                ours, 'systemctl is-active nvidia-vgpu-mgr')
            self.assertEqual(state['Stdout'].strip(), 'active')
        finally:
            zaza.model.run_action(principal, 'resume',
                                  raise_on_failure=True)

    def test_per_profile_classes_where_nova_reads_them(self):
        # Runs after the reboot above (alphabetical order): the driver
        # names each type. Where this nova reads mdev_class, each type
        # goes to Nova in its profile's class and list-vgpu-types names
        # the flavor property; elsewhere the unit refuses, naming the
        # release, and nova.conf stays as it was.
        principals = {unit.entity_id: nova_version(unit.entity_id)
                      for unit in zaza.model.get_units(PRINCIPAL)}
        before = {unit: nova_conf(unit) for unit in principals}
        ours = subordinates_by_principal()
        zaza.model.set_application_config(
            APPLICATION, {'vgpu-resource-class': 'per-profile'})
        try:
            zaza.model.block_until_all_units_idle()
            for principal, version in sorted(principals.items()):
                unit = ours[principal]
                if not per_profile_honoured(
                        version, len(enabled_types(before[principal]))):
                    zaza.model.block_until_unit_wl_message_match(
                        unit, '^Invalid vgpu-resource-class: ',
                        timeout=TIMEOUT)
                    self.assertEqual(nova_conf(principal), before[principal])
                    continue
                zaza.model.block_until_unit_wl_message_match(
                    unit, '^Unit is ready: .* as CUSTOM_VGPU_',
                    timeout=TIMEOUT)
                zaza.model.block_until_all_units_idle()
                text = nova_conf(principal)
                flavors = {'resources:{}=1'.format(vgpu_class)
                           for vgpu_class in MDEV_CLASS.findall(text)}
                flavors.update('pci_passthrough:alias={}:1'.format(
                    vgpu_class) for vgpu_class in PCI_CLASS.findall(text))
                self.assertTrue(flavors, 'no per-profile class in nova.conf '
                                'on ' + principal)
                listed = zaza.model.run_action(
                    unit, 'list-vgpu-types', raise_on_failure=True)
                offered = {match.group('flavor') for match in (
                    TYPE_LINE.match(line) for line in
                    listed.data['results']['output'].splitlines())
                    if match}
                self.assertLessEqual(flavors, offered)
        finally:
            zaza.model.set_application_config(
                APPLICATION, {'vgpu-resource-class': 'VGPU'})
            zaza.model.block_until_all_units_idle()
        for principal in principals:
            text = nova_conf(principal)
            self.assertIsNone(MDEV_CLASS.search(text) or
                              PCI_CLASS.search(text))


@unittest.skipUnless(mig_settings(),
                     'needs MIG-capable NVIDIA GPUs in the model: set '
                     'TEST_NVIDIA_VGPU_HOST_SW, TEST_MIG_LAYOUT and '
                     'TEST_MIG_MAPPINGS')
class VgpuMigTest(unittest.TestCase):
    """mig-layout cuts the GPUs, and Nova offers each MIG-backed type
    once per GPU instance of its size, on VFs of its own.

    Runs after VgpuHardwareTest (tests.yaml order): the driver runs.
    """

    def test_nova_offers_one_vgpu_per_gpu_instance(self):
        layout, mappings = mig_settings()
        config = zaza.model.get_application_config(APPLICATION)
        previous = {key: config[key]['value']
                    for key in ('mig-layout', 'vgpu-device-mappings')}
        zaza.model.set_application_config(APPLICATION, {
            'mig-layout': layout, 'vgpu-device-mappings': mappings})
        try:
            zaza.model.block_until_all_units_idle()
            # A100 and A30 switch MIG mode only at a reset or a reboot.
            for unit, (_, message) in sorted(subordinate_statuses().items()):
                if message.startswith('Reboot required: MIG mode'):
                    zaza.model.run_on_unit(unit, 'sudo shutdown -r +1')
            zaza.model.wait_for_application_states(states={
                APPLICATION: {'workload-status': 'active',
                              'workload-status-message-prefix':
                              'Unit is ready'}}, timeout=TIMEOUT)
            for principal, unit in sorted(subordinates_by_principal().items()):
                listed = zaza.model.run_action(unit, 'list-vgpu-types',
                                               raise_on_failure=True)
                wanted = vgpus_per_gpu_instance(
                    listed.data['results']['output'])
                given = mdev_devices(nova_conf(principal))
                devices = [device for listed_devices in given.values()
                           for device in listed_devices]
                self.assertEqual(len(devices), len(set(devices)),
                                 'a VF under two types on ' + principal)
                for type_id, count in sorted(wanted.items()):
                    if type_id in given:
                        self.assertEqual(len(given[type_id]), count,
                                         (principal, type_id))
            assert_ready_units_healthy(self)
        finally:
            zaza.model.set_application_config(APPLICATION, previous)
            zaza.model.block_until_all_units_idle()


@unittest.skipUnless(guest_settings(),
                     'needs NVIDIA GPUs and a whole cloud: set '
                     'TEST_NVIDIA_VGPU_HOST_SW, TEST_VGPU_DEVICE_MAPPINGS, '
                     'OS_* credentials, TEST_VGPU_IMAGE, TEST_VGPU_NETWORK')
class VgpuGuestTest(unittest.TestCase):
    """A guest asking for resources:VGPU=1 boots on a vGPU.

    Runs after VgpuHardwareTest (tests.yaml order): the driver is loaded
    and nova has its vGPU settings. TEST_VGPU_TRAIT, if set, is the
    custom trait the operator gave the mapped type in placement.
    """

    def test_guest_with_a_vgpu_flavor_gets_a_vgpu(self):
        import openstack
        image, network = guest_settings()
        cloud = openstack.connect()
        name = 'vgpu-test-' + uuid.uuid4().hex[:8]
        flavor = cloud.create_flavor(name, ram=2048, vcpus=1, disk=10)
        self.addCleanup(cloud.delete_flavor, flavor.id)
        cloud.set_flavor_specs(
            flavor.id, vgpu_flavor_specs(os.environ.get('TEST_VGPU_TRAIT')))
        server = cloud.create_server(
            name, image=image, flavor=flavor.id, network=network,
            wait=True, timeout=GUEST_TIMEOUT)
        self.addCleanup(cloud.delete_server, server.id, wait=True)
        self.assertEqual(server.status, 'ACTIVE')
        instance = cloud.compute.get_server(server.id).instance_name
        hosting = []
        for unit in zaza.model.get_units(PRINCIPAL):
            result = zaza.model.run_on_unit(
                unit.entity_id, 'sudo virsh dumpxml {} || true'.format(
                    instance))
            if '<domain' in result.get('Stdout', ''):
                hosting.append((unit.entity_id, result['Stdout']))
        self.assertEqual(len(hosting), 1, 'guest {} on {}'.format(
            instance, [unit for unit, _ in hosting]))
        self.assertTrue(domain_has_vgpu(hosting[0][1]),
                        'no vGPU in the domain of ' + instance)
        # Restarting the vGPU Manager would break the guest's vGPU: the
        # subordinate on that host refuses, naming the guest.
        ours = subordinates_by_principal()[hosting[0][0]]
        refused = zaza.model.run_action(ours, 'restart-services')
        self.assertEqual(refused.data['status'], 'failed')
        self.assertIn(instance, refused.data.get('message', ''))


def nrpe_application():
    """The nrpe application related to ours, or None."""
    for name, application in zaza.model.get_status().applications.items():
        if application.charm_name == 'nrpe' and APPLICATION in (
                application.relations or {}).get('nrpe-external-master', []):
            return name
    return None


def nrpe_commands(unit):
    """The check commands this charm wrote on a unit's host: check name
    -> the command line NRPE runs."""
    result = zaza.model.run_on_unit(unit, (
        'grep -h "^command\\[check_nvidia_vgpu_" '
        '/etc/nagios/nrpe.d/check_nvidia_vgpu_*.cfg'))
    commands = {}
    for line in result['Stdout'].splitlines():
        name, _, command = line[len('command['):].partition(']=')
        commands[name] = command
    return commands


class VgpuMonitoringTest(unittest.TestCase):
    """With the nrpe subordinate related to this charm (add nrpe to a
    bundle, tests/README.md): each unit's checks run as the nagios user
    and answer; a host without GPU has its one check, OK."""

    @classmethod
    def setUpClass(cls):
        if nrpe_application() is None:
            raise unittest.SkipTest('no nrpe application related to ' +
                                    APPLICATION)

    def test_every_check_runs_as_nagios_and_ready_units_are_ok(self):
        ready = set(ready_units())
        for unit in subordinate_units():
            commands = nrpe_commands(unit)
            self.assertTrue(commands, 'no check of ours on ' + unit)
            if hardware_mappings() is None:
                self.assertEqual(sorted(commands), ['check_nvidia_vgpu_host'])
            for name, command in sorted(commands.items()):
                result = zaza.model.run_on_unit(
                    unit, 'sudo -u nagios {}'.format(command))
                line = result['Stdout'].strip()
                self.assertEqual(len(line.splitlines()), 1, line)
                self.assertRegex(line, r'^(OK|WARNING|CRITICAL): ')
                if unit in ready and name != 'check_nvidia_vgpu_waits':
                    self.assertEqual(int(result['Code']), 0, (name, line))
