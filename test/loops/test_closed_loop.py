"""
Closed loop over real topics: MuJoCo robot <-> rbd_dynamics node, each in its own process.

The simulated driver runs in lockstep (one control period per effort command), so the loop is
deterministic however loaded the machine is; the node runs on the simulated clock.
"""

import numpy as np
import pytest

pytest.importorskip('mujoco')
rclpy = pytest.importorskip('rclpy')

from rbd_dynamics.resources import demo_urdf_path  # noqa: E402
from support.sim import JOINTS, Q0  # noqa: E402


def drift(t, q, start=0.0):
    keep = t >= start
    return np.abs(q[keep] - Q0).max(axis=0)


def test_gravity_compensation_holds_the_arm(loop):
    run = loop('/hold', {'command_output': 'gravity_compensation'})
    t, q = run.run_until(5.0)
    assert len(t) and t[-1] >= 5.0, run.logs()
    assert drift(t, q)[:7].max() < 1e-3, drift(t, q)


def test_wrong_gravity_does_not_hold(loop):
    run = loop('/wrong_gravity', {'command_output': 'gravity_compensation',
                                  'gravity': [0.0, 0.0, -9.0]})
    t, q = run.run_until(2.0)
    assert len(t) and t[-1] >= 2.0, run.logs()
    assert drift(t, q)[:7].max() > 1e-3


TRACKING_BOUND = 1e-3  # rad, RMS error of every arm joint
AMPLITUDE = [0.2, 0.15, 0.2, 0.15, 0.2, 0.2, 0.2, 0.0]


def track(loop, ns, node_params):
    """
    Track a swing of the arm and measure the error.

    0.5 Hz swings of every arm joint under computed torque with PD gains (400, 40): the RMS
    tracking error of each arm joint [rad] over 4 s.
    """
    trajectory = {'center': Q0.tolist(), 'amplitude': AMPLITUDE, 'frequency': 0.5}
    params = {'command_output': 'feedforward', 'kp': [400.0] * 8, 'kd': [40.0] * 8}
    params.update(node_params)
    run = loop(ns, params, trajectory=trajectory)
    t, q = run.run_until(4.0)
    assert len(t) and t[-1] >= 4.0, run.logs()
    w = 2 * np.pi * 0.5
    desired = Q0 + np.array(AMPLITUDE) * (1 - np.cos(w * t[:, None]))
    error = q - desired
    rms = np.sqrt(np.mean(error[:, :7] ** 2, axis=0))
    print('%s: tracking RMS error [rad]: %s' % (ns, np.array2string(rms, precision=6)))
    # the arm really moved
    assert np.abs(q[:, :7] - Q0[:7]).max() > 0.3
    return rms


def test_computed_torque_tracks_a_sinusoid(loop):
    rms = track(loop, '/track', {})
    assert rms.max() < TRACKING_BOUND, rms


def test_a_wrong_model_misses_the_tracking_bound(loop):
    """
    Wrong model misses the tracking bound.

    The negative control of the test above: the same gains and trajectory with the
    feedforward of a wrong model (about half the gravity) miss its bound, so the bound
    measures the model's share of the tracking, not the PD terms alone.
    """
    rms = track(loop, '/track_wrong_model', {'gravity': [0.0, 0.0, -5.0]})
    assert rms.max() > TRACKING_BOUND, rms


PUSH = np.array([3.0, -2.0, -8.0])  # world frame, at the tool centre point [N]


@pytest.mark.parametrize('compensate', [True, False])
def test_push_measured_by_the_wrist_sensor(loop, compensate):
    """
    Push on the tool measured by the wrist sensor.

    A push on the tool, measured by the simulated wrist F/T sensor (which also weighs the
    gripper): with payload compensation the gravity-compensation torques are those of the
    contact wrench alone; without it the gripper is counted twice. PD terms hold the arm.
    """
    import mujoco
    import rbd_dynamics as rbd
    from rbd_dynamics.sim import mujoco_model

    run = loop('/push_%s' % compensate,
               {'command_output': 'feedforward', 'kp': [400.0] * 8, 'kd': [40.0] * 8,
                'wrench_sensors': ['wrist'], 'wrench.wrist.topic': 'ft_sensor/wrench',
                'wrench.wrist.timeout': 0.01, 'wrench.wrist.compensate_payload': compensate},
               {'push_link': 'tool_center_point', 'push_force': PUSH.tolist(),
                'push_start': 0.5, 'push_duration': 5.0},
               trajectory={'center': Q0.tolist(), 'amplitude': [0.0] * 8, 'frequency': 0.5,
                           }, gravity=True)
    gravity = run.gravity
    t, q = run.run_until(2.0)
    assert len(t) and t[-1] >= 2.0, run.logs()
    with open(demo_urdf_path()) as stream:
        urdf = stream.read()
    model = rbd.Model.from_urdf(urdf)
    sim, _ = mujoco_model.load(urdf)
    data = mujoco.MjData(sim)
    tcp = mujoco.mj_name2id(sim, mujoco.mjtObj.mjOBJ_BODY, 'tool_center_point')
    by_stamp = {round(s, 6): k for k, s in enumerate(t)}
    errors, effects = [], []
    for msg in gravity:
        k = by_stamp.get(round(run.stamp(msg), 6))
        if k is None or t[k] < 1.5:  # after the push has settled
            continue
        for j, name in enumerate(JOINTS):
            data.qpos[sim.jnt_qposadr[mujoco.mj_name2id(sim, mujoco.mjtObj.mjOBJ_JOINT,
                                                        name)]] = q[k, j]
        data.qpos[sim.jnt_qposadr[mujoco.mj_name2id(sim, mujoco.mjtObj.mjOBJ_JOINT,
                                                    'right_finger_joint')]] = q[k, 7]
        mujoco.mj_kinematics(sim, data)
        push_tcp = data.xmat[tcp].reshape(3, 3).T @ PUSH
        contact = rbd.gravity_torques(model, q[k], {'tool_center_point':
                                                    np.concatenate([push_tcp, np.zeros(3)])})
        errors.append(np.abs(np.asarray(msg.effort) - contact).max())
        effects.append(np.abs(contact - rbd.gravity_torques(model, q[k])).max())
    assert len(errors) > 100, (len(gravity), len(t), [run.stamp(m) for m in gravity[:3]], t[:3])
    assert min(effects) > 0.1  # the push matters
    if compensate:
        assert max(errors) < 1e-2 * min(effects), (max(errors), min(effects))
    else:
        assert min(errors) > 0.1, min(errors)
