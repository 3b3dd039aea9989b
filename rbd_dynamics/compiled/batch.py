"""The batch drivers: a batch of states on one thread or spread over numba's threads."""

import numba
import numpy as np

from .eom import eom_parallel_batch
from .layout import MODE_FULL
from .rnea import parallel_batch, serial_batch
from .warm_up import built, EOM_BATCH, warm_up_eom


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
    any such array where unused); ``code``: the Jacobian's link and frame
    (:attr:`~.packed.PackedModel.jacobian_codes`), or the link of a pose or an acceleration;
    ``out`` ``(B, rows, columns)`` contiguous receives the results. Like :func:`rnea_batch`, on
    copies of the workspace. The batch kernel is built at the first batch (once per process).
    """
    if not built(EOM_BATCH):
        warm_up_eom(packed, steps=(EOM_BATCH,))
    threads = numba.get_num_threads()
    # one kernel for every size (each kernel compiled costs seconds): a small batch is one
    # range, which runs on one thread
    chunks = threads if q.shape[0] >= PARALLEL_BATCH else 1
    eom_parallel_batch(np.tile(packed.blob, (chunks, 1)), what, q, qd, qdd, code, out)
