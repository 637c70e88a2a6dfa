"""What nova-compute's own configuration says where the charm needs to
know it: whether live migration may switch to post-copy.

charm-nova-compute renders /etc/nova/nova.conf (its
live-migration-permit-post-copy option); Nova's documentation requires
post-copy off on vGPU hosts, as a guest cannot be paused on the target
while its vGPU's state is still on the source. Read only: the charm never
writes nova.conf itself.
"""
import configparser
from typing import Optional

from nvidia_vgpu.host.hostfs import host_path

NOVA_CONF = '/etc/nova/nova.conf'
SECTION = 'libvirt'
OPTION = 'live_migration_permit_post_copy'
# oslo.config's words for a boolean.
TRUE = ('true', '1', 'yes', 'on')
FALSE = ('false', '0', 'no', 'off')


def permit_post_copy(path: str = NOVA_CONF) -> Optional[bool]:
    """The option as nova-compute reads it: unset is Nova's default
    (False); None where there is no nova.conf to read, or the value is
    not a boolean oslo.config takes."""
    parser = configparser.RawConfigParser(strict=False,
                                          interpolation=None)
    try:
        with open(host_path(path)) as stream:
            parser.read_file(stream)
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None
    value = parser.get(SECTION, OPTION, fallback='false').strip().lower()
    if value in TRUE:
        return True
    return False if value in FALSE else None
