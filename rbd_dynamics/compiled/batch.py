"""The batch drivers: a batch of states on one thread or spread over numba's threads."""

import numba
import numpy as np

from .eom import eom_parallel_batch
from .layout import MODE_FULL
from .packed import ENTRY
from .rnea import parallel_batch, serial_batch
from .warm_up import warm_up_eom


#: Batches at least this large are spread over numba's threads (all cores by default; set
#: NUMBA_NUM_THREADS to limit them).
PARALLEL_BATCH = 256


def rnea_batch(packed, q, qd, qdd, fext, tau, mode=MODE_FULL):
    """
    Run the compiled RNEA on a batch.

    ``q``, ``qd``, ``qdd``: contiguous, writable ``(B, n)`` float64 arrays; ``fext``
    ``(B or 1, nb, 6)`` in packed body coordinates; ``tau`` ``(B, nv)`` receives the result.
    The batch works in its own copies of the workspace, so it never disturbs single calls.
    """
    threads = numba.get_num_threads()
    if threads > 1 and q.shape[0] >= PARALLEL_BATCH:
        parallel_batch(np.tile(packed.blob, (threads, 1)), q, qd, qdd, fext, tau, mode)
    else:
        serial_batch(packed.blob.copy(), q, qd, qdd, fext, tau, mode)


def eom_batch(packed, what, q, qd, qdd, code, out):
    """
    Run an equations-of-motion kernel on a batch (``what``: an ``EOM_`` code).

    ``q``, ``qd``, ``qdd``: contiguous, writable ``(B, n)`` float64 arrays (``qd``, ``qdd``
    any such array where unused); ``code``: the link and frame of :data:`EOM_JACOBIAN`
    (:attr:`PackedModel.jacobian_code`); ``out`` ``(B, rows, columns)`` contiguous receives the
    results. Like :func:`rnea_batch`, on copies of the workspace.
    """
    if 'mass1' not in ENTRY:
        warm_up_eom(packed)
    threads = numba.get_num_threads()
    # one kernel for every size (each kernel compiled costs seconds): a small batch is one
    # range, which runs on one thread
    chunks = threads if q.shape[0] >= PARALLEL_BATCH else 1
    eom_parallel_batch(np.tile(packed.blob, (chunks, 1)), what, q, qd, qdd, code, out)
