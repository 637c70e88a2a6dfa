"""Commands that can hang on a failing host (nvidia-smi on a wedged GPU,
the journal on a full disk): an answer within a time limit, or none,
and never a stalled hook.

subprocess.run waits for a killed child to end, and a process stuck in
the kernel on a failing GPU does not end even on SIGKILL; so the child
is killed and left to init rather than waited for.
"""
import subprocess
from typing import Optional, Sequence, Tuple

# What a shell answers for a command it cannot find.
NOT_FOUND = 127


def run(argv: Sequence[str], timeout_s: float) -> Tuple[Optional[int], str]:
    """Exit status and output (both streams) of a command; NOT_FOUND
    where the host has no such command, None (and a line saying so)
    where it gave no answer within timeout_s."""
    try:
        process = subprocess.Popen(
            list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            universal_newlines=True)
    except FileNotFoundError:
        return NOT_FOUND, '{}: not found'.format(argv[0])
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        try:
            process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass    # in the kernel still: init reaps it once it ends
        return None, '{} gave no answer within {} s'.format(
            ' '.join(argv), timeout_s)
    return process.returncode, output
