"""
Compiling the kernels (or loading them from numba's disk cache) before a model uses them.

:func:`warm_up` builds the RNEA's kernels and gives a packed model its entry points;
:func:`warm_up_eom` those of the equations of motion, which cost three times as much and are
built when first needed. The entry points are compiled for one signature each and frozen, and
the callers reach the compiled code itself (:data:`ENTRY`), without numba's type
dispatch.
"""

import threading

from numba import types
import numpy as np

from . import eom, floating, frames, rnea
from .eom import coriolis1, eom_range, jacobian1, mass1, regressor1
from .floating import floating1
from .frames import acceleration1, pose1
from .layout import (BAD_SIZES, BASE, BASE_ORIENTATION, BI_JTYPE, BI_Q_START, EOM_ACCELERATION,
                     EOM_CORIOLIS, EOM_ENTRIES, EOM_JACOBIAN, EOM_MASS, EOM_POSE, EOM_REGRESSOR,
                     FB_GRAVITY, FB_LINK, FB_MOTION, FB_MOVING, FB_ORIENTATION, FB_REST,
                     FLOATING_QUATERNION, G_DAMPING, G_MODE, G_THRESHOLD, GAINS,
                     INERTIA_FLOATS, JT_FLOATING, JT_SPHERICAL, L_BODY, MODE_FULL, MODE_STATIC,
                     NOT_POSITIVE, OK, QUATERNION_W, TASK_OUT_EXTRA, TASK_WORK_ROWS)
from .rnea import body_force1, gravity1, rnea1, serial_batch
from .task import task1


#: The steps of :func:`warm_up`, in order, as its ``progress`` callback names them.
WARM_UP_STEPS = ('rnea1', 'gravity1', 'body_force1', 'batch')
_LOCK = threading.Lock()


#: The single-state entry points (``rnea1``, ``gravity1``, ``body_force1``, ``mass1``,
#: ``coriolis1``, ``jacobian1``, ``regressor1``) as the callers reach them after
#: :func:`warm_up`: the compiled code itself where numba exposes it, else the numba
#: dispatchers. Only inputs that :func:`~.packed.single_state_forces` accepts may reach them.
ENTRY = {}


class CompileFirst:
    """
    An equations-of-motion entry point of a packed model before :func:`warm_up_eom`.

    Called like the entry point, it compiles (or loads) its own kernel, which replaces it on the
    packed model with the compiled one, and calls that: a program compiles only the equations
    of motion it uses.
    """

    __slots__ = ('packed', 'name')

    def __init__(self, packed, name):
        self.packed = packed
        self.name = name

    def __call__(self, *args):
        warm_up_eom(self.packed, steps=(self.name,))
        return ENTRY[self.name](*args)


def warm_up(packed, progress=None):
    """
    Compile the RNEA's kernels, run each once on ``packed`` and give it its entry points.

    Compiles (or loads from numba's on-disk cache) the single-state kernels, fills
    :data:`ENTRY`, then the batch kernel, so that a model that puts
    ``packed`` in use afterwards never waits on a compilation, not even at its first batch
    (in the node, the first planned trajectory).

    The single-state entry points are compiled for float64 vectors of any strides (read, never
    written) and then frozen: in the dispatcher, anything else (a list, an integer array)
    raises ``TypeError`` at once instead of compiling a new variant in the middle of a control
    loop. The batch kernels are run here on the one array type :func:`rnea_batch`'s callers
    pass (contiguous, writable), so the batch that follows finds it ready.

    ``progress``, when given, is called as ``progress(step, done, total)`` before each of the
    :data:`WARM_UP_STEPS` (a program shows it: a first compilation takes seconds per step).

    Raises
    ------
    RuntimeError
        a kernel refused the neutral state of ``packed``.

    Thread-safe: the kernels compile once per process.

    """
    with _LOCK:  # (two threads compiling at once: the second finds the first's kernels frozen)
        _warm_up(packed, progress)


def _rnea_signatures():
    """Return the RNEA's entry points and their signatures, ``{name: (dispatcher, types)}``."""
    vec, any_vec = _vector_types()
    forces = types.float64[:, ::1]
    return {
        'rnea1': (rnea1, (vec, any_vec, any_vec, any_vec, forces, vec)),
        'gravity1': (gravity1, (vec, any_vec, forces, vec)),
        'body_force1': (body_force1, (vec, any_vec, any_vec, any_vec, forces, types.boolean,
                                      types.int64, vec)),
    }


def _warm_up(packed, progress):
    """:func:`warm_up`, under its lock."""
    step = _reporter(progress, WARM_UP_STEPS)
    _compile_entries(_rnea_signatures(), step)
    _freeze_compiled(rnea.STATE_KERNELS)
    packed.bind_entry_points()
    q = _neutral(packed)
    zero = np.zeros(packed.nv)
    tau = np.zeros(packed.nv)
    fext = np.zeros((packed.nb, 6))
    if packed.rnea1(packed.blob, q, zero, zero, fext, tau) != OK or \
            packed.gravity1(packed.blob, q, fext, tau) != OK:
        raise RuntimeError('the compiled kernels refused a neutral state')
    # The batch kernel, on two states of the same arrays _compiled_batch passes.
    q = np.tile(q, (2, 1))
    zero = np.zeros((2, packed.nv))
    tau = np.zeros((2, packed.nv))
    fext = np.zeros((1, packed.nb, 6))
    step('batch')
    for mode in (MODE_FULL, MODE_STATIC):
        serial_batch(packed.blob.copy(), q, zero, zero, fext, tau, mode, 0, 2)
    if not np.all(np.isfinite(tau)):
        raise RuntimeError('the compiled batch kernel gave non-finite torques at a neutral '
                           'state')


#: The steps of :func:`warm_up_eom`, in order, as its ``progress`` callback names them.
#: The step of the equations of motion's batch kernel.
EOM_BATCH = 'equations of motion batch'
EOM_STEPS = EOM_ENTRIES + (EOM_BATCH,)
#: The entry points each step calls: compiled (or loaded) before it, with their own frozen
#: signatures, never for the caller's argument types (a second compilation of the same code).
CALLS = {'task1': ('jacobian1', 'pose1', 'mass1', 'acceleration1'),
         'floating1': ('jacobian1', 'pose1', 'acceleration1'),
         EOM_BATCH: ('mass1', 'coriolis1', 'jacobian1', 'regressor1', 'pose1', 'acceleration1')}
_EOM_LOCK = threading.Lock()
_EOM_DONE = set()  # the batch steps of warm_up_eom done in this process


def warm_up_eom(packed, progress=None, steps=EOM_STEPS):
    """
    Compile the equations of motion's kernels and give ``packed`` their entry points.

    Like :func:`warm_up`, for :data:`EOM_STEPS`: they cost three times the RNEA's kernels to
    compile, so a model compiles them when it first needs them (the first call of
    :func:`~rbd_dynamics.mass_matrix` and the others, through the stubs a packed model starts
    with), not with the RNEA's; ``python -m rbd_dynamics precompile`` puts them in numba's disk
    cache too, from which a process loads them in a fraction of a second. Thread-safe: the
    kernels compile once per process.

    ``steps``, a part of :data:`EOM_STEPS`, compiles only those and the entry points they
    call (:data:`CALLS`; precompile shares them out among processes that fill the disk cache
    side by side); ``packed`` then takes the entry points compiled so far and stubs for the
    others.

    Raises
    ------
    RuntimeError
        a kernel refused the neutral state of ``packed``.

    """
    step = _reporter(progress, EOM_STEPS)
    vec, any_vec = _vector_types()
    matrix = types.float64[:, ::1]
    signatures = {
        'mass1': (mass1, (vec, any_vec, matrix)),
        'coriolis1': (coriolis1, (vec, any_vec, any_vec, matrix)),
        'jacobian1': (jacobian1, (vec, any_vec, types.int64, matrix)),
        'regressor1': (regressor1, (vec, any_vec, any_vec, any_vec, matrix)),
        'pose1': (pose1, (vec, any_vec, types.int64, matrix)),
        'acceleration1': (acceleration1, (vec, any_vec, any_vec, any_vec, types.int64,
                                          types.float64[::1])),
        'task1': (task1, (vec, any_vec, any_vec, types.int64, vec, any_vec, any_vec, any_vec,
                          matrix, matrix, matrix, matrix, vec, vec)),
        'floating1': (floating1, (vec, any_vec, any_vec, any_vec, vec, types.int64, matrix,
                                  matrix, matrix, types.int64[::1], types.boolean, vec, vec,
                                  matrix, types.float64[:, :, ::1], matrix, matrix, vec)),
    }
    needed = set(steps).union(*(CALLS.get(name, ()) for name in steps))
    if 'floating1' in needed:  # (it calls the RNEA's entry point too)
        with _LOCK:
            _compile_entries({'rnea1': _rnea_signatures()['rnea1']}, lambda name: None)
    # the entry points others call first, the callers after them
    order = sorted((name for name in signatures if name in needed), key=lambda n: n in CALLS)
    with _EOM_LOCK:
        _compile_entries({name: signatures[name] for name in order},
                         lambda name: step(name) if name in steps else None)
        _freeze_compiled(eom.STATE_KERNELS + frames.STATE_KERNELS + floating.STATE_KERNELS)
        packed.bind_eom()  # only these: a process may compile them without the RNEA's
        q = _neutral(packed)
        zero = np.zeros(packed.nv)
        nv = packed.nv
        outs = {EOM_MASS: (nv, nv), EOM_CORIOLIS: (nv, nv), EOM_JACOBIAN: (6, nv),
                EOM_REGRESSOR: (nv, INERTIA_FLOATS * packed.nb), EOM_POSE: (4, 4),
                EOM_ACCELERATION: (1, 6)}
        checks = {
            'mass1': lambda: packed.mass1(packed.blob, q, np.empty(outs[EOM_MASS])),
            'coriolis1': lambda: packed.coriolis1(packed.blob, q, zero,
                                                  np.empty(outs[EOM_CORIOLIS])),
            'jacobian1': lambda: packed.jacobian1(packed.blob, q, 0,
                                                  np.empty(outs[EOM_JACOBIAN])),
            'regressor1': lambda: packed.regressor1(packed.blob, q, zero, zero,
                                                    np.empty(outs[EOM_REGRESSOR])),
            'pose1': lambda: packed.pose1(packed.blob, q, 0, np.empty((4, 4))),
            'acceleration1': lambda: packed.acceleration1(packed.blob, q, zero, zero, 0,
                                                          np.empty(6)),
            'task1': lambda: _check_task(packed, q, zero),
            'floating1': lambda: _check_floating(packed, q),
        }
        for name, check in checks.items():
            if name in ENTRY and check() != OK:
                raise RuntimeError('the compiled equations of motion refused a neutral state')
        batch = EOM_BATCH
        if batch not in steps:
            return
        step(batch)
        if batch not in _EOM_DONE:  # the batch kernel, on two states of the arrays
            q = np.tile(q, (2, 1))  # eom_batch's callers pass
            zero = np.zeros((2, nv))
            for what, shape in outs.items():
                out = np.empty((2,) + shape)
                if eom_range(packed.blob.copy(), what, q, zero, zero, 0, out, 0, 2) or \
                        not np.all(np.isfinite(out)):
                    raise RuntimeError('the compiled equations of motion gave non-finite '
                                       'results at a neutral state')
            _EOM_DONE.add(batch)


def _check_task(packed, q, zero):
    """Run the task-space law's kernel (operational space) at ``q``: OK or BAD_SIZES."""
    nv = packed.nv
    gains = np.zeros(GAINS)
    gains[G_MODE] = 1.0
    gains[G_THRESHOLD] = gains[G_DAMPING] = 1e-2
    status = packed.task1(packed.blob, q, zero, 0, gains, zero, zero, zero,
                          np.empty((6, nv)), np.empty((nv, nv)),
                          np.empty((nv + TASK_WORK_ROWS, 6)), np.empty((4, 4)), np.empty(6),
                          np.empty(nv + TASK_OUT_EXTRA))
    return OK if status == NOT_POSITIVE else status  # (a model may have a massless joint)


def _check_floating(packed, q):
    """
    Run the floating base's kernel at ``q`` (the IMU on the base, no contact): OK or BAD_SIZES.

    OK for a model whose root is not a floating base too (the kernel refuses it at once).
    """
    if packed.body_ints[0, BI_JTYPE] != JT_FLOATING:
        return OK
    nq, nv, nb = packed.nq, packed.nv, packed.nb
    base = np.zeros(BASE)
    base[FB_ORIENTATION + 3] = base[BASE_ORIENTATION + 3] = 1.0
    base[FB_GRAVITY] = 9.81
    base[FB_LINK] = np.flatnonzero(packed.links[:, L_BODY] == 0)[0]  # a link of the base
    fext = np.zeros((nb, 6))
    out = np.empty(2 * (nv - 6) + 12)
    status = packed.floating1(packed.blob, q[7:], np.zeros(nv - 6), np.zeros(nv - 6), base,
                              FB_MOTION | FB_MOVING | FB_REST, fext, fext, fext,
                              np.zeros(0, dtype=np.int64), False, np.zeros(0), np.empty(nq),
                              np.empty((7, nv)), np.empty((1, 6, nv)), np.empty((4, 4)),
                              np.empty((8, 6)), out)
    return status if status != OK or np.all(np.isfinite(out)) else BAD_SIZES


def _reporter(progress, steps):
    """Return ``step(name)``, which reports ``progress(name, done, total)`` of ``steps``."""
    def step(name):
        if progress is not None:
            progress(name, steps.index(name), len(steps))
    return step


def _vector_types():
    """Return the numba types of the entry points' vectors: the blob's, and ``q``'s."""
    return (types.float64[::1],
            types.Array(types.float64, 1, 'A', readonly=True))  # q, qd, qdd: only read


def _compile_entries(signatures, step):
    """
    Compile each ``{name: (dispatcher, signature)}`` entry point once per process, frozen.

    Frozen (no other signature compiles) and its compiled function kept in :data:`ENTRY`.
    """
    for name, (dispatcher, signature) in signatures.items():
        step(name)
        if name not in ENTRY:
            dispatcher.compile(signature)
            dispatcher.disable_compile()
            ENTRY[name] = _entry_point(dispatcher)


def _freeze_compiled(kernels):
    """
    Let the state ``kernels`` compile no other version, where this process compiled one.

    Freshly compiled, the state kernels exist for vectors of any strides; the RNEA's batch
    kernel calls them with contiguous rows, which that version takes: compiling another one
    for it would only make its compilation longer. (Loaded from the disk cache they have no
    signature in this process, and the batch kernel comes from the cache too; freezing them
    then would leave a batch kernel compiled later nothing to call: numba's TypingError.)
    """
    for kernel in kernels:
        if kernel.signatures:
            kernel.disable_compile()


def _entry_point(dispatcher):
    """Return the compiled function behind a dispatcher with one signature, or the dispatcher."""
    overloads = list(getattr(dispatcher, 'overloads', {}).values())
    entry = getattr(overloads[0], 'entry_point', None) if len(overloads) == 1 else None
    return entry if callable(entry) else dispatcher


def _neutral(packed):
    """Return a valid configuration: zeros, with unit quaternions for spherical and floating."""
    q = np.zeros(packed.nq)
    for jt, q_start in packed.body_ints[:, [BI_JTYPE, BI_Q_START]]:
        if jt == JT_SPHERICAL or jt == JT_FLOATING:
            start = q_start + (FLOATING_QUATERNION if jt == JT_FLOATING else 0)
            q[packed.q_src[start + QUATERNION_W]] = 1.0
    return q


def built(step):
    """Say whether the kernel of ``step`` (a name of the warm-ups' steps) is built here."""
    return step in ENTRY or step in _EOM_DONE


def cache_directory():
    """Return the directory numba keeps the kernels in, ``''`` where it does not say."""
    cache = getattr(rnea1, '_cache', None)
    return getattr(cache, '_cache_path', '') or ''


def compiled_here():
    """Return the names of the kernels this process compiled rather than loaded from the cache."""
    missed = []
    for dispatcher in (rnea1, gravity1, body_force1, serial_batch, mass1,
                       coriolis1, jacobian1, regressor1, pose1, acceleration1, task1,
                       floating1, eom_range):
        stats = getattr(dispatcher, 'stats', None)
        if stats is not None and sum(getattr(stats, 'cache_misses', {}).values()):
            missed.append(dispatcher.__name__)
    return missed
