"""The batch drivers: a batch of states on one thread or spread over several."""

from concurrent.futures import ThreadPoolExecutor, wait
import os
import threading

import numba
import numpy as np

from .eom import eom_range
from .layout import MODE_FULL
from .rnea import serial_batch
from .warm_up import built, EOM_BATCH, warm_up_eom


#: Batches at least this large are spread over ``NUMBA_NUM_THREADS`` threads (numba's setting:
#: all cores by default).
PARALLEL_BATCH = 256


def rnea_batch(packed, q, qd, qdd, fext, tau, mode=MODE_FULL):
    """
    Run the compiled RNEA on a batch.

    ``q``, ``qd``, ``qdd``: contiguous, writable ``(B, n)`` float64 arrays; ``fext``
    ``(B or 1, nb, 6)`` in packed body coordinates; ``tau`` ``(B, nv)`` receives the result.
    The batch works in its own copies of the workspace, so it never disturbs single calls.
    """
    def run(blob, start, stop):
        serial_batch(blob, q, qd, qdd, fext, tau, mode, start, stop)

    _in_ranges(packed.blob, q.shape[0], run)


def eom_batch(packed, what, q, qd, qdd, code, out):
    """
    Run an equations-of-motion kernel on a batch (``what``: an ``EOM_`` code).

    ``q``, ``qd``, ``qdd``: contiguous, writable ``(B, n)`` float64 arrays (``qd``, ``qdd``
    any such array where unused); ``code``: the Jacobian's link and frame
    (:attr:`~.packed.PackedModel.jacobian_codes`), or the link of a pose or an acceleration;
    ``out`` ``(B, rows, columns)`` contiguous receives the results. Like :func:`rnea_batch`, on
    copies of the workspace. The batch kernel is built at the first batch (once per process).
    """
    if not built(EOM_BATCH):
        warm_up_eom(packed, steps=(EOM_BATCH,))

    def run(blob, start, stop):
        return eom_range(blob, what, q, qd, qdd, code, out, start, stop)

    if _in_ranges(packed.blob, q.shape[0], run):
        raise RuntimeError('the compiled equations of motion refused the sizes of a batch')


def _in_ranges(blob, count, run):
    """
    Call ``run(copy of blob, start, stop)`` over ``range(count)``, in ranges side by side.

    A batch of :data:`PARALLEL_BATCH` states or more runs in ``NUMBA_NUM_THREADS`` ranges:
    one on the calling thread and the others on Python threads, side by side (the batch
    kernels release the GIL). A parallel numba kernel would do the same, at seconds more of
    compilation for every process that fills the cache. Returns the sum of what ``run``
    returns, once every range has ended (the first exception, if any, then).
    """
    ranges = max(1, numba.config.NUMBA_NUM_THREADS) if count >= PARALLEL_BATCH else 1
    size = (count + ranges - 1) // ranges
    blobs = np.tile(blob, (ranges, 1))

    def part(c):
        return run(blobs[c], c * size, min(count, (c + 1) * size)) or 0

    others = [_pool(ranges - 1).submit(part, c) for c in range(1, ranges)]
    try:
        total = part(0)
    finally:
        wait(others)  # no range writes on after this call
    return total + sum(other.result() for other in others)


_POOLS = {}  # {number of threads: the pool}
_POOLS_LOCK = threading.Lock()


def _pool(workers):
    """Return a pool of ``workers`` threads, made at its first use."""
    with _POOLS_LOCK:
        if workers not in _POOLS:
            _POOLS[workers] = ThreadPoolExecutor(workers, thread_name_prefix='rbd_dynamics_batch')
        return _POOLS[workers]


def _forget_pools():
    """In a forked child: the parent's pools' threads do not exist there."""
    global _POOLS_LOCK
    _POOLS.clear()
    _POOLS_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_forget_pools)
