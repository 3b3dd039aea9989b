"""
Excitation trajectories for identification: a finite Fourier series per joint.

Every independent joint moves as a finite Fourier series of ``L`` harmonics of the base
frequency ``w = 2 pi / P`` (Swevers et al. 1997)::

    q_j(t) = q0_j + sum_l a_jl sin(l w t) + b_jl (1 - cos(l w t)),    l = 1 .. L

The series starts at ``q0`` and is periodic, so it ends where it starts after any whole number
of periods. Two linear conditions per joint, ``sum_l l a_jl = 0`` and ``sum_l l^2 b_jl = 0``,
make the velocity and the acceleration zero at ``t = 0`` (and so at every period's end): the
motion starts and ends at rest at the start pose. The free coefficients (``2 L - 2`` per joint)
span the null space of those conditions.

They are chosen to minimise the condition number of the *base regressor* stacked along one
period: the rows of :func:`rbd_dynamics.regressor` and of the drive columns (viscous ``qd``,
Coulomb ``tanh(qd / coulomb_velocity)`` and armature ``qdd`` per joint, the model of
:mod:`rbd_dynamics.drive`) at every sample, restricted to the columns the motion can determine
at all: the base columns of :class:`~.columns.Layout`, the same that ``identify`` fits, less
its effort offsets (an armature that moves exactly like its link's inertia is left to the
link). Each column is divided by its norm, so the number measures how independent the
parameters' effects are, whatever their units. The optimiser is SciPy's SLSQP with the analytic
gradient of ``log(cond)`` (the singular vectors; the regressor's derivatives by finite
differences, one joint at a time), under linear constraints (positions inside the limits less a
margin, velocities, accelerations) and the effort constraints ``|rnea + nominal drive| <=
effort limit`` sampled along the period. The result is checked on the written 10 ms grid and
shrunk towards the start pose until every limit holds there too.
"""

from .design import DEFAULT_DURATION, design, Excitation, ProgressLine, StartNotClearError, \
    write_yaml
from .fourier import DEFAULT_HARMONICS, DEFAULT_PERIOD, FourierBasis
from .limits import coverage_need, DEFAULT_MARGIN, excitation_limits, joint_ranges, Limits
from .objective import condition_number, excited_columns, STEP

__all__ = [
    'condition_number', 'coverage_need', 'DEFAULT_DURATION', 'DEFAULT_HARMONICS',
    'DEFAULT_MARGIN', 'DEFAULT_PERIOD', 'design', 'excitation_limits', 'Excitation',
    'excited_columns', 'FourierBasis', 'joint_ranges', 'Limits', 'ProgressLine',
    'StartNotClearError', 'STEP', 'write_yaml',
]
