"""
Task-space control in the closed loop: the demo arm's hand pushed, and led round a circle.

The node (``command_output: task``) drives the simulated demo arm in lockstep at 1 kHz over
real topics, with the exact model (the simulated arm is its description, without drive). Its
controlled link is the hand's tool centre point (:data:`support.task_space.LINK`); the hand is
held where it starts until the scene starts (:data:`support.task_space.SCENE_START`). The
test forwards the joint states to the node and its commands to the driver, and before the
driver runs it waits for the node to answer with the task-space law: from the first state on,
every state is answered with it.

- impedance: held where it starts (no desired pose: the node holds the pose of its start), with
  a null-space stiffness toward the start's posture, the hand is pushed by a constant force
  ``F`` at its origin; once settled it has moved by ``K⁻¹ F`` (1 %) and turned by nothing (1
  mrad): the posture term, projected, takes none of the push;
- operational space: the test streams the desired pose and twist of a circle of 10 cm at 0.2
  Hz in a tilted plane (forwarding each joint state to the node after them, so the node always
  has the desired pose of the state it answers); the hand tracks it within 2 mm RMS, and the
  null-space stiffness holds the arm's posture (the start) in the null space of the hand.

The gains, and why they are what they are: :mod:`support.task_space`. The same scene runs with
the library's law in one process in ``scripts/task_demo.py --in-process``;
``docs/task_space.md`` has the figures.
"""

import numpy as np
import pytest

pytest.importorskip('mujoco')
rclpy = pytest.importorskip('rclpy')
TwistStamped = pytest.importorskip('geometry_msgs.msg').TwistStamped

import rbd_dynamics as rbd  # noqa: E402
from rbd_dynamics import spatial  # noqa: E402
from rbd_dynamics.control import task  # noqa: E402
from support.sim import JOINTS, Loop, Q0  # noqa: E402
from support.task_space import Circle, circle_stream, FREQUENCY, hand_positions, \
    IMPEDANCE, IMPEDANCE_STIFFNESS, LINK, nullspace_error, OPERATIONAL_SPACE, PUSH, \
    PUSH_START, quaternion_of, RAMP, SCENE_START, SETTLE, stamp, tracking_figures, \
    twist_of  # noqa: E402

PUSH_END = PUSH_START + 2.3  # s; settled over its last quarter second
SETTLED = PUSH_END - 0.25
RISEN = SCENE_START + RAMP  # the circle's speed has risen
PERIODS = 1  # of the circle, measured from RISEN
CIRCLE_END = RISEN + PERIODS / FREQUENCY
NO_SENSOR = {'wrench_frame': ''}
ERROR = {'error': (TwistStamped, 'rbd_dynamics/task_error', 20000)}


def errors_by_stamp(run):
    return {round(stamp(m), 6): twist_of(m) for m in run.recorded['error']}


def check_task_error(run, t, q, model, desired):
    """
    Check ``~/task_error`` against the pose error of each joint state.

    ``desired(t)`` gives the desired position and quaternion; the node's error of a state is
    its pose error at the state's positions (the node had the desired pose of that state).
    Every state has one: its command was the task-space law.
    """
    published = errors_by_stamp(run)
    missing = []
    for when, positions in zip(t, q):
        error = published.get(round(when, 6))
        if error is None:
            missing.append(when)
            continue
        position, quaternion = desired(when)
        expected = task.pose_error(rbd.link_pose(model, positions, LINK), position, quaternion)
        assert np.abs(error - expected).max() < 1e-6, (when, error, expected)
    # (the answers to the last states may still be on their way)
    missing = [when for when in missing if when < t[-1] - 0.01]
    assert not missing, 'no task-space law at %d states (%s ...)' % (len(missing), missing[:5])
    assert run.dropped == 0  # one command per state


@pytest.fixture(scope='module')
def arm(model):
    assert model.joint_names == tuple(JOINTS)
    return model


def test_impedance_static_push_moves_the_hand_by_its_compliance(loop, arm):
    pushed = dict(NO_SENSOR, push_link=LINK, push_force=PUSH.tolist(), push_start=PUSH_START,
                  push_duration=100.0)
    run = loop('/task_push', IMPEDANCE, pushed, record=ERROR, stream={}, settle=SETTLE)
    t, q = run.run_until(PUSH_END)
    assert len(t) and t[-1] >= PUSH_END, run.logs()
    start = rbd.link_pose(arm, q[0], LINK)
    hand = hand_positions(arm, q) - start[:3, 3]
    before = np.abs(hand[t < PUSH_START]).max()
    settled = hand[t >= SETTLED]
    displacement = settled.mean(axis=0)
    expected = PUSH / IMPEDANCE_STIFFNESS[:3]
    turned = max(np.linalg.norm(spatial.rotation_vector(T[:3, :3] @ start[:3, :3].T))
                 for T in rbd.link_pose(arm, q[t >= SETTLED], LINK))
    print('held before the push within %.2e mm; settled displacement %s mm, K^-1 F %s mm, '
          'ratio per axis %s; still moving by %.3f mm; turned by %.2e rad'
          % (1e3 * before, np.round(1e3 * displacement, 3), np.round(1e3 * expected, 3),
             np.round(displacement / expected, 4), 1e3 * np.abs(settled - displacement).max(),
             turned))
    assert before < 1e-4
    assert np.abs(settled - displacement).max() < 0.01 * np.linalg.norm(expected)
    assert (np.abs(displacement - expected) < 0.01 * np.abs(expected)).all()
    # a force at the link's origin has no moment about it: the hand keeps its orientation
    assert turned < 1e-3
    # with no desired pose the node holds the pose of its start, and says so on ~/task_error
    check_task_error(run, t, q, arm, lambda _: (start[:3, 3], quaternion_of(start[:3, :3])))


@pytest.fixture(scope='module')
def circle_run(arm):
    """Run the circle once: the circle, the loop's states ``(t, q)`` and its errors."""
    circle = Circle(arm)
    run = Loop('/task_circle', OPERATIONAL_SPACE, NO_SENSOR, stream=circle_stream(circle),
               settle=SETTLE, record=ERROR)
    try:
        t, q = run.run_until(CIRCLE_END, timeout=300.0)
    finally:
        logs = run.logs()
        codes = run.close()
    assert codes == [0] * len(codes), logs
    assert len(t) and t[-1] >= CIRCLE_END, logs
    return circle, t, q, run


def test_operational_space_tracks_the_circle_within_2_mm(circle_run, arm):
    circle, t, q, run = circle_run
    position, _ = circle.at(t)
    error = position - hand_positions(arm, q)
    rms, largest = tracking_figures(t, error, RISEN, CIRCLE_END)
    span = np.ptp(hand_positions(arm, q), axis=0)
    print('circle of %g mm at %g Hz: tracking error %.3f mm RMS, %.3f mm at most over one '
          'period after the rise (%.3f mm at most in the rise); hand path spans %s mm'
          % (1e3 * circle.radius, circle.rate / (2 * np.pi), 1e3 * rms, 1e3 * largest,
             1e3 * np.linalg.norm(error[t < RISEN], axis=1).max(), np.round(1e3 * span, 1)))
    assert rms < 2e-3
    assert largest < 4e-3
    # the hand went round: the path spans the circle's diameter in its plane
    assert np.linalg.norm(span) > 1.9 * circle.radius
    check_task_error(run, t, q, arm,
                     lambda when: (circle.at(when)[0], circle.quaternion))


def test_operational_space_posture_held_in_the_null_space(circle_run, arm):
    _, t, q, _ = circle_run
    drift = nullspace_error(arm, q, Q0)
    print('posture error in the null space of the hand: %.4f rad at most, %.4f rad at the end'
          % (drift.max(), drift[-1]))
    assert drift.max() < 0.1
