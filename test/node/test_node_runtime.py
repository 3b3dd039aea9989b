"""
The node at runtime, over real DDS.

The node at runtime, over real DDS: parameter changes accepted and refused, bad and extreme
joint states, the desired inputs, and the description parameter against the topic.

One node process on the demo arm serves every test of the first part; the ``arm`` fixture puts
it back into the same state before each test (parameters, model, desired input), so each test
runs alone as well as with the others. Expected torques come from the library, computed from
the inputs the test sends and the parameter values it expects in force.
"""

import math

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

import rbd_dynamics as rbd  # noqa: E402
from rbd_dynamics.control.law import wrap_angle  # noqa: E402
from rbd_dynamics.resources import demo_urdf_path  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from support import TOL  # noqa: E402
from support.robots import floating_urdf  # noqa: E402
from support.ros import (exchange, in_order, no_answer, NodeProcess, Peer,  # noqa: E402
                         wait_for_torques)
from support.urdf_builders import inertial, joint, link, robot  # noqa: E402

GRAVITY = [0.0, 0.0, -9.81]
T = Parameter.Type


def library_feedforward(model, q, qd, desired=None, kp=0.0, kd=0.0, continuous=()):
    """
    Compute the expected feedforward with the library.

    ``rnea(q, qd, qdd_d + kp (q_d - q) + kd (qd_d - qd))`` (model order), the position
    errors of the joints at ``continuous`` (indices) wrapped to [-pi, pi).
    """
    if desired is None:
        return rbd.rnea(model, q, qd, np.zeros(model.nv))
    q_d, qd_d, qdd_d = desired
    error = np.asarray(q_d, dtype=float) - q
    error[list(continuous)] = wrap_angle(error[list(continuous)])
    return rbd.rnea(model, q, qd, qdd_d + np.multiply(kp, error) + np.multiply(kd, qd_d - qd))


def accepted(results):
    return all(result.successful for result in results), [r.reason for r in results]


def state(seed, model):
    """Draw a random measured state ``(q, qd)`` and desired state ``(q_d, qd_d, qdd_d)``."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.0, 1.0, model.nq)
    qd = rng.uniform(-1.0, 1.0, model.nv)
    desired = (q + rng.uniform(-0.1, 0.1, model.nq), rng.uniform(-1.0, 1.0, model.nv),
               rng.uniform(-2.0, 2.0, model.nv))
    return q, qd, desired


def send_desired(peer, names, model, desired):
    """Publish ``desired`` (model order) for the joints ``names``."""
    rows = [model.joint_names.index(name) for name in names]
    q_d, qd_d, qdd_d = desired
    peer.desired(names, qdd_d[rows], q_d[rows], qd_d[rows])


# ---------------------------------------------------------------------------------------------
# One node on the demo arm, reset before each test.

@pytest.fixture(scope='module')
def arm_process(urdf):
    node = NodeProcess({'robot_description': urdf, 'desired_timeout': 0.0},
                       namespace='/runtime')
    peer = Peer('/runtime')
    yield node, peer
    peer.close()
    assert node.stop() == 0, node.log()


@pytest.fixture
def arm(arm_process, urdf, model):
    """
    Configure the node for the demo arm.

    The node with the demo arm from its parameter, default gravity and root, outputs in
    model order, no gains, a desired input that never expires, and a zero desired
    acceleration in force.
    """
    node, peer = arm_process
    assert peer.wait_matched(desired=True), node.log()
    # one parameter after the other, in an order in which each step is valid on its own
    results = peer.set_parameters(
        Parameter('kp', T.DOUBLE_ARRAY, []), Parameter('kd', T.DOUBLE_ARRAY, []),
        Parameter('joints', T.STRING_ARRAY, []), command_output='feedforward',
        desired_timeout=0.0, root_link='', gravity=GRAVITY, robot_description=urdf)
    assert accepted(results)
    q = np.linspace(-0.3, 0.3, model.nq)
    zero = np.zeros(model.nv)
    expect = rbd.gravity_torques(model, q)
    # the demo arm in use, in model order ...
    assert wait_for_torques(peer, model.joint_names, q, zero, gravity=expect,
                            joints=model.joint_names), node.log()
    # ... with a zero desired acceleration in force (at rest: feedforward = gravity)
    peer.desired(model.joint_names, zero)
    assert wait_for_torques(peer, model.joint_names, q, zero, feedforward=expect,
                            gravity=expect), node.log()
    return node, peer


def test_a_non_finite_joint_state_is_refused_whole(arm, model):
    """
    Non-finite joint state is refused whole.

    Nothing answers it, ``rejected_joint_states`` counts it, and none of its values is
    merged: the next partial state is answered with the torques of the last good values.
    """
    node, peer = arm
    q0, qd0, _ = state(1, model)
    answer = exchange(peer, model.joint_names, q0, qd0)
    assert answer is not None, node.log()
    np.testing.assert_allclose(answer[0].effort, library_feedforward(model, q0, qd0), rtol=0,
                               atol=TOL)
    rejected, non_finite = peer.counts('rejected_joint_states', 'non_finite_outputs')

    # every value differs from the good state; one position, then one velocity, is NaN
    q1, qd1 = q0 + 0.5, qd0 - 0.5
    bad_position = q1.copy()
    bad_position[2] = math.nan
    bad_velocity = qd1.copy()
    bad_velocity[5] = math.nan
    assert no_answer(peer, model.joint_names, bad_position, qd1), node.log()
    assert no_answer(peer, model.joint_names, q1, bad_velocity), node.log()
    assert peer.wait_count('rejected_joint_states', rejected + 2) == rejected + 2, node.log()
    # refused at the input, not merged and then suppressed at the output
    assert int(peer.diagnostic('non_finite_outputs')) == non_finite

    # a partial state (joint1 only, no velocities): every other value is the good state's
    q2 = q0.copy()
    q2[0] = -0.7
    answer = exchange(peer, ['joint1'], [q2[0]])
    assert answer is not None, node.log()
    expect = library_feedforward(model, q2, qd0)
    np.testing.assert_allclose(answer[0].effort, expect, rtol=0, atol=TOL)
    np.testing.assert_allclose(answer[1].effort, rbd.gravity_torques(model, q2), rtol=0,
                               atol=TOL)
    # what a merge of the refused messages' other values would have given is far from it
    merged_q, merged_qd = q1.copy(), qd1.copy()
    merged_q[0], merged_q[2], merged_qd[5] = q2[0], q0[2], qd0[5]
    assert np.abs(library_feedforward(model, merged_q, merged_qd) - expect).max() > 0.5


def test_a_non_finite_torque_publishes_nothing_and_is_counted(arm, model):
    node, peer = arm
    q = np.full(model.nq, 1e308)
    qd = np.full(model.nv, 1e200)
    with np.errstate(all='ignore'):
        assert not np.isfinite(library_feedforward(model, q, qd)).all()
    rejected, non_finite = peer.counts('rejected_joint_states', 'non_finite_outputs')
    assert no_answer(peer, model.joint_names, q, qd), node.log()
    assert peer.wait_count('non_finite_outputs', non_finite + 1) == non_finite + 1, node.log()
    # a finite message: merged (not refused at the input), only its torque was not finite
    assert int(peer.diagnostic('rejected_joint_states')) == rejected
    q, qd, _ = state(2, model)
    answer = exchange(peer, model.joint_names, q, qd)
    assert answer is not None, node.log()
    np.testing.assert_allclose(answer[0].effort, library_feedforward(model, q, qd), rtol=0,
                               atol=TOL)


def test_refused_gains_and_gravity_leave_the_torques_unchanged(arm, model):
    node, peer = arm
    kp = np.linspace(20.0, 55.0, model.nv)
    kd = np.linspace(3.0, 10.0, model.nv)
    assert accepted(peer.set_parameters(kp=kp.tolist(), kd=kd.tolist()))
    q, qd, desired = state(3, model)
    send_desired(peer, model.joint_names, model, desired)
    expect_ff = library_feedforward(model, q, qd, desired, kp, kd)
    expect_g = rbd.gravity_torques(model, q)
    assert wait_for_torques(peer, model.joint_names, q, qd, feedforward=expect_ff,
                            gravity=expect_g), node.log()
    # the gains matter here, and so does gravity
    assert np.abs(expect_ff - library_feedforward(model, q, qd, desired)).max() > 1.0
    assert np.abs(expect_g).max() > 1.0
    (rejected,) = peer.counts('rejected_parameters')

    refused = [
        {'kp': [1.0, 2.0]},
        {'kp': [math.nan] * model.nv},
        {'kp': [-1.0] * model.nv},
        {'kd': [math.inf] * model.nv},
        {'kd': [1.0] * (model.nv + 1)},
        {'gravity': [0.0, -9.81]},
        {'gravity': [0.0, 0.0, math.nan]},
        {'gravity': [0.0, 0.0, -9.81, 0.0]},
        {'gravity': 'down'},  # refused for its type by rclpy, before the node's check
    ]
    for values in refused:
        (result,) = peer.set_parameters(**values)
        assert not result.successful and result.reason, values
        # a model rebuild would take effect asynchronously: leave it the time to
        peer.spin(0.5 if 'gravity' in values else 0.1)
        answer = exchange(peer, model.joint_names, q, qd)
        assert answer is not None, (values, node.log())
        ff, g, cmd = answer
        np.testing.assert_allclose(ff.effort, expect_ff, rtol=0, atol=TOL, err_msg=str(values))
        np.testing.assert_allclose(g.effort, expect_g, rtol=0, atol=TOL, err_msg=str(values))
        np.testing.assert_allclose(cmd.data, expect_ff, rtol=0, atol=TOL, err_msg=str(values))
    # every refusal of the node's own checks is counted
    counted = len(refused) - 1
    assert peer.wait_count('rejected_parameters', rejected + counted) == rejected + counted


def test_accepted_gains_change_the_torques(arm, model):
    node, peer = arm
    q, qd, desired = state(4, model)
    send_desired(peer, model.joint_names, model, desired)
    previous = library_feedforward(model, q, qd, desired)
    assert wait_for_torques(peer, model.joint_names, q, qd, feedforward=previous), node.log()
    for kp, kd in ((np.full(model.nv, 100.0), np.full(model.nv, 20.0)),
                   (np.linspace(10.0, 80.0, model.nv), np.linspace(8.0, 1.0, model.nv))):
        assert accepted(peer.set_parameters(kp=kp.tolist(), kd=kd.tolist()))
        answer = exchange(peer, model.joint_names, q, qd)
        assert answer is not None, node.log()
        expect = library_feedforward(model, q, qd, desired, kp, kd)
        assert np.abs(expect - previous).max() > 1.0
        np.testing.assert_allclose(answer[0].effort, expect, rtol=0, atol=TOL)
        np.testing.assert_allclose(answer[2].data, expect, rtol=0, atol=TOL)
        previous = expect


def test_accepted_joints_change_the_output_order_and_names(arm, model):
    """
    Joints accepted change the output order and names.

    ``joints`` picks and orders the outputs; the gains follow it, the desired state names
    exactly those joints (the others get no desired acceleration and no PD terms).
    """
    node, peer = arm
    q, qd, desired = state(5, model)
    for joints in (['joint4', 'left_finger_joint', 'joint1'],
                   ['joint7', 'joint6', 'joint5', 'joint3', 'joint2']):
        kp = [30.0 + 10.0 * i for i in range(len(joints))]
        assert accepted(peer.set_parameters(Parameter('kp', T.DOUBLE_ARRAY, []),
                                            joints=joints, kp=kp))
        send_desired(peer, joints, model, desired)
        rows = [model.joint_names.index(name) for name in joints]
        mask = np.zeros(model.nv, dtype=bool)
        mask[rows] = True
        kp_model = np.zeros(model.nv)
        kp_model[rows] = kp
        q_d, qd_d, qdd_d = desired
        expect = in_order(model, joints, library_feedforward(
            model, q, qd, (np.where(mask, q_d, q), qd, np.where(mask, qdd_d, 0.0)), kp_model))
        answer = wait_for_torques(peer, model.joint_names, q, qd, feedforward=expect,
                                  joints=joints)
        assert answer is not None, node.log()
        ff, g, cmd = answer
        np.testing.assert_allclose(g.effort, in_order(model, joints,
                                                      rbd.gravity_torques(model, q)),
                                   rtol=0, atol=TOL)
        np.testing.assert_allclose(cmd.data, expect, rtol=0, atol=TOL)


def test_desired_accelerations_in_joints_order(arm, model):
    node, peer = arm
    joints = ['joint7', 'joint2', 'left_finger_joint', 'joint5']
    assert accepted(peer.set_parameters(joints=joints))
    q, qd, _ = state(6, model)
    accelerations = [1.5, -2.0, 0.7, 3.0]
    peer.pub_desired_acc.publish(Float64MultiArray(data=accelerations))
    qdd = np.zeros(model.nv)
    qdd[[model.joint_names.index(name) for name in joints]] = accelerations
    expect = in_order(model, joints, rbd.rnea(model, q, qd, qdd))
    answer = wait_for_torques(peer, model.joint_names, q, qd, feedforward=expect,
                              joints=joints)
    assert answer is not None, node.log()
    assert np.abs(expect - in_order(model, joints, library_feedforward(model, q, qd))).max() \
        > 0.1


def test_desired_timeout_zero_never_expires(arm, model):
    node, peer = arm
    q, qd, (_, _, qdd_d) = state(7, model)
    expect = rbd.rnea(model, q, qd, qdd_d)
    stale = library_feedforward(model, q, qd)
    assert np.abs(expect - stale).max() > 0.1
    for timeout, after in ((0.0, expect), (0.3, stale)):
        assert accepted(peer.set_parameters(desired_timeout=timeout))
        peer.desired(model.joint_names, qdd_d)
        assert wait_for_torques(peer, model.joint_names, q, qd, feedforward=expect,
                                timeout=60.0), node.log()
        peer.spin(1.0)  # ten times the default timeout, and more than the 0.3 s one
        answer = exchange(peer, model.joint_names, q, qd)
        assert answer is not None, node.log()
        np.testing.assert_allclose(answer[0].effort, after, rtol=0, atol=TOL,
                                   err_msg='desired_timeout %g' % timeout)


def test_accepted_gravity_rebuilds_the_model(arm, model, urdf):
    node, peer = arm
    gravity = [2.0, -1.0, -4.0]
    tilted = rbd.Model.from_urdf(urdf, gravity=gravity)
    q, qd, _ = state(8, model)
    expect_g = rbd.gravity_torques(tilted, q)
    assert np.abs(expect_g - rbd.gravity_torques(model, q)).max() > 0.5
    assert accepted(peer.set_parameters(gravity=gravity))
    assert wait_for_torques(peer, model.joint_names, q, qd, gravity=expect_g,
                            feedforward=library_feedforward(tilted, q, qd)), node.log()
    assert 'gravity [0.0, 0.0, -9.81] -> [2.0, -1.0, -4.0]' in node.log()


def test_accepted_root_link_gives_the_sub_tree(arm, model, urdf):
    node, peer = arm
    sub = rbd.Model.from_urdf(urdf, root_link='link3')
    assert sub.joint_names == ('joint4', 'joint5', 'joint6', 'joint7', 'left_finger_joint')
    q, qd, _ = state(9, model)
    rows = [model.joint_names.index(name) for name in sub.joint_names]
    assert accepted(peer.set_parameters(root_link='link3'))
    # the full arm's joint states: those above link3 are not the sub-tree's, and ignored
    answer = wait_for_torques(peer, model.joint_names, q, qd,
                              feedforward=library_feedforward(sub, q[rows], qd[rows]),
                              gravity=rbd.gravity_torques(sub, q[rows]), joints=sub.joint_names)
    assert answer is not None, node.log()
    np.testing.assert_allclose(answer[2].data, library_feedforward(sub, q[rows], qd[rows]),
                               rtol=0, atol=TOL)


def test_the_description_parameter_wins_over_the_topic(arm, model, urdf):
    node, peer = arm
    heavier = urdf.replace('<mass value="0.6"/>', '<mass value="2.6"/>')
    assert heavier != urdf
    other = rbd.Model.from_urdf(heavier)
    q = np.linspace(0.4, -0.4, model.nq)
    zero = np.zeros(model.nv)
    assert np.abs(rbd.gravity_torques(other, q) - rbd.gravity_torques(model, q)).max() > 0.5
    peer.pub_description.publish(String(data=heavier))
    assert peer.wait_for(lambda: 'robot_description topic ignored' in node.log(), 60.0), \
        node.log()
    peer.spin(0.5)
    answer = exchange(peer, model.joint_names, q, zero)
    assert answer is not None, node.log()
    np.testing.assert_allclose(answer[1].effort, rbd.gravity_torques(model, q), rtol=0,
                               atol=TOL)
    # without the parameter the topic's description is the one
    assert accepted(peer.set_parameters(robot_description=''))
    assert wait_for_torques(peer, model.joint_names, q, zero,
                            gravity=rbd.gravity_torques(other, q)), node.log()


# ---------------------------------------------------------------------------------------------
# Descriptions of their own.

def test_a_floating_base_is_refused_with_the_root_link_hint(model):
    """
    Refuse a floating base with the root_link hint.

    The demo arm on a floating joint: refused, with the hint; ``root_link`` below the
    floating joint gives the arm.
    """
    text = floating_urdf(demo_urdf_path())
    node = NodeProcess({'robot_description': text}, namespace='/floating')
    peer = Peer('/floating')
    try:
        assert peer.wait_matched(), node.log()
        assert peer.wait_for(lambda: 'root_link' in (peer.diagnostic('model error') or ''),
                             120.0), node.log()
        error = peer.diagnostic('model error')
        assert 'root_joint' in error and 'floating' in error, error
        assert 'set root_link to a link below it' in node.log()
        q = np.linspace(-0.2, 0.2, model.nq)
        assert no_answer(peer, model.joint_names, q, np.zeros(model.nv)), node.log()

        assert accepted(peer.set_parameters(root_link=model.root_link))
        expect = rbd.gravity_torques(model, q)
        assert wait_for_torques(peer, model.joint_names, q, np.zeros(model.nv),
                                gravity=expect, joints=model.joint_names), node.log()
    finally:
        peer.close()
        assert node.stop() == 0, node.log()


def wheel_and_arm():
    """Describe a continuous joint (a wheel, off-centre mass) and a revolute one, about y."""
    return robot(
        'wheel_and_arm',
        link('base'),
        joint('wheel', 'continuous', 'base', 'disc', axis=(0, 1, 0)),
        link('disc', inertial(1.5, (0.1, 0.0, 0.05), ixx=0.02, iyy=0.03, izz=0.02)),
        joint('arm', 'revolute', 'disc', 'rod', xyz=(0.3, 0.0, 0.0), axis=(0, 1, 0)),
        link('rod', inertial(0.8, (0.2, 0.0, 0.0), ixx=0.001, iyy=0.01, izz=0.01)))


def test_position_errors_of_continuous_joints_wrap():
    """
    Position errors of continuous joints wrap.

    kp terms over the node: the continuous joint's error of almost 2 pi is the short way
    round (about -0.28 rad); the revolute joint's is taken as it is.
    """
    text = wheel_and_arm()
    model = rbd.Model.from_urdf(text)
    assert model.joint_types == ('continuous', 'revolute')
    kp = [50.0, 50.0]
    node = NodeProcess({'robot_description': text, 'kp': kp, 'desired_timeout': 0.0},
                       namespace='/continuous')
    peer = Peer('/continuous')
    try:
        assert peer.wait_matched(desired=True), node.log()
        q = np.array([-3.0, -3.0])
        zero = np.zeros(2)
        assert wait_for_torques(peer, model.joint_names, q, zero,
                                gravity=rbd.gravity_torques(model, q)), node.log()
        desired = (np.array([3.0, 3.0]), zero, zero)
        peer.desired(model.joint_names, zero, desired[0])
        expect = library_feedforward(model, q, zero, desired, kp, continuous=[0])
        answer = wait_for_torques(peer, model.joint_names, q, zero, feedforward=expect)
        assert answer is not None, node.log()
        unwrapped = library_feedforward(model, q, zero, desired, kp)
        assert abs(expect[0] - unwrapped[0]) > 1.0
    finally:
        peer.close()
        assert node.stop() == 0, node.log()


def test_a_rebuild_that_the_configuration_does_not_fit_is_refused(arm, model, urdf):
    """
    Rebuild that the configuration does not fit is refused.

    ``root_link`` below joint3 with gains sized for the whole arm: refused at once with the
    reason, so the parameters keep describing the model in use.
    """
    node, peer = arm
    assert accepted(peer.set_parameters(kp=[10.0] * model.nv))
    (result,) = peer.set_parameters(root_link='link3')
    assert not result.successful and 'kp has 8 entries, joints has 5' in result.reason, result
    (result,) = peer.set_parameters(robot_description='<robot name="x">')
    assert not result.successful and 'UrdfError' in result.reason, result
    q = np.linspace(-0.3, 0.3, model.nq)
    got = exchange(peer, model.joint_names, q, np.zeros(model.nv))
    np.testing.assert_allclose(got[1].effort, rbd.gravity_torques(model, q), rtol=0, atol=1e-9)
    assert accepted(peer.set_parameters(kp=[]))
