"""
The task-space laws without ROS (:mod:`rbd_dynamics.control.task`).

At the desired pose and at rest both laws give exactly the gravity compensation; a known
small displacement of the desired pose gives ``Jᵀ K e`` with ``e`` the displacement
(impedance); with the exact model, operational space makes the link's acceleration exactly
``ẍ_d + K e + D ė`` (forward dynamics by ``M⁻¹``, independent of the law's own algebra); near a
singularity the torques stay finite; the rotation error takes the short way round.
"""

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics import spatial
from rbd_dynamics.control import task
from rbd_dynamics.control.config import Config
from rbd_dynamics.control.law import Controller
from rbd_dynamics.control.sensors import Sensor
from rbd_dynamics.control.setup import Setup
from rbd_dynamics.drive import drive_torques
from rbd_dynamics.resources import demo_urdf_path
from rbd_dynamics.spatial import axis_angle_to_matrix
from support.robots import robots_directory
from support.urdf_builders import inertial, joint, link, robot

LINK = 'tool_center_point'


@pytest.fixture(scope='module')
def arm():
    return rbd.Model.from_urdf_file(demo_urdf_path())


def _quaternion(R):
    """``[x, y, z, w]`` of a rotation matrix (for building desired poses here)."""
    w = np.sqrt(max(0.0, 1.0 + np.trace(R))) / 2.0
    if w > 1e-3:
        return np.array([(R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w),
                         (R[1, 0] - R[0, 1]) / (4 * w), w])
    # half a turn: an axis from R + I
    axis = np.linalg.eigh(R + np.eye(3))[1][:, -1]
    return np.concatenate((axis, [0.0]))


def _state(model, seed=1):
    rng = np.random.default_rng(seed)
    q = np.array([0.3, 0.6, -0.2, -1.2, 0.1, 0.8, 0.0, 0.02])[:model.nv] + \
        rng.uniform(-0.2, 0.2, model.nv) * (np.arange(model.nv) < 7)
    return q, rng.normal(scale=0.5, size=model.nv) * (np.arange(model.nv) < 7)


@pytest.mark.parametrize('mode', task.MODES)
def test_at_the_desired_pose_and_at_rest_the_torque_is_gravity(arm, mode):
    q, _ = _state(arm)
    T = rbd.link_pose(arm, q, LINK)
    result = task.task_torques(arm, q, np.zeros(arm.nv), LINK, T[:3, 3], _quaternion(T[:3, :3]),
                               mode=mode)
    np.testing.assert_allclose(result.error, 0.0, atol=1e-12)
    np.testing.assert_allclose(result.torque, rbd.gravity_torques(arm, q), rtol=0, atol=1e-9)


def test_a_small_displacement_gives_jt_k_e(arm):
    q, _ = _state(arm, 2)
    T = rbd.link_pose(arm, q, LINK)
    dp = np.array([0.004, -0.003, 0.002])
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    angle = 0.02
    R_d = axis_angle_to_matrix(axis, angle) @ T[:3, :3]
    K = np.array([800.0, 700.0, 600.0, 40.0, 35.0, 30.0])
    result = task.task_torques(arm, q, np.zeros(arm.nv), LINK, T[:3, 3] + dp, _quaternion(R_d),
                               stiffness=K)
    # the rotation vector of R_d R^T is the turn itself, whichever way axis_angle_to_matrix
    # writes it: R_d R^T = rot(axis, angle)
    expected_e = np.concatenate((dp, angle * axis))
    np.testing.assert_allclose(result.error, expected_e, atol=1e-12)
    J = rbd.jacobian(arm, q, LINK)
    np.testing.assert_allclose(result.torque - rbd.gravity_torques(arm, q), J.T @ (K * expected_e),
                               rtol=1e-12, atol=1e-9)


def _rest_under(arm, F, law, q, steps=30):
    """Return where the arm comes to rest under ``law(q)`` and a wrench ``F`` at the link."""
    def residual(q):  # the joint torques beyond those that hold the arm still
        return law(q) + rbd.jacobian(arm, q, LINK).T @ F - rbd.gravity_torques(arm, q)
    for _ in range(steps):  # Newton's method on a central-difference Jacobian
        r = residual(q)
        if np.abs(r).max() < 1e-11:
            return q
        h = 1e-6
        G = np.column_stack([(residual(q + h * dq) - residual(q - h * dq)) / (2 * h)
                             for dq in np.eye(arm.nv)])
        q = q - np.linalg.solve(G, r)
    raise AssertionError('no rest found: residual %s' % residual(q))


@pytest.mark.parametrize('armature', [None, 0.3])
def test_impedance_at_rest_yields_to_a_wrench_by_its_compliance_whatever_the_posture(
        arm, armature):
    # at rest a force F at the link's origin meets J^T K e alone, whatever k_n: the posture
    # term, projected, exerts no wrench there; the link moves by K^-1 F and turns not at all
    q0, _ = _state(arm, 5)
    T = rbd.link_pose(arm, q0, LINK)
    K = np.array([600.0, 900.0, 1200.0, 30.0, 40.0, 50.0])
    F = np.array([4.0, -3.0, -12.0, 0.0, 0.0, 0.0])
    posture = q0 + np.array([0.3, -0.2, 0.25, 0.2, -0.3, 0.2, 0.1, 0.005])

    def law(q):
        return task.task_torques(arm, q, np.zeros(arm.nv), LINK, T[:3, 3],
                                 _quaternion(T[:3, :3]), stiffness=K, nullspace_stiffness=5.0,
                                 posture=posture,
                                 armature=None if armature is None else np.full(arm.nv,
                                                                                armature)).torque

    rest = _rest_under(arm, F, law, q0)
    moved = rbd.link_pose(arm, rest, LINK)
    np.testing.assert_allclose(moved[:3, 3] - T[:3, 3], F[:3] / K[:3], rtol=1e-7, atol=1e-10)
    turned = spatial.rotation_vector(moved[:3, :3] @ T[:3, :3].T)
    np.testing.assert_allclose(turned, 0.0, atol=1e-10)
    # the posture did act: the arm's rest is not where the link alone would put it
    assert np.abs(rest - q0).max() > 0.05
    # a moment turns the link by K^-1 of it the same way
    M_ = np.array([0.0, 0.0, 0.0, 0.3, -0.2, 0.4])
    rest = _rest_under(arm, M_, law, q0)
    moved = rbd.link_pose(arm, rest, LINK)
    np.testing.assert_allclose(moved[:3, 3], T[:3, 3], rtol=0, atol=1e-10)
    turned = spatial.rotation_vector(moved[:3, :3] @ T[:3, :3].T)
    np.testing.assert_allclose(turned, M_[3:] / K[3:], rtol=1e-7, atol=1e-10)


def test_operational_space_gives_the_commanded_acceleration(arm):
    q, qd = _state(arm, 3)
    rng = np.random.default_rng(4)
    T = rbd.link_pose(arm, q, LINK)
    R_d = axis_angle_to_matrix(np.array([1.0, 0.0, 0.0]), 0.05) @ T[:3, :3]
    K = np.array([500.0] * 3 + [50.0] * 3)
    D = np.array([40.0] * 3 + [10.0] * 3)
    twist_d = rng.normal(scale=0.1, size=6)
    acc_d = rng.normal(scale=0.5, size=6)
    result = task.task_torques(arm, q, qd, LINK, T[:3, 3] + [0.01, 0.0, -0.01], _quaternion(R_d),
                               mode='operational_space', stiffness=K, damping=D, twist=twist_d,
                               acceleration=acc_d, nullspace_stiffness=20.0,
                               posture=q + 0.1)
    M = rbd.mass_matrix(arm, q)
    J = rbd.jacobian(arm, q, LINK)
    assert np.linalg.eigvalsh(J @ np.linalg.solve(M, J.T)).min() > task.DAMPING_THRESHOLD
    qdd = np.linalg.solve(M, result.torque - rbd.rnea(arm, q, qd, np.zeros(arm.nv)))
    achieved = rbd.link_acceleration(arm, q, qd, qdd, LINK)
    commanded = acc_d + K * result.error + D * (twist_d - J @ qd)
    np.testing.assert_allclose(achieved, commanded, rtol=1e-9, atol=1e-9)


def test_near_a_singularity_the_torques_stay_finite_and_bounded():
    root = robots_directory()
    if root is None:
        pytest.skip('example-robot-data is not installed')
    ur10 = rbd.Model.from_urdf_file(root + '/ur_description/urdf/ur10_robot.urdf')
    link = ur10.link_names[-1]
    # the elbow stretched and the wrist aligned: two singularities at once
    for q in (np.array([0.0, -1.57, 0.0, -1.57, 0.0, 0.0]),
              np.array([0.0, -1.57, 1e-7, -1.57, 1e-7, 0.0])):
        T = rbd.link_pose(ur10, q, link)
        for mode in task.MODES:
            result = task.task_torques(ur10, q, np.zeros(6), link, T[:3, 3] + [0.0, 0.0, 0.01],
                                       _quaternion(T[:3, :3]), mode=mode)
            assert np.all(np.isfinite(result.torque))
            extra = result.torque - rbd.gravity_torques(ur10, q)
            assert np.abs(extra).max() < 1e3, (mode, extra)


def test_a_link_with_few_joints_gets_the_components_it_can_reach(arm):
    q, _ = _state(arm, 5)
    J = rbd.jacobian(arm, q, 'link1')
    assert task.reachable(J).sum() < 6
    T = rbd.link_pose(arm, q, 'link1')
    for mode in task.MODES:
        result = task.task_torques(arm, q, np.zeros(arm.nv), 'link1', T[:3, 3] + 0.01,
                                   _quaternion(T[:3, :3]), mode=mode)
        assert np.all(np.isfinite(result.torque))
        # only joint1 moves link1: every other torque is gravity's
        np.testing.assert_allclose(result.torque[1:], rbd.gravity_torques(arm, q)[1:], atol=1e-9)


def test_the_rotation_error_takes_the_short_way():
    axis = np.array([0.0, 0.0, 1.0])
    for angle in (np.pi - 0.1, np.pi + 0.1, 0.5, -2.0):
        R = axis_angle_to_matrix(axis, angle)
        wrapped = (angle + np.pi) % (2 * np.pi) - np.pi
        np.testing.assert_allclose(spatial.rotation_vector(R), wrapped * axis, atol=1e-12)


@pytest.mark.parametrize('quaternion', [[0, 0, 0, 0], [0, 0, 0, 2.0], [np.nan, 0, 0, 1],
                                        [np.inf, 0, 0, 1], [1e200, 0, 0, 1], [0, 0, 1],
                                        [0.1, 0.2, 0.3, 0.4]])
def test_a_bad_quaternion_is_refused(arm, quaternion):
    with pytest.raises(ValueError, match='unit quaternion'):
        task.task_torques(arm, np.zeros(arm.nv), np.zeros(arm.nv), LINK, [0, 0, 0.5], quaternion)


def test_an_unknown_link_and_mode_are_refused(arm):
    with pytest.raises(rbd.UnknownLinkError):
        task.task_torques(arm, np.zeros(arm.nv), np.zeros(arm.nv), 'no_link', [0, 0, 0.5],
                          [0, 0, 0, 1])
    with pytest.raises(ValueError, match='mode'):
        task.task_torques(arm, np.zeros(arm.nv), np.zeros(arm.nv), LINK, [0, 0, 0.5],
                          [0, 0, 0, 1], mode='admittance')


# ---------------------------------------------------------------------------------------------
# The node's law with command_output task (Controller): the pose it holds, the inputs it
# takes, the drive and the sensors as in the joint-space law.
MS = 1_000_000  # ns


def _setup(model, **values):
    values.setdefault('command_output', 'task')
    values.setdefault('task_link', LINK)
    values.setdefault('desired_timeout', 0.1)
    return Setup(model, Config(**values))


def _held(model, q):
    T = rbd.link_pose(model, q, LINK)
    return T[:3, 3], spatial.matrix_to_quaternion(T[:3, :3])


def test_matrix_quaternion_inverts_quaternion_matrix():
    rng = np.random.default_rng(4)
    for _ in range(20):
        quaternion = rng.normal(size=4)
        quaternion /= np.linalg.norm(quaternion) * np.sign(quaternion[3])
        back = spatial.matrix_to_quaternion(task.quaternion_matrix(quaternion))
        np.testing.assert_allclose(back, quaternion, atol=1e-12)


@pytest.mark.parametrize('mode', task.MODES)
def test_the_law_holds_the_pose_it_started_at(arm, mode):
    setup = _setup(arm, task_mode=mode, task_nullspace_stiffness=4.0)
    controller = Controller()
    q0, qd = _state(arm, 5)
    zero = np.zeros(arm.nv)
    out = controller.compute(setup, q0, zero, 0)
    # bumpless: at rest, where it starts, the law is the gravity compensation
    np.testing.assert_allclose(out.command, rbd.gravity_torques(arm, q0), rtol=0, atol=1e-9)
    np.testing.assert_allclose(out.task_error, 0.0, atol=1e-12)
    # moved away, with no desired pose: back toward the pose and posture of the start
    q1 = q0 + 0.05 * (np.arange(arm.nv) < 7)
    out = controller.compute(setup, q1, qd, 10 * MS)
    position, quaternion = _held(arm, q0)
    expect = task.task_torques(arm, q1, qd, LINK, position, quaternion, mode=mode,
                               nullspace_stiffness=4.0, posture=q0)
    np.testing.assert_allclose(out.command, expect.torque, rtol=0, atol=1e-9)
    np.testing.assert_allclose(out.task_error, expect.error, rtol=0, atol=1e-12)
    assert np.abs(out.task_error[:3]).max() > 1e-3


def test_a_desired_pose_counts_from_the_start_and_while_fresh(arm):
    setup = _setup(arm)
    controller = Controller()
    q, qd = _state(arm, 6)
    position, quaternion = _held(arm, q)
    target = position + [0.01, -0.02, 0.005]
    controller.set_desired_pose(arm, target, quaternion, 0)  # before the law starts
    controller.compute(setup, q, qd, 1 * MS)
    held = task.task_torques(arm, q, qd, LINK, position, quaternion).torque
    np.testing.assert_allclose(controller.compute(setup, q, qd, 2 * MS).command, held,
                               rtol=0, atol=1e-9)
    twist = np.array([0.1, 0.0, -0.05, 0.0, 0.2, 0.0])
    controller.set_desired_pose(arm, target, quaternion, 3 * MS)
    controller.set_desired_twist(arm, twist, 3 * MS)
    expect = task.task_torques(arm, q, qd, LINK, target, quaternion, twist=twist).torque
    np.testing.assert_allclose(controller.compute(setup, q, qd, 50 * MS).command, expect,
                               rtol=0, atol=1e-9)
    # kernels being bound (a payload's new packed model): gravity meanwhile, the pose kept
    out = controller.compute(setup, q, qd, 51 * MS, task_ready=False)
    np.testing.assert_allclose(out.command, out.gravity, rtol=0, atol=0)
    assert out.task_error is None
    np.testing.assert_allclose(controller.compute(setup, q, qd, 52 * MS).command, expect,
                               rtol=0, atol=1e-9)
    # older than desired_timeout: the held pose again, and no twist
    np.testing.assert_allclose(controller.compute(setup, q, qd, 200 * MS).command, held,
                               rtol=0, atol=1e-9)
    # a joint-space output in between: the law starts again where the link is then
    controller.compute(_setup(arm, command_output='feedforward'), q, qd, 201 * MS)
    q2 = q + 0.1 * (np.arange(arm.nv) < 7)
    out = controller.compute(setup, q2, np.zeros(arm.nv), 202 * MS)
    np.testing.assert_allclose(out.command, rbd.gravity_torques(arm, q2), rtol=0, atol=1e-9)


def test_bad_desired_poses_and_twists_are_refused_and_the_last_good_kept(arm):
    controller = Controller()
    controller.set_desired_pose(arm, [0.1, 0.2, 0.3], [0.0, 0.0, 0.0, 1.0], 0)
    kept = controller.pose
    for position, quaternion in (([0.1, 0.2, np.nan], [0, 0, 0, 1]), ([0.1, 0.2], [0, 0, 0, 1]),
                                 ([0.1, 0.2, 0.3], [0, 0, 0, 0]), ([0.1, 0.2, 0.3], [0, 0, 1, 1]),
                                 ([0.1, 0.2, 0.3], [0, 0, np.inf, 1])):
        with pytest.raises(ValueError):
            controller.set_desired_pose(arm, position, quaternion, 1)
        assert controller.pose is kept
    with pytest.raises(ValueError, match='6 finite'):
        controller.set_desired_twist(arm, [0.0] * 5 + [np.nan], 1)
    assert controller.twist is None


def test_the_drive_and_a_compensated_sensor_enter_as_in_the_joint_law(arm):
    viscous, coulomb, armature = [0.4] * arm.nv, [0.7] * arm.nv, [0.05] * arm.nv
    sensor = Sensor('wrist', frame='ft_frame', timeout=0.0, compensate=True)
    setup = _setup(arm, task_mode='operational_space', drive_compensate=True,
                   **{'drive.viscous': viscous, 'drive.coulomb': coulomb,
                      'drive.armature': armature})
    controller = Controller([sensor])
    q, qd = _state(arm, 7)
    reading = np.array([2.0, -1.0, 4.0, 0.1, 0.2, -0.1])
    sensor.receive(0, 'ft_frame', reading)
    controller.compute(setup, q, qd, 0)
    position, quaternion = _held(arm, q)
    controller.set_desired_pose(arm, position + [0.0, 0.01, 0.0], quaternion, 1 * MS)
    out = controller.compute(setup, q, qd, 2 * MS)
    f_ext = {'ft_frame': reading + rbd.payload_wrench(arm, 'ft_frame', q, qd)}
    expect = task.task_torques(arm, q, qd, LINK, position + [0.0, 0.01, 0.0], quaternion,
                               mode='operational_space', f_ext=f_ext, armature=armature).torque
    expect = expect + drive_torques(qd, np.zeros(arm.nv), np.array(viscous), np.array(coulomb),
                                    np.array(armature), setup.coulomb_velocity)
    np.testing.assert_allclose(out.command, expect, rtol=0, atol=1e-9)
    # the feedforward output is still the joint-space law's
    np.testing.assert_allclose(out.feedforward, rbd.rnea(arm, q, qd, np.zeros(arm.nv), {
        'ft_frame': reading + rbd.payload_wrench(arm, 'ft_frame', q, qd, np.zeros(arm.nv))})
        + drive_torques(qd, np.zeros(arm.nv), np.array(viscous), np.array(coulomb),
                        np.array(armature), setup.coulomb_velocity), rtol=0, atol=1e-9)


@pytest.mark.parametrize('values, reason', [
    ({'task_link': ''}, 'needs task.link'),
    ({'task_link': 'nowhere'}, 'not a link'),
    ({'task_mode': 'admittance'}, 'task.mode'),
    ({'task_stiffness': [600.0] * 5}, 'task.stiffness'),
    ({'task_stiffness': [600.0] * 5 + [-1.0]}, 'task.stiffness'),
    ({'task_damping': [1.0, 2.0]}, 'task.damping'),
    ({'task_nullspace_stiffness': -1.0}, 'task.nullspace_stiffness'),
    ({'task_nullspace_stiffness': float('nan')}, 'task.nullspace_stiffness'),
])
def test_bad_task_settings_are_refused(arm, values, reason):
    with pytest.raises(ValueError, match=reason):
        _setup(arm, **values)


def test_a_link_with_few_joints_is_noted(arm):
    assert 'moved by 2 joint coordinates' in _setup(arm, task_link='link2').task.note
    assert _setup(arm).task.note == '' and _setup(arm).task.dof == 7


def test_a_mimic_joint_moves_the_link_by_its_masters_coordinate():
    # the tip hangs from a mimic joint whose master sits on another branch
    body = inertial(1.0, (0.0, 0.0, 0.1), 0.01, 0.01, 0.01)
    urdf = robot('mimic_branch', link('base'), link('driver', body), link('follower', body),
                 link('tip'),
                 joint('master', 'revolute', 'base', 'driver', axis=(0, 1, 0)),
                 joint('slave', 'revolute', 'base', 'follower', xyz=(0.2, 0.0, 0.0),
                       axis=(0, 1, 0), mimic=('master', -1.0, 0.0)),
                 joint('tip_fixed', 'fixed', 'follower', 'tip', xyz=(0.0, 0.0, 0.3)))
    model = rbd.Model.from_urdf(urdf)
    settings = task.TaskSettings(model, 'tip')
    assert settings.dof == 1, settings.note
    assert 'moved by 1 joint coordinate ' in settings.note
    J = rbd.jacobian(model, np.array([0.3]), 'tip')
    assert task.reachable(J).sum() == 3  # x, z and the rotation about y


def test_after_a_contact_the_law_starts_where_the_arm_is(arm):
    setup = _setup(arm, contact_observer=True, contact_reaction='gravity_compensation',
                   **{'contact.threshold': [1.0] * arm.nv})
    controller = Controller()
    q0, _ = _state(arm, 8)
    zero = np.zeros(arm.nv)
    push = np.zeros(arm.nv)
    push[1] = 20.0  # an effort the model does not explain: a contact on joint2
    out = controller.compute(setup, q0, zero, 0, rbd.gravity_torques(arm, q0), 0)
    np.testing.assert_allclose(out.command, rbd.gravity_torques(arm, q0), rtol=0, atol=1e-9)
    q1 = q0 + 0.1 * (np.arange(arm.nv) < 7)  # the contact moved the arm
    for k in range(1, 50):
        out = controller.compute(setup, q1, zero, k * MS, rbd.gravity_torques(arm, q1) + push,
                                 k * MS)
    assert controller.observer.contact and out.task_error is None
    np.testing.assert_allclose(out.command, out.gravity, rtol=0, atol=0)
    controller.observer.reset()
    out = controller.compute(setup, q1, zero, 50 * MS, rbd.gravity_torques(arm, q1), 50 * MS)
    # not pulled back toward q0: the law's start is where the arm is now
    np.testing.assert_allclose(out.task_error, 0.0, atol=1e-12)
    np.testing.assert_allclose(out.command, rbd.gravity_torques(arm, q1), rtol=0, atol=1e-9)


@pytest.mark.parametrize('reaction', ['none', 'gravity_compensation'])
def test_the_observer_after_the_torques_gives_the_same_outputs(arm, reaction):
    """
    The node's order: the torques first, the observer's step after them (``observe_later``).

    Every output equals the one of a single ``compute``, the task law's (which shares the
    observer's ``C q̇ + g``) and the residual through a contact included. With a reaction the
    command depends on the step: it is not left for later.
    """
    setup = _setup(arm, contact_observer=True, contact_reaction=reaction,
                   **{'contact.threshold': [5.0] * arm.nv})
    at_once, later = Controller(), Controller()
    push = 20.0 * (np.arange(arm.nv) == 1)  # from the 20th state: a contact on joint2
    q0, qd = _state(arm)
    qd = 0.1 * qd  # steady: the model explains the efforts but for the push
    for k in range(40):
        q = q0 + k * 1e-3 * qd
        effort = rbd.rnea(arm, q, qd, np.zeros(arm.nv)) + (push if k >= 20 else 0.0)
        a = at_once.compute(setup, q, qd, k * MS, effort, k * MS)
        b = later.compute(setup, q, qd, k * MS, effort, k * MS, observe_later=True)
        deferred = b.pending is not None
        assert deferred == (reaction == 'none') and (b.step is None) == deferred
        assert later.observe_pending(b) is b and b.pending is None
        for name in ('feedforward', 'gravity', 'command', 'external', 'task_error'):
            np.testing.assert_array_equal(getattr(b, name), getattr(a, name), err_msg=name)
        np.testing.assert_array_equal(b.step.residual, a.step.residual)
        assert (b.step.contact, b.step.joints) == (a.step.contact, a.step.joints)
    assert a.step.contact and a.step.joints == (1,)


def test_the_observer_after_the_torques_paused_refused_and_before_the_task_law(arm):
    """
    ``observe_later`` on the other paths of a joint state, against a single ``compute``.

    A state without efforts leaves nothing for later (the observer pauses); a state whose
    torques are not finite publishes nothing, but the observer has stepped (its restart is
    the same); before the task law's kernels are ready the step computes its own ``C q̇ + g``.
    """
    setup = _setup(arm, contact_observer=True, **{'contact.threshold': [5.0] * arm.nv})
    at_once, later = Controller(), Controller()
    q0, qd0 = _state(arm)
    zero = np.zeros(arm.nv)
    for k in range(14):
        q, qd = q0 + k * 1e-3 * qd0, 0.1 * qd0 + 0.01 * np.sin(k)
        effort = None if k in (3, 4) else rbd.rnea(arm, q, qd, zero) + 0.5 * (k >= 8)
        if k == 9:
            qd = np.where(np.arange(arm.nv) == 2, np.nan, qd)
        ready = k >= 6
        a = at_once.compute(setup, q, qd, k * MS, effort, k * MS, ready)
        b = later.compute(setup, q, qd, k * MS, effort, k * MS, ready, observe_later=True)
        assert (a is None) == (b is None) == (k == 9)
        if b is None:
            continue
        assert (b.pending is None) == (effort is None)
        later.observe_pending(b)
        assert later.observer.running == at_once.observer.running == (effort is not None)
        for name in ('feedforward', 'gravity', 'command', 'external', 'task_error'):
            x, y = getattr(b, name), getattr(a, name)
            assert (x is None) == (y is None), name
            if y is not None:
                np.testing.assert_array_equal(x, y, err_msg=name)
        assert (a.external is None) == (effort is None) and (a.task_error is None) != ready
        if k == 10:  # the refused state's step left a non-finite residual: both restart
            assert a.step.reason == b.step.reason == 'non-finite residual'
    # and run again after it, alike
    assert np.abs(b.external).min() > 0.0 and not b.step.restarted


def test_operational_space_with_a_joint_that_moves_no_mass():
    urdf = robot('massless_tip', link('base'), link('upper', inertial(1.0, (0.0, 0.0, 0.2),
                                                                      0.01, 0.01, 0.01)),
                 link('tip'),
                 joint('a', 'revolute', 'base', 'upper', axis=(0, 1, 0)),
                 joint('b', 'revolute', 'upper', 'tip', xyz=(0.0, 0.0, 0.4), axis=(1, 0, 0)))
    model = rbd.Model.from_urdf(urdf)
    setup = Setup(model, Config(command_output='task', task_link='tip',
                                task_mode='operational_space'))
    controller = Controller()
    q = np.array([0.3, -0.2])
    controller.compute(setup, q, np.zeros(2), 0)
    out = controller.compute(setup, q + 0.05, np.array([0.1, -0.2]), MS)
    assert out is not None and np.isfinite(out.command).all()
