"""What the host commands share: the installed packages, the real
read-only programs, the simulator's own modules, and the guests a
command's effect disrupts."""
from sim.fakebin.state import HOST_ROOT, STEP

# Real, read-only tools run as they are (recorded): lspci is pointed at the
# generated sysfs tree, dpkg-deb only inspects files.
PASS_THROUGH = {'lspci': '/usr/bin/lspci', 'dpkg-deb': '/usr/bin/dpkg-deb'}


def installed_packages(state):
    return state['host']['packages']


READ_ONLY_ENV = {'PATH': '/usr/bin:/bin', 'LC_ALL': 'C.UTF-8'}
# The machine's own dpkg, only ever for --compare-versions (a computation).
REAL_DPKG = '/usr/bin/dpkg'


def simulator():
    """The simulator's own modules (sim.guests, sim.host), imported only
    by the commands that need them (the launcher put the simulator's
    tree on sys.path)."""
    from sim import guests, host
    return guests, host


def sync_vf_types(state):
    """Take the vGPU types written to the VFs' sysfs files since the
    last look into the host state (a guest on a retyped VF is
    disrupted), so that a regeneration of /sys keeps them."""
    guests, host = simulator()
    for vf, old, new in host.collect_vf_vgpu_types(HOST_ROOT, state['host'],
                                                   STEP):
        guests.vf_retyped(state['host'], STEP, vf, old, new)


def guests_disrupted(state, cause, running_only=True):
    """Every guest using a vGPU right now loses it (cause: one line);
    running_only: only those running (sim.guests.vgpu_guests)."""
    sync_vf_types(state)
    guests, _ = simulator()
    guests.record(state['host'], STEP, guests.vgpu_guests(
        state['host'], running_only), cause)


def is_driver_package(name):
    return name.startswith('nvidia-vgpu-ubuntu-')
