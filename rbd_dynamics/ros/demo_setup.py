"""
The demo's robot, swing and parameters: one definition for the demo, its launch file and tests.

The bundled arm starts at rest on ``Q0`` and swings each joint as
``q_d = center + amplitude (1 - cos(2 pi f t))`` (:func:`swing`), the reference
``rbd_dynamics_trajectory`` publishes and the demo compares the simulated arm with. The
parameter dicts are what ``python -m rbd_dynamics.ros.demo`` and ``launch/demo.launch.py``
give the three processes. Nothing here imports rclpy.
"""

from typing import NamedTuple

import numpy as np

#: The bundled arm's joints driven by the demo, in command order.
JOINTS = ['joint%d' % i for i in range(1, 8)] + ['left_finger_joint']
#: Start pose and centre of the swing [rad, m for the finger], in ``JOINTS`` order.
Q0 = [0.3, 0.6, -0.2, -1.2, 0.1, 0.8, 0.0, 0.02]
#: Half the peak-to-peak swing of each joint [rad, m].
AMPLITUDE = [0.3, 0.2, 0.3, 0.25, 0.3, 0.3, 0.4, 0.0]
#: Frequency of the swing [Hz].
FREQUENCY = 0.5
#: Rate of the simulated driver [Hz].
RATE = 1000.0
#: The node's PD gains on every joint [1/s^2, 1/s].
KP, KD = 400.0, 40.0
#: The link of the wrist force/torque sensor.
SENSOR_FRAME = 'ft_frame'
#: The node's parameters for the wrist sensor (the gripper beyond it is compensated).
WRIST_SENSOR = {'wrench_sensors': ['wrist'], 'wrench.wrist.topic': 'ft_sensor/wrench',
                'wrench.wrist.compensate_payload': True, 'wrench.wrist.timeout': 0.01}


class Swing(NamedTuple):
    """The desired state of the swing: ``(k,)`` arrays for one time, ``(n, k)`` for ``n``."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


def swing(t, center, amplitude, frequency=FREQUENCY):
    """
    Desired state of the swing at time ``t``.

    Parameters
    ----------
    t
        time [s], a scalar or ``(n,)``.
    center, amplitude
        ``(k,)`` per joint [rad or m].
    frequency
        [Hz].

    Returns
    -------
    Swing
        ``(q, qd, qdd)``: ``(k,)`` arrays for a scalar ``t``, ``(n, k)`` for ``(n,)`` times;
        ``q = center + amplitude (1 - cos(w t))`` with ``w = 2 pi frequency``, which starts
        at rest on ``center``.

    """
    w = 2.0 * np.pi * frequency
    phase = w * np.asarray(t, dtype=float)[..., None]
    center, amplitude = np.asarray(center, dtype=float), np.asarray(amplitude, dtype=float)
    return Swing(center + amplitude * (1.0 - np.cos(phase)), amplitude * w * np.sin(phase),
                 amplitude * w * w * np.cos(phase))


def sim_parameters(joints=JOINTS, center=Q0):
    """Return ``rbd_dynamics_sim``'s parameters: lockstep at :data:`RATE` from ``center``."""
    return {'lockstep': True, 'rate': RATE, 'initial_positions': list(center),
            'joints': list(joints)}


def swing_parameters(joints=JOINTS, center=Q0, amplitude=AMPLITUDE):
    """Return ``rbd_dynamics_trajectory``'s parameters: :func:`swing` on the simulated clock."""
    return {'joints': list(joints), 'center': list(center), 'amplitude': list(amplitude),
            'frequency': FREQUENCY, 'forward_joint_states': True, 'use_sim_time': True}


def node_parameters(urdf, joints=JOINTS, sensor=True):
    """Return the node's parameters: computed torque with PD gains on the simulated clock."""
    params = {'robot_description': urdf, 'use_sim_time': True, 'joints': list(joints),
              'kp': [KP] * len(joints), 'kd': [KD] * len(joints), 'desired_timeout': 0.05}
    if sensor:
        params.update(WRIST_SENSOR)
    return params
