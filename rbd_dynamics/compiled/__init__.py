"""
The compiled kernels: the RNEA and the equations of motion on a packed model, with numba.

The reference implementations are :mod:`rbd_dynamics.dynamics` and :mod:`rbd_dynamics.eom`;
these kernels compute the same numbers. Each transform is kept as a rotation ``E`` and a
translation ``r`` (``X = rot(E) xlt(r)``), each inertia as mass, first moment ``h = m c`` and
rotational inertia about the body origin, and every product is written out in 3-D.

=====================  =====================================================================
module                 holds
=====================  =====================================================================
:mod:`.layout`         the packed model's layout: the constants that name it, its reader
:mod:`.packed`         :class:`~.packed.PackedModel` (a model packed for the kernels), the
                       entry points and the gate of external forces in front of them
:mod:`.jit`            how a kernel is compiled, and the layout's readers compiled inline
:mod:`.algebra`        3-D and spatial algebra on tuples
:mod:`.kinematics`     the joint models and the forward pass's pieces
:mod:`.rnea`           the RNEA's kernels: one state, gravity, a body's force, batches
:mod:`.eom`            the mass and Coriolis matrices, the Jacobian and the regressor
:mod:`.frames`         a link's pose and the classical acceleration of its origin
:mod:`.task`           the task-space laws at one state (:mod:`rbd_dynamics.control.task`)
:mod:`.floating`       a floating base's torques at one state (:mod:`rbd_dynamics.floating`)
:mod:`.batch`          the batch drivers, on one thread or in ranges on several
:mod:`.warm_up`        compiling (or loading) the kernels before a model uses them
=====================  =====================================================================

This module says whether the kernels can be used (:data:`AVAILABLE`, :data:`EOM_AVAILABLE`)
and is the one entry the node, ``precompile`` and the tools call: :func:`prepare` builds the
kernels a model needs, :func:`ready` says whether a call would wait for them. The kernels are
cached on disk by numba. numba's cache knows only a function's own file: after a change to a
module whose functions others compile in (:mod:`.algebra`, :mod:`.kinematics`, :mod:`.layout`,
:mod:`.jit`, :mod:`.frames`, :mod:`.eom`, :mod:`.rnea`), clear it (``__pycache__/*.nbi`` and
``*.nbc`` beside these modules, or ``$NUMBA_CACHE_DIR``). An installed package is always new as
a whole.

Set ``RBD_DYNAMICS_DISABLE_JIT=1`` to use the NumPy reference everywhere.
"""

import os
import re

#: How much slower a single-state call is on the NumPy path than on the compiled one, rounded
#: (the demo arm: 1.3 us compiled, 1.6 ms NumPy, both for ``rnea`` and ``gravity_torques``, on
#: a 2-core x86_64 VM): the figure the node's start-up note quotes.
NUMPY_PATH_SLOWDOWN = 1000

_DISABLED = 'disabled by RBD_DYNAMICS_DISABLE_JIT'

#: The oldest numba that compiles the equations of motion's kernels. Older ones (Ubuntu 22.04's
#: 0.55, under Humble) spend over five minutes of CPU on them, against about twenty seconds for
#: numba 0.68; there :mod:`rbd_dynamics.eom` runs its NumPy reference, and the RNEA stays
#: compiled.
EOM_MIN_NUMBA = (0, 57)

# Whether the kernels can be compiled: ``AVAILABLE`` (numba imports), ``UNAVAILABLE_REASON``
# (why not; ``''`` when they can) and ``EOM_AVAILABLE`` (the equations of motion too, see
# EOM_MIN_NUMBA). Found out on first use (numba takes a few tenths of a second to import, and
# the layout's constants, which the library reads at import, do not need it).
_PROBED = ('AVAILABLE', 'UNAVAILABLE_REASON', 'EOM_AVAILABLE')


def _version(text):
    """Return ``(major, minor)`` of a version string such as ``'0.68.1'``."""
    numbers = re.findall(r'\d+', text)[:2]
    return tuple(int(n) for n in numbers) if len(numbers) == 2 else (0, 0)


def _probe():
    """Import numba (or fail to) and set the names of ``_PROBED``."""
    values = globals()
    try:  # numba is a requirement, but without it the NumPy reference path still works.
        if os.environ.get('RBD_DYNAMICS_DISABLE_JIT', '') not in ('', '0'):
            raise ImportError(_DISABLED)
        import numba
    except ImportError as err:  # pragma: no cover - exercised where numba is absent
        values.update(AVAILABLE=False, EOM_AVAILABLE=False, UNAVAILABLE_REASON=(
            'numba is not installed' if err.name == 'numba' else _DISABLED
            if str(err) == _DISABLED else 'numba cannot be imported: %s' % err))
        return
    values.update(AVAILABLE=True, UNAVAILABLE_REASON='',
                  EOM_AVAILABLE=_version(numba.__version__) >= EOM_MIN_NUMBA)


def __getattr__(name):
    if name in _PROBED:
        _probe()
        return globals()[name]
    raise AttributeError('module %r has no attribute %r' % (__name__, name))


#: What :func:`prepare` and :func:`ready` take: the RNEA's kernels (``rnea``,
#: ``gravity_torques``, body forces, their batches), and the equations of motion's, one
#: function each (``task_law``: the task-space laws of :mod:`rbd_dynamics.control.task`;
#: ``floating_base``: a floating base's torques, :mod:`rbd_dynamics.floating`), and their
#: batch kernel.
KERNELS = ('rnea', 'mass_matrix', 'coriolis_matrix', 'jacobian', 'regressor', 'link_pose',
           'link_acceleration', 'task_law', 'floating_base', 'eom_batch')
_EOM_STEP = dict(zip(KERNELS[1:], ('mass1', 'coriolis1', 'jacobian1', 'regressor1', 'pose1',
                                   'acceleration1', 'task1', 'floating1',
                                   'equations of motion batch')))


def _available():
    return globals()['AVAILABLE'] if 'AVAILABLE' in globals() else __getattr__('AVAILABLE')


def _eom_available():
    return _available() and globals()['EOM_AVAILABLE']


def numpy_path_note():
    """Return the note a program shows when the compiled path is unavailable, else ``''``."""
    if _available():
        return ''
    return ('numba not available (%s): NumPy path, about %d times slower'
            % (__getattr__('UNAVAILABLE_REASON'), NUMPY_PATH_SLOWDOWN))


def _check(what):
    what = (what,) if isinstance(what, str) else tuple(what)
    unknown = [w for w in what if w not in KERNELS]
    if unknown:
        raise ValueError('unknown kernels %s; known: %s' % (', '.join(unknown),
                                                            ', '.join(KERNELS)))
    return what


def steps(what=KERNELS):
    """
    Return the names :func:`prepare` reports to its ``progress`` for ``what``, in order.

    Only what this numba compiles (:data:`EOM_AVAILABLE`).
    """
    if not _available():
        return ()
    from .warm_up import WARM_UP_STEPS
    names = []
    for item in _check(what):
        if item == 'rnea':
            names += WARM_UP_STEPS
        elif _eom_available():
            names.append(_EOM_STEP[item])
    return tuple(names)


def prepare(model, what=('rnea',), progress=None):
    """
    Build (compile, or load from numba's cache) the kernels of ``what`` for ``model``.

    ``'rnea'`` puts the model's compiled path in use (:meth:`~rbd_dynamics.Model.compile`);
    the equations of motion's kernels are bound to it where it is in use, and otherwise built
    on a packed copy of the model (to fill the cache). In the order given: a process that
    fills numba's cache side by side with another chooses what comes first. Thread-safe.

    Parameters
    ----------
    model
        a :class:`~rbd_dynamics.Model`.
    what
        names of :data:`KERNELS` (one name or several).
    progress
        ``None``, or called as ``progress(step, done, total)`` before each step
        (:func:`steps`).

    Returns
    -------
    True when every kernel of ``what`` is built (for a model not compiled, on a packed copy:
    its calls stay on the NumPy path until :meth:`~rbd_dynamics.Model.compile`); False where
    they cannot be (no numba, a numba that runs the equations of motion in NumPy, a failed
    build: the NumPy path then gives the same numbers).

    Raises
    ------
    ValueError
        a name that is not one of :data:`KERNELS`.
    RuntimeError
        an equations-of-motion kernel refused the model's neutral state.

    """
    what = _check(what)
    if not _available():
        return False
    names = steps(what)
    done = []

    def report(name, _done=0, _total=0):
        if progress is not None:
            progress(name, len(done), len(names))
        done.append(name)

    served = True
    scratch = None  # a packed copy for the equations of motion of a model not compiled
    for item in what:
        if item == 'rnea':
            served = model.compile(progress=report) and served
        elif not _eom_available():
            served = False
        else:
            from .packed import PackedModel
            from .warm_up import warm_up_eom
            packed = model.runtime.eom_packed
            if packed is None:
                if scratch is None:
                    scratch = PackedModel(model, model.runtime.inertia)
                packed = scratch
            warm_up_eom(packed, report, (_EOM_STEP[item],))
    return served


def ready(model, what):
    """
    Say whether calls of ``what`` on ``model`` run without waiting for a compilation.

    True on the NumPy path (nothing to build) and where the kernels are bound; False where a
    call would compile them first.
    """
    what = _check(what)
    runtime = model.runtime
    for item in what:
        if item == 'rnea':
            continue  # the NumPy path serves until the model's compilation is done
        packed = runtime.eom_packed
        if packed is None:
            continue
        from .warm_up import built
        if not built(_EOM_STEP[item]):
            return False
    return True


def cache_directory():
    """
    Return the directory numba keeps the compiled kernels in (after they were compiled).

    ``''`` when numba does not say (a numba without an on-disk cache for them), or without
    numba.
    """
    if not _available():
        return ''
    from .warm_up import cache_directory as directory
    return directory()


def compiled_here():
    """
    Return the names of the kernels this process compiled rather than loaded from the cache.

    Empty after a complete ``precompile`` (or before any compilation); numba's dispatchers
    count their cache misses.
    """
    if not _available():
        return []
    from .warm_up import compiled_here as missed
    return missed()
