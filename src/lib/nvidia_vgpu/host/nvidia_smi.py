"""NVIDIA's nvidia-smi, which the vGPU Manager package installs on the
host: its `vgpu` report, shown as it prints it (never parsed: its format
is NVIDIA's and changes between branches)."""
from typing import Optional, Sequence, Tuple

from nvidia_vgpu.host import bounded

COMMAND = ('nvidia-smi', 'vgpu')
# A wedged GPU can keep nvidia-smi waiting; a hook or an action must
# still end.
TIMEOUT_S = 60
NOT_FOUND = bounded.NOT_FOUND


def run(argv: Sequence[str], timeout_s: float = TIMEOUT_S
        ) -> Tuple[Optional[int], str]:
    """Exit status and output (both streams) of an nvidia-smi command;
    NOT_FOUND where the host has no nvidia-smi, None (and a line saying
    so) where it gave no answer in time."""
    return bounded.run(argv, timeout_s)


def vgpu_report() -> Optional[str]:
    """`nvidia-smi vgpu` output (with its exit status when it fails);
    None where the host has no nvidia-smi."""
    code, text = run(COMMAND)
    if code is None:
        return text
    if code == NOT_FOUND:
        return None
    text = text.rstrip()
    if code:
        text += '\n({} exited with {})'.format(' '.join(COMMAND), code)
    return text
