"""NVIDIA's nvidia-smi, which the vGPU Manager package installs on the
host: its `vgpu` report, shown as it prints it (never parsed: its format
is NVIDIA's and changes between branches)."""
import subprocess
from typing import Optional

COMMAND = ('nvidia-smi', 'vgpu')
# A wedged GPU can keep nvidia-smi waiting; an action must still end.
TIMEOUT_S = 60
# What a shell answers for a command it cannot find.
NOT_FOUND = 127


def vgpu_report() -> Optional[str]:
    """`nvidia-smi vgpu` output (with its exit status when it fails);
    None where the host has no nvidia-smi."""
    try:
        done = subprocess.run(list(COMMAND), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=TIMEOUT_S)
    except FileNotFoundError:
        return None
    except subprocess.TimeoutExpired:
        return '{} gave no answer within {} s'.format(' '.join(COMMAND),
                                                      TIMEOUT_S)
    if done.returncode == NOT_FOUND:
        return None
    text = done.stdout.rstrip()
    if done.returncode:
        text += '\n({} exited with {})'.format(
            ' '.join(COMMAND), done.returncode)
    return text
