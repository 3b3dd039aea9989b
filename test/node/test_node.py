"""
The node in its own process, over real DDS: outputs equal the library's results.

The robot is the bundled demo arm: a tree with a mimic finger, an F/T sensor frame (``ft_frame``)
attached by fixed joints, and links beyond it. Each test computes the expected torques with the
library from the same inputs it sends to the node.
"""

import math
import os

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

import rbd_dynamics as rbd  # noqa: E402
from rbd_dynamics.resources import share_directory  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from support import TOL  # noqa: E402
from support.ros import (exchange, in_order, no_answer, NodeProcess, Peer,  # noqa: E402
                         wait_for_torques, wait_ready)


# ---------------------------------------------------------------------------------------------
# A node configured like a real cell: custom joint order, gains, two F/T sensors (one on a
# fixed-joint child, one reporting what the robot exerts), description on the latched topic.

SENSORS = {
    'wrist': {'topic': '/wrist/wrench', 'convention': 'applied_on_robot', 'timeout': 30.0},
    'finger': {'topic': '/finger/wrench', 'frame': 'left_finger',
               'convention': 'exerted_by_robot', 'timeout': 30.0},
}


@pytest.fixture(scope='module')
def cell_process(model):
    joints = list(reversed(model.joint_names))
    params = {'joints': joints, 'kp': [25.0 + i for i in range(len(joints))],
              'kd': [4.0 + 0.5 * i for i in range(len(joints))], 'desired_timeout': 30.0,
              'wrench_sensors': sorted(SENSORS)}
    for name, config in SENSORS.items():
        for key, value in config.items():
            params['wrench.%s.%s' % (name, key)] = value
    node = NodeProcess(params, namespace='/cell')
    peer = Peer('/cell', sensor_topics=[c['topic'] for c in SENSORS.values()])
    yield node, peer, params
    peer.close()
    assert node.stop() == 0, node.log()


@pytest.fixture
def cell(cell_process, model, urdf):
    """
    Reset the cell node to the demo arm.

    The cell node with the demo arm's description in use and zero wrench readings, whatever
    the tests before left (a swapped description, readings fresh for 30 s).
    """
    node, peer, params = cell_process
    assert peer.wait_matched(desired=True), node.log()
    assert peer.wait_for(lambda: all(pub.get_subscription_count() > 0
                                     for pub in peer.pub_wrench.values())), node.log()
    peer.pub_description.publish(String(data=urdf))
    for config in SENSORS.values():
        peer.wrench(config['topic'], 'ft_frame', np.zeros(6))
    q = np.linspace(-0.3, 0.3, model.nq)
    expect = in_order(model, params['joints'], rbd.gravity_torques(model, q))
    assert wait_for_torques(peer, model.joint_names, q, np.zeros(model.nv), gravity=expect), \
        node.log()
    return node, peer, params


def test_cell_outputs_equal_library(cell, model):
    node, peer, params = cell
    joints = params['joints']
    rng = np.random.default_rng(3)
    q = rng.uniform(-1.0, 1.0, model.nq)
    q[model.joint_names.index('left_finger_joint')] = 0.01
    qd = rng.uniform(-1.0, 1.0, model.nv)
    q_d = q + rng.uniform(-0.05, 0.05, model.nv)
    qd_d = rng.uniform(-1.0, 1.0, model.nv)
    qdd_d = rng.uniform(-2.0, 2.0, model.nv)
    w_wrist = rng.uniform(-5.0, 5.0, 6)
    w_finger = rng.uniform(-2.0, 2.0, 6)

    # the desired state in yet another order than `joints`
    order = sorted(model.joint_names)
    pick = [model.joint_names.index(n) for n in order]
    peer.desired(order, qdd_d[pick], q_d[pick], qd_d[pick])
    peer.wrench('/wrist/wrench', 'ft_frame', w_wrist)
    peer.wrench('/finger/wrench', 'ignored_frame', w_finger)
    peer.spin(0.5)
    # two partial messages from two drivers; the mimic finger and a foreign joint are ignored
    arm = [n for n in model.joint_names if n.startswith('joint')]
    rows = [model.joint_names.index(n) for n in arm]
    peer.joint_state(arm, q[rows], qd[rows])
    hand_q = [q[model.joint_names.index('left_finger_joint')], 0.5, 7.0]
    hand_qd = [qd[model.joint_names.index('left_finger_joint')], 0.1, 0.0]
    answer = exchange(peer, ['left_finger_joint', 'right_finger_joint', 'other_robot_joint'],
                      hand_q, hand_qd)
    assert answer is not None, node.log()
    ff, g, cmd = answer

    kp = np.zeros(model.nv)
    kd = np.zeros(model.nv)
    kp[[model.joint_names.index(n) for n in joints]] = params['kp']
    kd[[model.joint_names.index(n) for n in joints]] = params['kd']
    qdd = qdd_d + kp * (q_d - q) + kd * (qd_d - qd)
    f_ext = {'ft_frame': w_wrist, 'left_finger': -w_finger}
    expect_ff = in_order(model, joints, rbd.rnea(model, q, qd, qdd, f_ext))
    expect_g = in_order(model, joints, rbd.gravity_torques(model, q, f_ext))
    assert list(ff.name) == joints and list(g.name) == joints
    np.testing.assert_allclose(ff.effort, expect_ff, rtol=0, atol=TOL)
    np.testing.assert_allclose(g.effort, expect_g, rtol=0, atol=TOL)
    np.testing.assert_allclose(cmd.data, expect_ff, rtol=0, atol=TOL)
    # the wrenches matter: without them the torques differ
    assert np.abs(expect_g - in_order(model, joints, rbd.gravity_torques(model, q))).max() > 0.1

    # a message without velocities keeps the last ones; new positions for the arm only
    q2 = q.copy()
    q2[rows] += 0.1
    answer = exchange(peer, arm, q2[rows])
    assert answer is not None, node.log()
    expect = in_order(model, joints, rbd.rnea(model, q2, qd, qdd_d + kp * (q_d - q2)
                                              + kd * (qd_d - qd), f_ext))
    np.testing.assert_allclose(answer[0].effort, expect, rtol=0, atol=TOL)
    assert node.alive()


def test_cell_command_output_switch_and_rejected_parameters(cell, model):
    node, peer, params = cell
    joints = params['joints']
    bad = [
        {'kp': [1.0, 2.0]},
        {'kd': [-1.0] * len(joints)},
        {'command_output': 'torque'},
        {'joints': ['joint1', 'no_such_joint']},
        {'joints': ['joint1', 'right_finger_joint']},
        {'gravity': [0.0, -9.81]},
        {'gravity': [0.0, 0.0, float('nan')]},
        {'desired_timeout': -1.0},
        {'wrench.wrist.convention': 'sideways'},
        {'wrench.wrist.timeout': -0.5},
        {'wrench_sensors': ['other']},
        {'gravity': 'down'},
    ]
    for values in bad:
        (result,) = peer.set_parameters(**values)
        assert not result.successful, values
        assert result.reason, values
    (result,) = peer.set_parameters(kp=[1.0, 2.0])
    assert 'kp' in result.reason and '2' in result.reason
    (result,) = peer.set_parameters(joints=['joint1', 'no_such_joint'])
    assert 'no_such_joint' in result.reason

    # accepted: the command now carries the gravity compensation
    (result,) = peer.set_parameters(command_output='gravity_compensation')
    assert result.successful, result.reason
    q = np.linspace(-0.5, 0.5, model.nq)
    qd = np.linspace(1.0, -1.0, model.nv)  # a moving arm: feedforward and gravity differ
    answer = exchange(peer, model.joint_names, q, qd)
    assert answer is not None, node.log()
    ff, g, cmd = answer
    np.testing.assert_allclose(cmd.data, g.effort, rtol=0, atol=0)
    assert np.abs(np.subtract(cmd.data, ff.effort)).max() > 1e-3
    (result,) = peer.set_parameters(command_output='feedforward')
    assert result.successful
    answer = exchange(peer, model.joint_names, q, qd)
    assert answer is not None, node.log()
    np.testing.assert_allclose(answer[2].data, answer[0].effort, rtol=0, atol=0)
    # the rejected values left the old ones in place: outputs still in `joints` order (the
    # torques after refused gains and gravity: test_node_runtime)
    assert list(answer[0].name) == joints
    assert node.alive()


def test_cell_description_swap(cell, model, urdf):
    node, peer, params = cell
    joints = params['joints']
    heavier = urdf.replace('<mass value="0.6"/>', '<mass value="2.6"/>')
    assert heavier != urdf
    swapped = rbd.Model.from_urdf(heavier)
    peer.pub_description.publish(String(data=heavier))
    q = np.linspace(0.3, -0.3, model.nq)
    zero = np.zeros(model.nv)
    expect = in_order(swapped, joints, rbd.gravity_torques(swapped, q))
    assert wait_for_torques(peer, model.joint_names, q, zero, gravity=expect), node.log()

    # an unusable description is rejected and the last good model stays in use
    peer.pub_description.publish(String(data=heavier.replace('<joint name="joint3"',
                                                             '<joint name="joint2"')))
    peer.pub_description.publish(String(data='<robot name="x"><link name="a"/>'))
    peer.spin(1.0)
    answer = exchange(peer, model.joint_names, q, zero)
    assert answer is not None, node.log()
    np.testing.assert_allclose(answer[1].effort, expect, rtol=0, atol=TOL)
    assert 'rejected' in node.log()
    assert node.alive()


# ---------------------------------------------------------------------------------------------
# Payload compensation and staleness: a sensor at ft_frame that also carries the modelled
# gripper, timeouts short enough to wait out and long enough for a loaded machine's round trip.

STALE = 2.0


@pytest.fixture(scope='module')
def wrist(urdf):
    params = {'robot_description': urdf, 'wrench_sensors': ['wrist'],
              'wrench.wrist.topic': '/ft/wrench', 'wrench.wrist.frame': 'ft_frame',
              'wrench.wrist.compensate_payload': True, 'wrench.wrist.timeout': STALE,
              'desired_timeout': STALE}
    node = NodeProcess(params, namespace='/wrist')
    peer = Peer('/wrist', sensor_topics=['/ft/wrench'])
    yield node, peer
    peer.close()
    assert node.stop() == 0, node.log()


def test_payload_compensation_and_staleness(wrist, model):
    node, peer = wrist
    assert wait_ready(peer, model), node.log()
    q = np.array([0.2, -0.6, 0.3, -1.2, 0.4, 0.9, -0.3, 0.02])
    qd = np.array([0.3, -0.2, 0.1, 0.4, -0.5, 0.2, 0.1, 0.0])
    qdd_d = np.array([1.0, -0.5, 0.3, 0.2, -0.1, 0.4, 0.6, 0.0])
    # the sensor at rest, nothing touching the tool: it reads the modelled tool's weight
    reading = -rbd.payload_wrench(model, 'ft_frame', q)
    payload = rbd.payload_wrench(model, 'ft_frame', q, qd, qdd_d)

    def fresh_exchange():
        peer.wrench('/ft/wrench', 'ignored', reading)
        peer.desired(model.joint_names, qdd_d)
        peer.spin(0.15)
        return exchange(peer, model.joint_names, q, qd)

    answer = fresh_exchange()
    assert answer is not None, node.log()
    ff, g, cmd = answer
    # compensated: the tool is not counted twice, the torques are those without a reading
    np.testing.assert_allclose(g.effort, rbd.gravity_torques(model, q), rtol=0, atol=TOL)
    expect_ff = rbd.rnea(model, q, qd, qdd_d, {'ft_frame': reading + payload})
    np.testing.assert_allclose(ff.effort, expect_ff, rtol=0, atol=TOL)
    # and the reading is not negligible
    assert np.abs(rbd.gravity_torques(model, q, {'ft_frame': reading})
                  - rbd.gravity_torques(model, q)).max() > 0.5

    # a contact on top of the tool weight is what remains
    contact = np.array([3.0, -2.0, 5.0, 0.2, 0.1, -0.3])
    reading = contact - rbd.payload_wrench(model, 'ft_frame', q)
    answer = fresh_exchange()
    np.testing.assert_allclose(answer[1].effort,
                               rbd.gravity_torques(model, q, {'ft_frame': contact}),
                               rtol=0, atol=TOL)

    # stale desired input and wrench: zero acceleration, no external wrench
    peer.spin(2.0 * STALE)
    answer = exchange(peer, model.joint_names, q, qd)
    assert answer is not None, node.log()
    np.testing.assert_allclose(answer[0].effort, rbd.rnea(model, q, qd, np.zeros(model.nv)),
                               rtol=0, atol=TOL)
    np.testing.assert_allclose(answer[1].effort, rbd.gravity_torques(model, q), rtol=0,
                               atol=TOL)


# ---------------------------------------------------------------------------------------------
# A fresh node: nothing before every joint has a position; bad messages change nothing.

@pytest.fixture
def fresh(urdf):
    node = NodeProcess({'robot_description': urdf}, namespace='/fresh')
    peer = Peer('/fresh')
    yield node, peer
    peer.close()
    assert node.stop() == 0, node.log()


def test_waits_for_every_joint_and_survives_bad_messages(fresh, model):
    node, peer = fresh
    assert peer.wait_matched(), node.log()

    def diagnosis():
        messages = [s.message for d in peer.diagnostics for s in d.status
                    if s.name.startswith('/fresh/')]
        return messages[-1] if messages else ''

    # the model is there (its diagnostics list every joint as missing): still no output
    assert peer.wait_for(lambda: 'waiting for joint_states of joint1' in diagnosis(), 120.0)
    arm = [n for n in model.joint_names if n.startswith('joint')]
    q = np.linspace(-0.4, 0.4, model.nq)
    rows = [model.joint_names.index(n) for n in arm]
    assert no_answer(peer, arm, q[rows])
    assert peer.wait_for(lambda: diagnosis() == 'waiting for joint_states of left_finger_joint',
                         60.0), diagnosis()

    bad = [
        (['left_finger_joint'], [math.nan], []),
        (['left_finger_joint'], [math.inf], [0.0]),
        (['left_finger_joint'], [0.01, 0.02], []),
        (['left_finger_joint', 'left_finger_joint'], [0.01, 0.01], []),
        ([], [], []),
    ]
    for names, pos, vel in bad:
        assert no_answer(peer, names, pos, vel, wait=0.2), names
    answer = exchange(peer, ['left_finger_joint'], [q[-1]])
    assert answer is not None, node.log()
    np.testing.assert_allclose(answer[1].effort, rbd.gravity_torques(model, q), rtol=0,
                               atol=TOL)
    # (a non-finite joint state after a complete one: test_node_runtime)
    assert node.alive()


def test_shipped_config_and_nested_sensor_parameters(urdf, model, tmp_path):
    """The node started like the launch file starts it: the installed config, then overrides."""
    config = os.path.join(share_directory(), 'config', 'rbd_dynamics.yaml')
    sensors = tmp_path / 'sensors.yaml'
    sensors.write_text('/**:\n  ros__parameters:\n    wrench_sensors: [wrist]\n'
                       '    wrench:\n      wrist:\n        topic: /nested/wrench\n'
                       '        frame: ft_frame\n        timeout: 0.0\n')
    node = NodeProcess({'robot_description': urdf}, namespace='/shipped',
                       params_files=[config, str(sensors)])
    peer = Peer('/shipped', sensor_topics=['/nested/wrench'])
    try:
        assert wait_ready(peer, model), node.log()
        wrench = np.array([1.0, -2.0, 3.0, 0.1, -0.2, 0.3])
        peer.wrench('/nested/wrench', '', wrench)
        q = np.linspace(0.2, -0.2, model.nq)
        expect = rbd.gravity_torques(model, q, {'ft_frame': wrench})
        assert wait_for_torques(peer, model.joint_names, q, gravity=expect, timeout=120.0), \
            node.log()
    finally:
        peer.close()
        assert node.stop() == 0, node.log()
