"""
The values the torque law keeps between states and returns.

Its inputs with their arrival, the task-space law's hold, the observer's deferred step, and the
:class:`Output` of one state.
"""

from typing import NamedTuple

import numpy as np


class Output:
    """
    Torques of one state, in output order.

    Attributes
    ----------
    feedforward, gravity
        ``(len(joints),)`` rigid-body (+ drive) torques, never clamped (a floating base's
        ``gravity`` ``None`` where it was not asked for).
    command
        ``(len(joints),)`` what ``~/effort_commands`` carries (clamped and rate
        limited when configured).
    saturated
        names of the joints whose command exceeded its limit (before clamping).
    external
        ``(len(joints),)`` the observer's residual (external joint torques), or ``None``
        when the observer did not run on this state (or has not yet: ``pending``).
    step
        the observer's :class:`~.observer.Step` (model order), or ``None``.
    task_error
        ``(6,)`` the task-space law's pose error (position [m], rotation vector [rad], root
        axes), or ``None`` when the command is not the task-space law.
    pending
        the observer's step :meth:`Controller.compute` left for
        :meth:`Controller.observe_pending` (``observe_later``), or ``None``. It holds the
        caller's state arrays: run it before they change.
    floating
        a floating base's :class:`~rbd_dynamics.floating.FloatingResult` of the feedforward
        (base wrench, contact wrenches, unbalanced wrench), or ``None``.

    """

    __slots__ = ('feedforward', 'gravity', 'command', 'saturated', 'external', 'step',
                 'task_error', 'pending', 'floating')

    def __init__(self, feedforward, gravity, command, saturated, external=None, step=None,
                 task_error=None, pending=None, floating=None):
        self.feedforward = feedforward
        self.gravity = gravity
        self.command = command
        self.saturated = saturated
        self.external = external
        self.step = step
        self.task_error = task_error
        self.pending = pending  # the observer's step left for after the torques (compute)
        self.floating = floating


class Stamped(NamedTuple):
    """An input kept with the model it is in the order of and when it arrived."""

    model: object
    arrival_ns: int
    value: object


class DesiredPose(NamedTuple):
    """The task-space law's desired pose in the root frame."""

    position: np.ndarray  # (3,)
    quaternion: np.ndarray  # (4,), [x, y, z, w]
    rotation: np.ndarray  # (3, 3), the quaternion's matrix


class TaskHold(NamedTuple):
    """What the task-space law holds, taken when it starts (:meth:`Controller.task_command`)."""

    model: object
    link: str
    position: np.ndarray  # (3,), the link's origin then
    rotation: np.ndarray  # (3, 3), its axes then
    posture: np.ndarray  # (nq,), the joints' positions then
    start_ns: int


class ObserverStep(NamedTuple):
    """The arguments of :meth:`Controller.observe` for one state, kept to run it later."""

    setup: object
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray
    stamp_ns: int
    f_ext: object
    g: object
    carried: tuple
    bias: object
