"""Per-instance cached properties (functools.cached_property is 3.8+)."""
from nvidia_vgpu import memo


class Host:
    def __init__(self):
        self.scans = 0

    @memo.cached_property
    def gpus(self):
        """The GPUs."""
        self.scans += 1
        return ['0000:84:00.0']


def test_a_cached_property_is_computed_once_per_instance():
    host = Host()
    assert host.gpus == ['0000:84:00.0']
    assert host.gpus is host.gpus
    assert host.scans == 1
    assert Host().gpus == ['0000:84:00.0']
    assert Host.gpus.__doc__ == 'The GPUs.'


def test_forgetting_a_cached_property_computes_it_again():
    host = Host()
    host.gpus
    host.__dict__.pop('gpus')
    host.gpus
    assert host.scans == 2
