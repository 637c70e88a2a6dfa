"""Simulated interface:tls-certificates (requires side), which
layer:openstack brings into every build. This charm never relates to a CA,
so the endpoint only has to exist, as it does in a built charm."""
from charms.reactive import Endpoint


class TlsCertificatesRequires(Endpoint):
    """Present so charms.reactive finds an implementation; does nothing."""
