"""
Identification: the model of *this* robot from its recorded efforts (no ROS).

The commands::

    python -m rbd_dynamics excite ROBOT [--duration S] [--start Q ...] [--out DIR]
    python -m rbd_dynamics identify ROBOT BAG [BAG ...] [--validate BAG ...] [--out DIR] ...

Modules: :mod:`.inertia` (a body's ten parameters, its pseudo-inertia, the URDF
``<inertial>``; NumPy only, :class:`~rbd_dynamics.Model` uses it too), :mod:`.columns` (the
parameter and drive columns, their names and the one definition of the base parameters that
``excite`` and ``identify`` share), :mod:`.friction` (each joint's friction width),
:mod:`.stack` (the data folded into small factors), :mod:`.fit` (weighted least squares and the
physically consistent parameters; cvxpy), :mod:`.hold` (joints held where a recording leaves
them), :mod:`.recordings` (reading, merging and splitting the recordings), :mod:`.report`
(errors, summary, CSV, plot), :mod:`.writeback` (``identified.urdf``, ``drive.yaml``),
:mod:`.blas` (one BLAS thread for the small factorisations), :mod:`.pipeline` (identification
as one call); the excitation's design is :mod:`rbd_dynamics.excitation`, the commands that
drive them :mod:`rbd_dynamics.cli`.
SciPy and cvxpy are imported where they are used: importing this package needs NumPy only.
"""

from .blas import blas_threads
from .columns import DRIVE_TERMS, Layout, link_scales, PARAMETER_NAMES, unit_scale
from .fit import DEFAULT_MAX_CONDITION, DEFAULT_MAX_ITERATIONS, Identification, \
    NotExcitedError, own_link_offsets, residual_share, solve
from .stack import barely_moved, DEFAULT_CHUNK, DEFAULT_MIN_SPEED, moving, Stack
from ..spatial import consistency_margin, link_inertial, parameters_from_pseudo, \
    parameters_from_spatial, pseudo_inertia, rotational_inertia

__all__ = [
    'barely_moved', 'blas_threads', 'consistency_margin', 'DEFAULT_CHUNK',
    'DEFAULT_MAX_CONDITION', 'DEFAULT_MAX_ITERATIONS', 'DEFAULT_MIN_SPEED', 'DRIVE_TERMS',
    'Identification', 'Layout', 'link_inertial', 'link_scales', 'moving', 'NotExcitedError',
    'own_link_offsets', 'PARAMETER_NAMES', 'parameters_from_pseudo', 'parameters_from_spatial',
    'pseudo_inertia', 'residual_share', 'rotational_inertia', 'solve', 'Stack', 'unit_scale',
]
