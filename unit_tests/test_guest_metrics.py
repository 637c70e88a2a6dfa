"""Per-vGPU figures: what the exporter reads through NVML at a scrape,
and what Prometheus gets of it. NVML is the boundary: FakeNvml answers
as nvidia-ml-py's pynvml module does (13.615.71: strings decoded, the VM
id a tuple of bytes and its type, the bus id bytes, errors NVMLError
subclasses)."""
import ctypes
import json
import os
import subprocess
import sys
import threading

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from nvidia_vgpu.monitoring import exporter, guest_metrics
from nvidia_vgpu.monitoring.guest_metrics import (
    GuestReader, GuestReading, GuestVgpu, read_guests)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAND_IN = os.path.join(REPO, 'sim', 'stand_ins', 'nvml')
GIB = 1024 ** 3
ALICE = '0f6a5d1e-4b7c-4e63-9a57-4d0b1a2c3e4f'
BOB = '6c2b9e4a-0d1f-4a8b-b7c3-5e6f7a8b9c0d'
CAROL = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d'
LICENSED, UNLICENSED, UNINITIALIZED = 5, 4, 1


class NVMLError(Exception):
    def __init__(self, value):
        super().__init__(value)
        self.value = value


class NVMLError_FunctionNotFound(NVMLError):  # noqa: N801 (pynvml's)
    def __init__(self):
        super().__init__(13)


class Record:
    def __init__(self, **fields):
        self.__dict__.update(fields)


def vgpu(vm_id, type_id=108, fb=0, sm=0, license=LICENSED,
         driver='550.54.15', vm_id_type=1):
    return {'vm_id': vm_id, 'type': type_id, 'fb': fb, 'sm': sm,
            'license': license, 'driver': driver, 'vm_id_type': vm_id_type}


class FakeNvml:
    """The pynvml calls the exporter makes, over GPUs {bus id: [vgpu]};
    `fail` maps a call's name to {argument: NVML error number} (argument
    None: every call), `names` the type names."""

    NVMLError = NVMLError
    NVMLError_FunctionNotFound = NVMLError_FunctionNotFound

    def __init__(self, gpus, fail=None, names=None, fb_pointer=False):
        self.gpus = list(gpus.items())
        self.fail = fail or {}
        self.names = names or {108: 'GRID V100-8Q', 106: 'GRID V100-2Q'}
        self.instances = {}
        for _, vgpus in self.gpus:
            for found in vgpus:
                self.instances[len(self.instances) + 1] = found
        self.open = False
        self.inits = 0
        if fb_pointer:
            self._nvmlGetFunctionPointer = self._pointer

    def _call(self, name, argument=None):
        failing = self.fail.get(name, {})
        code = failing.get(argument, failing.get(None))
        if code == 13:
            raise NVMLError_FunctionNotFound()
        if code is not None:
            raise NVMLError(code)
        if name != 'nvmlInit' and not self.open:
            raise NVMLError(1)

    def nvmlInit(self):
        self._call('nvmlInit')
        self.open = True
        self.inits += 1

    def nvmlShutdown(self):
        self._call('nvmlShutdown')
        self.open = False

    def nvmlDeviceGetCount(self):
        self._call('nvmlDeviceGetCount')
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index):
        self._call('nvmlDeviceGetHandleByIndex', index)
        return index

    def nvmlDeviceGetPciInfo(self, handle):
        return Record(busId=self.gpus[handle][0])

    def _ids(self, handle):
        return [number for number, found in self.instances.items()
                if any(found is other for other in self.gpus[handle][1])]

    def nvmlDeviceGetActiveVgpus(self, handle):
        self._call('nvmlDeviceGetActiveVgpus', handle)
        return self._ids(handle)

    def nvmlDeviceGetVgpuUtilization(self, handle, time_stamp):
        self._call('nvmlDeviceGetVgpuUtilization', handle)
        return [Record(vgpuInstance=number, smUtil=Record(
            uiVal=self.instances[number]['sm'])) for number in
            self._ids(handle)]

    def nvmlVgpuInstanceGetVmID(self, instance):
        self._call('nvmlVgpuInstanceGetVmID', instance)
        found = self.instances[instance]
        return (found['vm_id'], found['vm_id_type'])

    def nvmlVgpuInstanceGetType(self, instance):
        self._call('nvmlVgpuInstanceGetType', instance)
        return self.instances[instance]['type']

    def nvmlVgpuTypeGetName(self, type_id):
        self._call('nvmlVgpuTypeGetName', type_id)
        return self.names[type_id]

    def nvmlVgpuInstanceGetFbUsage(self, instance):
        # pynvml reads NVML's 64 bits into a 32-bit c_uint.
        self._call('nvmlVgpuInstanceGetFbUsage', instance)
        return self.instances[instance]['fb'] % 2 ** 32

    def _pointer(self, name):
        """pynvml's own lookup of a C function (the 64-bit read)."""
        assert name == 'nvmlVgpuInstanceGetFbUsage'

        def function(instance, used):
            assert isinstance(instance, ctypes.c_uint)
            used._obj.value = self.instances[instance.value]['fb']
            return 0
        return function

    def _nvmlCheckReturn(self, code):
        if code:
            raise NVMLError(code)

    def nvmlVgpuInstanceGetLicenseInfo_v2(self, instance):
        self._call('nvmlVgpuInstanceGetLicenseInfo_v2', instance)
        state = self.instances[instance]['license']
        return Record(isLicensed=int(state == LICENSED), currentState=state)

    def nvmlVgpuInstanceGetLicenseStatus(self, instance):
        self._call('nvmlVgpuInstanceGetLicenseStatus', instance)
        return int(self.instances[instance]['license'] == LICENSED)

    def nvmlVgpuInstanceGetVmDriverVersion(self, instance):
        self._call('nvmlVgpuInstanceGetVmDriverVersion', instance)
        return self.instances[instance]['driver']


def two_v100s(**changes):
    """Alice (licensed, 6 GiB, 37 %) and Bob (unlicensed) on one V100,
    Carol (no guest driver yet) on the other."""
    return FakeNvml({
        b'00000000:84:00.0': [vgpu(ALICE.upper().encode(), fb=6 * GIB,
                                   sm=37),
                              vgpu(BOB.encode(), license=UNLICENSED)],
        b'00000000:85:00.0': [vgpu(CAROL.encode(), type_id=106,
                                   license=UNINITIALIZED,
                                   driver='Not Available')]}, **changes)


def scrape(reading):
    registry = CollectorRegistry()
    registry.register(_Fixed(reading))
    return generate_latest(registry).decode()


class _Fixed:
    def __init__(self, reading):
        self.reading = reading

    def collect(self):
        return iter(guest_metrics.metric_families(self.reading))


def samples(text):
    """{(name, ((label, value), ...)): value}, as Prometheus parses it."""
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples}


def at(vm, gpu='0000:84:00.0', vgpu_type='nvidia-108'):
    return (('gpu', gpu), ('vgpu_type', vgpu_type), ('vm_uuid', vm))


def of(found, name):
    return {labels: value for (metric, labels), value in found.items()
            if metric == name}


# ----------------------------------------------------- reading NVML


def test_each_running_vgpu_is_read_with_its_guest_gpu_and_type():
    reading = read_guests(two_v100s(fb_pointer=True))
    assert reading.read and reading.skipped == 0
    assert reading.vgpus == [
        GuestVgpu(ALICE, '0000:84:00.0', 'nvidia-108', 'V100-8Q', 6 * GIB,
                  37.0, 'licensed', '550.54.15'),
        GuestVgpu(BOB, '0000:84:00.0', 'nvidia-108', 'V100-8Q', 0, 0.0,
                  'unlicensed', '550.54.15'),
        GuestVgpu(CAROL, '0000:85:00.0', 'nvidia-106', 'V100-2Q', 0, 0.0,
                  'uninitialized', 'Not Available')]


def test_framebuffer_beyond_4_gib_is_not_wrapped():
    """pynvml's own wrapper wraps at 4 GiB; pynvml's C lookup is used
    where it is there, the wrapper only where it is not."""
    by_pointer = read_guests(two_v100s(fb_pointer=True)).vgpus[0]
    assert by_pointer.framebuffer_used_bytes == 6 * GIB
    by_wrapper = read_guests(two_v100s()).vgpus[0]
    assert by_wrapper.framebuffer_used_bytes == 2 * GIB


def test_nvml_is_shut_down_after_each_read():
    """An NVML handle held between scrapes would make the driver refuse
    the hooks' GPU resets and MIG mode changes ("In use")."""
    nvml = two_v100s()
    read_guests(nvml)
    read_guests(nvml)
    assert nvml.inits == 2 and not nvml.open


@pytest.mark.parametrize('fail, read, shown, skipped', [
    # The driver's library is missing, or the driver is not loaded.
    ({'nvmlInit': {None: 12}}, False, [], 0),
    ({'nvmlInit': {None: 9}}, False, [], 0),
    ({'nvmlDeviceGetCount': {None: 999}}, False, [], 0),
    # One vGPU's guest cannot be read: the others are shown.
    ({'nvmlVgpuInstanceGetVmID': {2: 6}}, True, [ALICE, CAROL], 1),
    ({'nvmlVgpuInstanceGetType': {1: 999}}, True, [BOB, CAROL], 1),
    # A GPU NVML cannot read (fallen off the bus): the other's guests,
    # and the reading says it is incomplete.
    ({'nvmlDeviceGetHandleByIndex': {0: 15}}, False, [CAROL], 0),
    ({'nvmlDeviceGetActiveVgpus': {1: 15}}, False, [ALICE, BOB], 0),
    # Figures NVML does not give leave the vGPU shown without them.
    ({'nvmlVgpuInstanceGetFbUsage': {None: 3},
      'nvmlDeviceGetVgpuUtilization': {None: 6},
      'nvmlVgpuInstanceGetVmDriverVersion': {None: 999},
      'nvmlVgpuTypeGetName': {None: 2}}, True, [ALICE, BOB, CAROL], 0),
])
def test_nvml_failures(fail, read, shown, skipped):
    reading = read_guests(two_v100s(fail=fail))
    assert (reading.read, [found.vm_uuid for found in reading.vgpus],
            reading.skipped) == (read, shown, skipped)


def test_figures_nvml_does_not_give_have_no_sample():
    reading = read_guests(two_v100s(fail={
        'nvmlVgpuInstanceGetFbUsage': {None: 3},
        'nvmlDeviceGetVgpuUtilization': {None: 6},
        'nvmlVgpuTypeGetName': {None: 2}}))
    found = samples(scrape(reading))
    assert of(found, 'nvidia_vgpu_guest_framebuffer_used_bytes') == {}
    assert of(found, 'nvidia_vgpu_guest_utilization_ratio') == {}
    assert of(found, 'nvidia_vgpu_guest_licensed') == {
        at(ALICE): 1.0, at(BOB): 0.0}


def test_drivers_without_license_info_v2_say_licensed_or_not():
    reading = read_guests(two_v100s(fail={
        'nvmlVgpuInstanceGetLicenseInfo_v2': {None: 13}}))
    assert [found.license_state for found in reading.vgpus] == [
        'licensed', 'unlicensed', 'unlicensed']


def test_a_read_stops_at_its_time_budget_and_says_so():
    ticks = iter(range(100))
    reading = read_guests(two_v100s(), clock=lambda: next(ticks),
                          budget=2.5)
    # One tick per vGPU: Alice's and Bob's within, Carol's past it.
    assert not reading.read
    assert [found.vm_uuid for found in reading.vgpus] == [ALICE, BOB]


def test_a_hung_nvml_costs_the_per_vgpu_figures_not_the_scrape():
    """A failing GPU can hang the driver: the scrape goes on without
    the vGPUs, and no second read piles up behind the hung one."""
    release, calls = threading.Event(), []
    nvml = two_v100s()

    def hang():
        calls.append(1)
        release.wait(30)
        return 0
    nvml.nvmlDeviceGetCount = hang
    reader = GuestReader(lambda: nvml, budget=0.05)
    try:
        assert reader.read() == guest_metrics.NOT_READ
        assert reader.read() == guest_metrics.NOT_READ
        assert len(calls) == 1
    finally:
        release.set()
    reader._busy.join(5)
    assert reader.read().read


def test_no_bindings_in_the_venv_means_not_read():
    assert GuestReader(lambda: None).read() == guest_metrics.NOT_READ
    found = samples(scrape(guest_metrics.NOT_READ))
    assert found == {('nvidia_vgpu_guest_metrics_read', ()): 0.0,
                     ('nvidia_vgpu_guest_vgpus_skipped', ()): 0.0}


# ------------------------------------------- what Prometheus gets


def test_a_scrape_shows_each_guest_by_uuid_gpu_and_type():
    found = samples(scrape(read_guests(two_v100s(fb_pointer=True))))
    carol = at(CAROL, '0000:85:00.0', 'nvidia-106')
    assert found[('nvidia_vgpu_guest_metrics_read', ())] == 1.0
    assert of(found, 'nvidia_vgpu_guest_framebuffer_used_bytes') == {
        at(ALICE): 6.0 * GIB, at(BOB): 0.0, carol: 0.0}
    assert of(found, 'nvidia_vgpu_guest_utilization_ratio') == {
        at(ALICE): 0.37, at(BOB): 0.0, carol: 0.0}
    # Carol's guest driver has not asked for a license yet: no sample,
    # so no alert.
    assert of(found, 'nvidia_vgpu_guest_licensed') == {
        at(ALICE): 1.0, at(BOB): 0.0}
    assert of(found, 'nvidia_vgpu_guest_info') == {
        info(ALICE, '550.54.15', 'licensed', 'V100-8Q'): 1.0,
        info(BOB, '550.54.15', 'unlicensed', 'V100-8Q'): 1.0,
        info(CAROL, 'Not Available', 'uninitialized', 'V100-2Q',
             gpu='0000:85:00.0', vgpu_type='nvidia-106'): 1.0}


def info(vm, driver, state, profile, **where):
    return tuple(sorted(at(vm, **where) + (
        ('guest_driver', driver), ('license_state', state),
        ('profile', profile))))


def reading_of(*vgpus):
    return GuestReading(list(vgpus), True, 0)


def guest(vm=ALICE, fb=GIB, sm=10.0, state='licensed'):
    return GuestVgpu(vm, '0000:84:00.0', 'nvidia-108', 'V100-8Q', fb, sm,
                     state, '550.54.15')


@pytest.mark.parametrize('vgpus, framebuffer, ratio, licensed', [
    ([], {}, {}, {}),
    ([guest()], {at(ALICE): GIB}, {at(ALICE): 0.1}, {at(ALICE): 1.0}),
    ([guest(state='unlicensed-restricted')], {at(ALICE): GIB},
     {at(ALICE): 0.1}, {at(ALICE): 0.0}),
    ([guest(state='unlicensed-unrestricted')], {at(ALICE): GIB},
     {at(ALICE): 0.1}, {at(ALICE): 0.0}),
    ([guest(state='unknown', fb=None, sm=None)], {}, {}, {}),
    # Two vGPUs of one type on one GPU for one guest: one series each,
    # the framebuffer summed, the busiest share, the worse license.
    ([guest(), guest(fb=2 * GIB, sm=30.0, state='unlicensed')],
     {at(ALICE): 3.0 * GIB}, {at(ALICE): 0.3}, {at(ALICE): 0.0}),
    ([guest(), guest(vm=BOB)], {at(ALICE): GIB, at(BOB): GIB},
     {at(ALICE): 0.1, at(BOB): 0.1}, {at(ALICE): 1.0, at(BOB): 1.0}),
])
def test_metric_families(vgpus, framebuffer, ratio, licensed):
    found = samples(scrape(reading_of(*vgpus)))
    assert of(found, 'nvidia_vgpu_guest_framebuffer_used_bytes') == \
        framebuffer
    assert of(found, 'nvidia_vgpu_guest_utilization_ratio') == \
        pytest.approx(ratio)
    assert of(found, 'nvidia_vgpu_guest_licensed') == licensed
    assert len(of(found, 'nvidia_vgpu_guest_info')) == len(framebuffer) or \
        not framebuffer


# ------------------------------------------------ bounded labels


HOSTILE = b'x"} 1\nnvidia_vgpu_healthy{x="'


@pytest.mark.parametrize('vm_id, shown', [
    ((ALICE.encode(), 1), ALICE),
    ((ALICE.upper().encode() + b'\x00', 1), None),
    ((b' ' + ALICE.encode() + b' ', 1), ALICE),
    ((b'42', 0), None),                 # a domain id, not a UUID
    ((ALICE.encode(), 0), None),
    ((HOSTILE, 1), None),
    ((b'\xff\xfe', 1), None),
    (ALICE, None),                      # not NVML's (id, type) shape
])
def test_the_vm_label_is_a_uuid_or_the_vgpu_is_skipped(vm_id, shown):
    assert guest_metrics.vm_uuid(vm_id) == shown


@pytest.mark.parametrize('bus_id, gpu', [
    (b'00000000:84:00.0', '0000:84:00.0'),
    ('00000000:C1:00.0', '0000:c1:00.0'),
    (b'00000001:84:00.0', '0001:84:00.0'),
    (b'84:00.0', ''),
    (HOSTILE, ''),
])
def test_the_gpu_label_is_a_pci_address(bus_id, gpu):
    assert guest_metrics.gpu_address(bus_id) == gpu


@pytest.mark.parametrize('name, profile', [
    ('GRID V100-8Q', 'V100-8Q'),
    # Ampere and later drivers name types NVIDIA ...: the profile label
    # is the capacity metrics' (nvidia_vgpu_type_*{profile="L40S-2Q"}).
    ('NVIDIA L40S-2Q', 'L40S-2Q'),
    ('NVIDIA H100XM-1-10C', 'H100XM-1-10C'),
    ('NVIDIA RTX Pro 6000 Blackwell DC-4-96Q', 'DC-4-96Q'),
    ('GRID V100-8Q"} 7', ''),
])
def test_the_profile_label_is_the_profile_name(name, profile):
    assert guest_metrics.profile_of(name) == profile


def test_hostile_names_and_driver_strings_are_no_label_injection():
    """A type name and a guest's driver string are free text (the
    guest's own driver reports the latter): they are cut to a short,
    plain label, and Prometheus parses the scrape as it was meant."""
    nvml = FakeNvml({b'00000000:84:00.0': [
        vgpu(ALICE.encode(), driver=HOSTILE.decode() + 'A' * 500),
        vgpu(HOSTILE, driver='550.54.15')]},
        names={108: 'GRID V100-8Q"} 7\n'})
    reading = read_guests(nvml)
    assert reading.skipped == 1
    text = scrape(reading)
    found = samples(text)
    assert 'nvidia_vgpu_healthy' not in {name for name, _ in found}
    [labels] = of(found, 'nvidia_vgpu_guest_info')
    values = dict(labels)
    # Its last word is no profile name: no profile.
    assert values['profile'] == ''
    assert len(values['guest_driver']) == guest_metrics.PLAIN_MAX
    assert all(len(value) <= 48 and '\n' not in value and '"' not in value
               for value in values.values())
    assert found[('nvidia_vgpu_guest_vgpus_skipped', ())] == 1.0


def test_a_hundred_guests_are_a_hundred_series_each():
    """Series grow with running vGPUs alone: no label takes a value per
    scrape or per sample."""
    nvml = FakeNvml({'00000000:{:02X}:00.0'.format(0x10 + gpu).encode(): [
        vgpu('{:08x}-0000-4000-8000-{:012x}'.format(gpu, index).encode(),
             sm=index % 101, fb=index * GIB)
        for index in range(25)] for gpu in range(4)})
    found = samples(scrape(read_guests(nvml)))
    for name in ('nvidia_vgpu_guest_info', 'nvidia_vgpu_guest_licensed',
                 'nvidia_vgpu_guest_framebuffer_used_bytes',
                 'nvidia_vgpu_guest_utilization_ratio'):
        assert len(of(found, name)) == 100, name
    again = samples(scrape(read_guests(nvml)))
    assert set(again) == set(found)


# ----------------------------------------------- the exporter serves


def test_the_exporter_lists_and_serves_the_per_vgpu_metrics(tmp_path):
    assert set(guest_metrics.METRICS) <= set(exporter.METRICS)
    emitted = {name for name, _ in samples(scrape(read_guests(
        two_v100s())))}
    assert emitted == set(guest_metrics.METRICS)
    registry = exporter.registry(
        str(tmp_path / 'missing.json'), hostname='compute-1',
        guests=GuestReader(lambda: two_v100s()))
    found = samples(generate_latest(registry).decode())
    assert found[('nvidia_vgpu_facts_available', ())] == 0.0
    assert of(found, 'nvidia_vgpu_guest_licensed') == {
        at(ALICE): 1.0, at(BOB): 0.0}


def test_once_prints_one_scrape_from_the_simulated_nvml(tmp_path):
    """`--once` as the simulator's exec step runs it, with the
    simulator's NVML stand-in answering from a host's state."""
    state = tmp_path / 'state.json'
    state.write_text(json.dumps({'host': {
        'packages': {'nvidia-vgpu-ubuntu-550': '550.54.16'},
        'modules': ['nvidia'],
        'pci': [{'address': '0000:84:00.0', 'vendor': '10de',
                 'device': '1db4', 'class': '030200',
                 'mdev_types': {'nvidia-108': {'name': 'GRID V100-8Q'}}}],
        'mdevs': [{'uuid': 'm1', 'parent': '0000:84:00.0',
                   'type': 'nvidia-108'},
                  {'uuid': 'm2', 'parent': '0000:84:00.0',
                   'type': 'nvidia-108'}],
        'libvirt_domains': [
            {'name': 'alice', 'uuid': ALICE, 'mdevs': ['m1'],
             'vgpu': {'license': 'unlicensed', 'utilization': 50,
                      'framebuffer_used_mib': 1024}},
            {'name': 'bob', 'uuid': BOB, 'mdevs': ['m2'],
             'state': 'shutoff'}]}}))
    done = subprocess.run(
        [sys.executable, '-m', 'nvidia_vgpu.monitoring.exporter', '--once',
         '--facts', str(tmp_path / 'none.json'), '--only',
         'nvidia_vgpu_guest'],
        env=dict(os.environ, SIM_STATE=str(state), PYTHONPATH=os.pathsep.join(
            [STAND_IN, os.path.join(REPO, 'src', 'lib')])),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, timeout=60, check=True)
    found = samples(done.stdout)
    assert found[('nvidia_vgpu_guest_metrics_read', ())] == 1.0
    # Bob's guest is shut off: its vGPU is not active, it has no series.
    assert of(found, 'nvidia_vgpu_guest_licensed') == {at(ALICE): 0.0}
    assert of(found, 'nvidia_vgpu_guest_framebuffer_used_bytes') == {
        at(ALICE): float(GIB)}
    assert of(found, 'nvidia_vgpu_guest_utilization_ratio') == {
        at(ALICE): 0.5}
    # --only: the per-vGPU metrics alone, each with its HELP and TYPE.
    assert {name for name, _ in found} == set(guest_metrics.METRICS)
    assert done.stdout.count('# HELP') == len(guest_metrics.METRICS)
