"""Questions to the host's package database (dpkg-query)."""
import subprocess
from typing import Optional


def installed_version(package: str) -> Optional[str]:
    """Version of an installed package, or None when it is not installed.

    dpkg-query also knows packages that were removed but not purged
    (config-files state); only "install ok installed" counts here.
    """
    try:
        output = subprocess.run(
            ['dpkg-query', '--show',
             '--showformat=${db:Status-Abbrev}\t${Version}', package],
            check=True, capture_output=True, text=True).stdout
    except subprocess.CalledProcessError:
        return None
    status, _, version = output.partition('\t')
    return version.strip() if status.startswith('ii') else None
