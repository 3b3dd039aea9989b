"""
The simulated driver as its own process: what a real arm adds to the rigid bodies.

Effort limits clamp the commands (and joint_states reports the applied effort), the F/T sensor
carries its bias, a payload is grasped at the given simulated time, and the
JointTrajectoryController stand-in follows a trajectory, far better with the points' effort
filled from the rigid-body model than with its PID alone.
"""

import numpy as np
import pytest

pytest.importorskip('mujoco')
rclpy = pytest.importorskip('rclpy')
WrenchStamped = pytest.importorskip('geometry_msgs.msg').WrenchStamped
diagnostic_msgs = pytest.importorskip('diagnostic_msgs.msg')
DiagnosticArray = diagnostic_msgs.DiagnosticArray
DiagnosticStatus = diagnostic_msgs.DiagnosticStatus

import rbd_dynamics as rbd  # noqa: E402
from rbd_dynamics.sim import mujoco_model  # noqa: E402
from support.sim import (diagnostic_values, efforts, JOINTS, low_trajectory_gains,  # noqa: E402
                         positions, Q0, stamp, swing, trajectory_message, velocities, wrench)
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402


def test_effort_limits_clamp_the_commands(sims, model):
    limits = model.effort_limits[[model.joint_names.index(n) for n in JOINTS]]
    command = np.array([500.0, -500.0, 10.0, 200.0, -120.0, 39.0, -41.0, 100.0])
    clamping = sims('/clamp', {'effort_limits': True}, controller=lambda msg: command)
    free = sims('/free', {}, controller=lambda msg: command)
    for sim in (clamping, free):
        sim.run_until(0.02)
    applied = efforts(clamping.states[-1])
    np.testing.assert_array_equal(applied, np.clip(command, -limits, limits))
    assert np.sum(applied != command) == 6
    np.testing.assert_array_equal(efforts(free.states[-1]), command)
    assert 'effort clamped to the limits on joint1, joint2, joint4, joint5, joint7, ' \
        'left_finger_joint' in clamping.proc.log()
    # and, as a driver does, on /diagnostics (the test keeps commanding meanwhile)
    clamping.spin_until(lambda: any(status.level == DiagnosticStatus.WARN
                                    for status in clamping.diagnostics), 60.0)
    free.spin_until(lambda: any(int(diagnostic_values(status)['effort commands']) > 0
                                for status in free.diagnostics), 60.0)
    warn = [status for status in clamping.diagnostics if status.level != DiagnosticStatus.OK][0]
    ok = free.diagnostics[-1]
    assert 'commands clamped to the effort limits (joint1, joint2, joint4, joint5, joint7, ' \
        'left_finger_joint)' in warn.message, warn.message
    values = diagnostic_values(warn)
    assert int(values['clamped commands']) == int(values['effort commands']) > 0, values
    assert (ok.level, ok.message) == (DiagnosticStatus.OK, 'running'), ok
    assert all(status.level == DiagnosticStatus.OK for status in free.diagnostics)
    values = diagnostic_values(ok)
    assert values['clamped commands'] == '0' and int(values['effort commands']) > 0, values


def test_wrench_bias_is_in_every_reading(sims, urdf):
    import mujoco
    bias = np.array([5.0, -2.0, 1.0, 0.3, -0.1, 0.2])
    sim = sims('/bias', {'wrench_bias': bias.tolist()})
    sim.spin_until(lambda: sim.wrenches and sim.states)
    # the state repeated before the first command: MuJoCo's sensor at rest, nothing applied
    mj_model, _ = mujoco_model.load(urdf, sensor_frame='ft_frame')
    data = mujoco.MjData(mj_model)
    state = sim.states[0]
    for k in range(mj_model.njnt):
        name = mujoco.mj_id2name(mj_model, mujoco.mjtObj.mjOBJ_JOINT, k)
        data.qpos[mj_model.jnt_qposadr[k]] = state.position[list(state.name).index(name)]
    mujoco.mj_forward(mj_model, data)
    unbiased = -np.concatenate([data.sensor('ft_force').data, data.sensor('ft_torque').data])
    assert np.abs(unbiased).max() > 1.0  # the gripper weighs on the sensor
    np.testing.assert_allclose(wrench(sim.wrenches[0]) - unbiased, bias, rtol=0, atol=1e-9)


def holding(model, payload=None, kp=400.0, kd=40.0):
    """
    Hold the arm at Q0 with computed torque.

    Computed torque toward Q0 (``rnea`` at the PD acceleration): the test's own
    controller; ``payload = (time, link, mass, com, inertia)`` is put in ``model`` at that
    simulated time.
    """
    order = [model.joint_names.index(n) for n in JOINTS]

    def control(msg):
        if payload and stamp(msg) >= payload[0] and not model.payloads:
            model.set_payload(*payload[1:])
        q, qd, q0 = np.empty(model.nv), np.empty(model.nv), np.empty(model.nv)
        q[order], qd[order], q0[order] = positions(msg), velocities(msg), Q0
        return rbd.rnea(model, q, qd, kp * (q0 - q) - kd * qd)[order]

    return control


def test_payload_is_grasped_at_the_given_time(sims, urdf):
    """
    Payload is grasped at the given time.

    The test's controller learns of the payload at the attach time, so the arm stays
    still and the sensor reading changes by the payload's weight, from that time on.
    """
    payload = ('tool_center_point', 2.0, [0.0, 0.0, 0.1], [0.004, 0.0, 0.0, 0.004, 0.0, 0.002])
    sim = sims('/grasp', dict(zip(['payload.link', 'payload.mass', 'payload.com',
                                   'payload.inertia'], payload), **{'payload.attach_time': 0.3}),
               controller=holding(rbd.Model.from_urdf(urdf), (0.3,) + payload))
    sim.run_until(0.5)
    by_stamp = {round(stamp(m), 6): wrench(m) for m in sim.wrenches}
    times = np.array(sorted(by_stamp))
    forces = np.array([by_stamp[t][:3] for t in times])
    # the state at 0 has no command yet, the one at 0.3 the command before the grasp
    before, after = forces[(times > 0.0) & (times < 0.3)], forces[times > 0.3]
    assert len(before) > 250 and len(after) > 150
    assert np.abs(before - before[0]).max() < 0.01
    assert np.abs(after - after[0]).max() < 0.01
    assert np.linalg.norm(by_stamp[0.3][:3] - before[-1]) > 1.0
    weight = np.linalg.norm(after[0] - before[-1])
    print('payload weighed by the sensor: %.4f N' % weight)
    assert abs(weight - payload[1] * 9.81) < 0.01
    assert 'payload of 2 kg attached at t = 0.300 s' in sim.proc.log()


def test_trajectory_controller_follows_with_the_model_effort(sims, model):
    """
    Trajectory controller follows with the model effort.

    Low PID gains: with the points' effort from ``rnea`` the arm tracks the swing; on its
    PID alone it sags and lags.
    """
    gains = low_trajectory_gains(model)
    runs = {}
    for with_effort in (True, False):
        runs[with_effort] = sims('/jtc_%s' % with_effort, gains)
    for with_effort, sim in runs.items():
        # the simulation clock starts with the first trajectory
        sim.spin_until(lambda: sim.pub_trajectory.get_subscription_count() > 0)
        sim.pub_trajectory.publish(trajectory_message(model, with_effort))
    rms = {}
    for with_effort, sim in runs.items():
        sim.run_until(2.0)
        t = np.array([stamp(m) for m in sim.states])
        keep = (t > 0.0) & (t <= 2.0)
        q = np.array([positions(m) for m in sim.states])[keep]
        error = q - swing(t[keep]).position
        rms[with_effort] = np.sqrt(np.mean(error[:, :7] ** 2, axis=0))
        assert keep.sum() > 1500
        # the commands are the controller's: finite and far from zero under gravity
        assert np.abs(efforts(sim.states[-1])[:7]).max() > 1.0
    print('JTC tracking RMS [rad] with effort', np.array2string(rms[True], precision=6),
          'PID alone', np.array2string(rms[False], precision=6))
    assert rms[True].max() < 5e-4, rms[True]
    assert rms[False].max() > 100 * rms[True].max(), rms


def test_trajectory_with_unknown_joint_is_refused(sims):
    sim = sims('/jtc_bad', {'controller': 'joint_trajectory', 'jtc.p': [50.0]})
    sim.spin_until(lambda: sim.pub_trajectory.get_subscription_count() > 0)
    bad = JointTrajectory(joint_names=['elbow'],
                          points=[JointTrajectoryPoint(positions=[0.1])])
    sim.pub_trajectory.publish(bad)
    sim.spin_until(lambda: 'trajectory refused' in sim.proc.log(), 60.0)
    assert 'elbow' in sim.proc.log()
    # the clock has not started: the robot still waits for a usable trajectory
    sim.spin_until(lambda: len(sim.states) > 1)
    assert all(stamp(m) == 0.0 for m in sim.states)


def test_trajectory_sampling_by_degree():
    """
    Trajectory sampling by degree.

    Quintic between points with accelerations, cubic with velocities, linear with
    positions only; the state at receipt before the first point; the last point held.
    """
    from rbd_dynamics.sim.joint_trajectory_controller import Trajectory
    times = np.arange(0.0, 1.0001, 0.05)
    q, qd, qdd = swing(times)
    t = np.linspace(0.0, 1.0, 333)
    exact = swing(t).position
    errors = []
    for fields in ((qd, qdd), (qd, None), (None, None)):
        trajectory = Trajectory(0.0, times, q, *fields, now=0.0, q=Q0, qd=np.zeros(8))
        assert trajectory.degree == {2: 5, 1: 3, 0: 1}[sum(f is not None for f in fields)]
        errors.append(np.abs(np.array([trajectory.sample(s)[0] for s in t]) - exact).max())
    assert errors[0] < 1e-9 < errors[1] < 1e-5 < errors[2] < 1e-2, errors
    # a trajectory that starts later: from the measured state at receipt, then held at the end
    start, now = 2.0, 1.0
    here, moving = Q0 - 0.1, np.full(8, 0.05)
    trajectory = Trajectory(start, [0.5, 1.0], [Q0, Q0 + 0.2], [np.zeros(8)] * 2,
                            [np.zeros(8)] * 2, [np.ones(8), 3 * np.ones(8)],
                            now=now, q=here, qd=moving)
    at_receipt = trajectory.sample(now)
    np.testing.assert_allclose(at_receipt[0], here)
    np.testing.assert_allclose(at_receipt[1], moving)
    np.testing.assert_allclose(trajectory.sample(2.5)[0], Q0)
    np.testing.assert_allclose(trajectory.sample(2.75)[3], 2 * np.ones(8))
    for late in (3.0, 10.0):
        q_ref, qd_ref, _, effort = trajectory.sample(late)
        np.testing.assert_allclose(q_ref, Q0 + 0.2)
        np.testing.assert_allclose(qd_ref, 0.0)
        np.testing.assert_allclose(effort, 3.0)


@pytest.mark.parametrize('times, positions, velocities, match', [
    ([0.0, 0.0], [[0.0], [1.0]], None, 'increasing'),
    ([0.0, float('nan')], [[0.0], [1.0]], None, 'increasing'),
    ([0.0, 1.0], [[0.0], [float('inf')]], None, 'finite'),
    ([0.0, 1.0], [[0.0], [1.0]], [[0.0], []], 'velocities'),
    ([], [], None, 'no points'),
])
def test_bad_trajectory_is_refused(times, positions, velocities, match):
    from rbd_dynamics.sim.joint_trajectory_controller import Trajectory
    with pytest.raises(ValueError, match=match):
        Trajectory(0.0, times, positions, velocities, now=0.0, q=[0.0], qd=[0.0])


def test_pid_integral_is_clamped():
    from rbd_dynamics.sim.joint_trajectory_controller import Pid
    pid = Pid([10.0, 10.0], i=[100.0, 100.0], d=[1.0, 2.0], i_clamp=[0.5, 0.0])
    for _ in range(100):
        out = pid(np.array([0.1, 0.1]), np.array([1.0, 1.0]), 0.01)
    np.testing.assert_allclose(out, [1.0 + 0.5 + 1.0, 1.0 + 10.0 + 2.0])


def test_joint_drives_from_parameters_and_urdf(urdf):
    from rbd_dynamics.ros.sim_driver import joint_drives
    from rbd_dynamics.parsers.urdf import parse_urdf
    desc = parse_urdf(urdf)
    urdf_only = joint_drives(desc, JOINTS)
    assert urdf_only['joint3'] == (0.5, 0.0, 0.0)
    assert urdf_only['left_finger_joint'] == urdf_only['right_finger_joint'] == (2.0, 0.0, 0.0)
    given = joint_drives(desc, JOINTS, viscous=[1.0] * 8, armature=[0.1])
    assert given['joint3'] == (1.0, 0.0, 0.1)
    # the master's value is the whole finger drive; the mimic keeps only what was not given
    assert given['left_finger_joint'] == (1.0, 0.0, 0.1)
    assert given['right_finger_joint'] == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match='drive.coulomb has 3 entries'):
        joint_drives(desc, JOINTS, coulomb=[1.0, 2.0, 3.0])


def test_lockstep_sends_its_initial_state_once_then_again_after_a_silence(sims):
    """
    The initial state goes out once, and again only after a second without a command.

    A controller answers every state it receives, and each answer steps the simulation: a
    second copy answered would leave a command in flight for the whole run.
    """
    import time
    from rbd_dynamics.ros.sim_driver import INITIAL_REPEAT
    sim = sims('/initial', {})  # nobody answers yet
    sim.spin_until(lambda: len(sim.states) > 0)
    first = time.monotonic()
    sim.spin_until(lambda: time.monotonic() - first > 0.5 * INITIAL_REPEAT)
    assert [stamp(m) for m in sim.states] == [0.0]
    sim.spin_until(lambda: len(sim.states) > 1, 30.0)
    assert time.monotonic() - first > 0.8 * INITIAL_REPEAT
    assert [stamp(m) for m in sim.states] == [0.0, 0.0]
    sim.controller = lambda msg: np.zeros(8)
    sim.spin_until(lambda: len(sim.states) > 2, 30.0)  # the next copy, answered
    sim.run_until(0.05)
    times = [stamp(m) for m in sim.states[2:]]
    assert times[0] == 0.0 and np.allclose(np.diff(times), 0.001), times[:5]


def test_a_lost_answer_is_made_good_on_a_later_repeat(sims):
    """
    An answer the driver never took leaves it repeating its initial state; the test answers again.

    The first answer stands for one lost on the way (sent before the driver's subscription
    knew the test's publisher): the driver refuses it and does not step. The test side answers
    each state once, but a repeat of one it answered long ago (``ATTEMPT``) again.
    """
    from rbd_dynamics.ros.sim_driver import INITIAL_REPEAT
    from support.ros import ATTEMPT
    answers = []

    def controller(msg):
        answers.append(stamp(msg))
        return np.zeros(8 if len(answers) > 1 else 3)

    sim = sims('/lost', {}, controller=controller)
    sim.run_until(0.01, 60.0)
    # (the first answer itself may be lost on the way, the case it stands for)
    assert sim.proc.log().count('effort command refused') <= 1
    assert answers[:2] == [0.0, 0.0], answers[:5]
    # the first state, the repeats younger than ATTEMPT (not answered), the one answered again
    initial = [m for m in sim.states if stamp(m) == 0.0]
    assert len(initial) >= 1 + int(ATTEMPT / INITIAL_REPEAT), len(initial)
    assert np.allclose(np.diff(answers[1:]), 0.001), answers[:5]


def test_drive_holds_back_the_falling_arm(sims):
    """No command: the arm falls under gravity, slower with the drive's friction on."""
    runs = {drive: sims('/fall_%s' % drive, {'drive.enabled': drive, 'drive.viscous': [20.0],
                                             'drive.coulomb': [5.0], 'drive.armature': [0.5]},
                        controller=lambda msg: np.zeros(8))
            for drive in (True, False)}
    fallen = {}
    for drive, sim in runs.items():
        sim.run_until(0.2)
        fallen[drive] = np.abs(positions(sim.states[-1]) - Q0)[:7].max()
    assert fallen[False] > 0.05 and fallen[True] < 0.5 * fallen[False], fallen


def test_true_arm_differs_from_its_description(sims, urdf, model):
    """
    The simulated arm is its description with the links changed by ``true_arm.*``.

    Commanding the changed arm's own gravity torques holds it at the start pose; the
    description's let it sag. The joint states report the applied torque as efforts.
    """
    from rbd_dynamics.sim.true_arm import changed_description
    changes = {'true_arm.links': ['link2', 'link4', 'gripper_base'],
               'true_arm.mass_scale': [1.3, 0.7, 1.25],
               'true_arm.com_shift': [0.02, 0.0, 0.0, 0.0, 0.0, 0.02, 0.0, 0.01, 0.0]}
    true_model = rbd.Model.from_urdf(changed_description(
        urdf, *(changes['true_arm.' + k] for k in ('links', 'mass_scale', 'com_shift'))))
    assert model.joint_names == tuple(JOINTS)
    runs = {name: sims('/true_arm_%s' % name, changes,
                       controller=lambda msg, m=m: rbd.gravity_torques(m, positions(msg)))
            for name, m in (('true', true_model), ('description', model))}
    for sim in runs.values():
        sim.run_until(0.5)
    drift = {name: np.abs(np.array([positions(m) for m in sim.states]) - Q0)[:, :7].max()
             for name, sim in runs.items()}
    assert drift['true'] < 1e-4 and drift['description'] > 1e-2, drift
    last = runs['true'].states[-1]
    # the effort of a state is the command applied over the step that led to it
    previous = positions(runs['true'].states[-2])
    np.testing.assert_allclose(efforts(last), rbd.gravity_torques(true_model, previous),
                               atol=1e-9)
    assert 'the simulated arm differs from its description' in runs['true'].proc.log()
