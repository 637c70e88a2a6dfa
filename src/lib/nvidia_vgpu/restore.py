"""The boot unit's entry point: `python3 -m nvidia_vgpu.restore`.

Every version of this charm wrote boot units that run this module, so it
stays here, whatever moves behind it (nvidia_vgpu.driver.restore).
"""
import sys

from nvidia_vgpu.driver.restore import main

if __name__ == '__main__':
    sys.exit(main())
