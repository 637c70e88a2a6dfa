"""NVIDIA's nvidia-smi, which the vGPU Manager package installs on the
host: its `vgpu` report, shown as it prints it (never parsed: its format
is NVIDIA's and changes between branches)."""
import subprocess
from typing import Optional, Sequence, Tuple

COMMAND = ('nvidia-smi', 'vgpu')
# A wedged GPU can keep nvidia-smi waiting; a hook or an action must
# still end.
TIMEOUT_S = 60
# What a shell answers for a command it cannot find.
NOT_FOUND = 127


def run(argv: Sequence[str]) -> Tuple[Optional[int], str]:
    """Exit status and output (both streams) of an nvidia-smi command;
    NOT_FOUND where the host has no nvidia-smi, None (and a line saying
    so) where it gave no answer in time."""
    try:
        done = subprocess.run(list(argv), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=TIMEOUT_S)
    except FileNotFoundError:
        return NOT_FOUND, '{}: not found'.format(argv[0])
    except subprocess.TimeoutExpired:
        return None, '{} gave no answer within {} s'.format(
            ' '.join(argv), TIMEOUT_S)
    return done.returncode, done.stdout


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
