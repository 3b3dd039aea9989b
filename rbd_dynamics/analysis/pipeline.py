"""
From merged joint states or a planned trajectory to a :class:`~.report.TorqueTable`.

The torques of every state come from one batch call ``rbd.rnea(model, Q, QD, QDD)`` on
``(N, nv)`` arrays (the compiled batch kernels for 256 states or more).
"""

import numpy as np

from . import AnalysisError
from .differentiate import DEFAULT_ORDER, DEFAULT_WINDOW, derivative
from .report import TorqueTable
from ..control.joint_states import joint_state_problem
from ..drive import drive_torques
from ..dynamics import rnea


def check_model(model):
    """
    Joint states and trajectories carry one coordinate per joint: refuse other models.

    Raises
    ------
    AnalysisError
        the model has a multi-DoF (floating or planar) joint in use.

    """
    problem = joint_state_problem(model)
    if problem:
        raise AnalysisError(problem)


def state_derivatives(merged, window=DEFAULT_WINDOW, order=DEFAULT_ORDER):
    """
    Compute velocities and accelerations of merged joint states.

    Velocities (recorded, or differentiated positions) and accelerations (differentiated
    velocities), segment by segment (never across a gap).

    Parameters
    ----------
    merged
        :class:`~.merge.MergedStates`.
    window
        the Savitzky-Golay window [s].
    order
        the fitted polynomial's degree.

    Returns
    -------
    ``(qd, qdd)``, each ``(n, nv)``.

    """
    qd = merged.qd.copy()
    qdd = np.empty_like(qd)
    estimate = ~merged.recorded_velocity
    for start, stop in merged.segments():
        t = merged.time[start:stop]
        if estimate.any():
            qd[start:stop, estimate] = derivative(t, merged.q[start:stop, estimate], window,
                                                  order)
        qdd[start:stop] = derivative(t, qd[start:stop], window, order)
    return qd, qdd


def torque_table(model, time, q, qd, qdd, effort=None, time_label='time [s]', drive=None):
    """
    Return the table of states and their ``rnea`` torques (one batch call).

    ``drive``: ``{'viscous', 'coulomb', 'armature', 'coulomb_velocity'}`` arrays ``(nv,)``
    whose torques (:func:`~rbd_dynamics.drive_torques`) are added, or ``None``.

    Raises
    ------
    AnalysisError
        a torque is not finite (states of absurd magnitude overflow).

    """
    tau = rnea(model, q, qd, qdd)
    if drive is not None:
        tau = tau + drive_torques(qd, qdd, drive['viscous'], drive['coulomb'], drive['armature'],
                                  drive['coulomb_velocity'])
    finite = np.isfinite(tau).all(axis=1)
    if not finite.all():
        row = int(np.argmin(finite))
        raise AnalysisError('the torques at %s = %.9g s are not finite: the state there is out '
                            'of range (q = %s, qd = %s)' % (time_label.split()[0], time[row],
                                                            q[row].tolist(), qd[row].tolist()))
    return TorqueTable(model.joint_names, time, q, qd, qdd, tau, effort,
                       model.effort_limits, time_label)


def bag_table(model, merged, window=DEFAULT_WINDOW, order=DEFAULT_ORDER, drive=None):
    """Compute derivatives and torques of merged joint states (see :func:`state_derivatives`)."""
    qd, qdd = state_derivatives(merged, window, order)
    return torque_table(model, merged.time, merged.q, qd, qdd, merged.effort, drive=drive)


def trajectory_table(model, trajectory, hold=None):
    """
    Compute the torques at every point of a planned trajectory.

    Joints of the model that the trajectory does not name are held at rest at ``hold[name]``
    (0 where not given); names the model does not have are ignored.

    Returns
    -------
    ``(table, notes)``: the :class:`~.report.TorqueTable` (``time`` = ``time_from_start``)
    and sentences about ignored and held joints.

    Raises
    ------
    AnalysisError
        no joint of the trajectory is a joint of the model.

    """
    hold = dict(hold or {})
    index = {name: i for i, name in enumerate(model.joint_names)}
    cols = [(c, index[n]) for c, n in enumerate(trajectory.joint_names) if n in index]
    notes = []
    unknown = [n for n in trajectory.joint_names if n not in index]
    if not cols:
        raise AnalysisError("none of the trajectory's joints (%s) is a joint of the model (%s)"
                            % (', '.join(trajectory.joint_names), ', '.join(model.joint_names)))
    if unknown:
        notes.append('ignored joints the model does not have: %s' % ', '.join(unknown))
    msg_cols, model_cols = (list(x) for x in zip(*cols))
    held = [i for i in range(model.nv) if i not in set(model_cols)]
    if held:
        notes.append('held at rest: %s' % ', '.join(
            '%s = %g' % (model.joint_names[i], hold.get(model.joint_names[i], 0.0))
            for i in held))
    n = len(trajectory.time)
    q, qd, qdd = np.zeros((n, model.nv)), np.zeros((n, model.nv)), np.zeros((n, model.nv))
    for i in held:
        q[:, i] = float(hold.get(model.joint_names[i], 0.0))
    q[:, model_cols] = trajectory.positions[:, msg_cols]
    qd[:, model_cols] = trajectory.velocities[:, msg_cols]
    qdd[:, model_cols] = trajectory.accelerations[:, msg_cols]
    effort = {}
    if trajectory.effort is not None:
        effort = {model.joint_names[i]: trajectory.effort[:, c] for c, i in cols}
    table = torque_table(model, trajectory.time, q, qd, qdd, effort,
                         'time_from_start [s]')
    return table, notes
