"""The momentum observer of the torque law (rbd_dynamics.control.observer), without ROS."""

import math
import os

import numpy as np
import pytest

import rbd_dynamics as rbd
from rbd_dynamics.control.config import Config
from rbd_dynamics.control.desired import Desired
from rbd_dynamics.control.law import Controller
from rbd_dynamics.control.observer import chain_length, MAX_GAP, wrench_at
from rbd_dynamics.control.sensors import Sensor
from rbd_dynamics.control.setup import Setup
from rbd_dynamics.resources import demo_urdf_path
from support.robots import robots_directory
from support.urdf_builders import scaled

NS = 1_000_000_000
DT = 0.001
GAIN = 50.0
T0 = 0.3  # the external wrench starts [s]
T_END = 0.6
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope='module')
def two_link():
    return rbd.Model.from_urdf_file(os.path.join(HERE, 'descriptions', 'two_link.urdf'))


def motion(model, amplitude=0.1, frequency=0.5):
    """Return ``t -> (q, qd, qdd)``: every joint swings about a pose away from singularities."""
    center = 0.3 + 0.1 * np.arange(model.nv)
    w = 2.0 * math.pi * frequency
    phase = 0.4 * np.arange(model.nv)

    def at(t):
        s = np.sin(w * t + phase)
        c = np.cos(w * t + phase)
        return center + amplitude * s, amplitude * w * c, -amplitude * w * w * s
    return at


def synthesised_efforts(model, at, t, link, wrench, on, extra=None):
    """
    Return ``rnea - J^T w`` at ``t``: the joint torques a driver measures at that stamp.

    ``extra(qd, qdd)``: torques the drive adds (its friction and armature).
    """
    q, qd, qdd = at(t)
    tau = rbd.rnea(model, q, qd, qdd)
    if on:
        tau = tau - rbd.jacobian(model, q, link, frame='local').T @ wrench
    if extra is not None:
        tau = tau + extra(qd, qdd)
    return tau


def run(model, controller, setup, link, wrench, extra=None, t_end=T_END, start=0.0,
        amplitude=0.1):
    """Feed the controller the states and efforts; return times, residuals, positions."""
    at = motion(model, amplitude)
    times = np.arange(start, t_end + DT / 2, DT)
    residuals, positions = [], []
    for t in times:
        q, qd, _ = at(t)
        effort = synthesised_efforts(model, at, t, link, wrench, t >= T0 - 1e-12, extra)
        out = controller.compute(setup, q, qd, int(round(t * NS)), effort, int(round(t * NS)))
        residuals.append(out.external)
        positions.append(q)
    return times, np.array(residuals), np.array(positions)


def expected_residual(model, times, positions, link, wrench):
    """
    Return ``(1 - exp(-K (t - t0))) J^T w`` and the first-order lag of ``J^T w``.

    The first is the response to a constant ``J^T w``; the second follows the arm's motion.
    Both as the samples show them: ``J^T w`` linear between samples, so the push that the
    sample at ``T0`` is the first to carry starts half a step before it, and the lag of each
    step is that of the step's mean.
    """
    step, lag = [], []
    state = np.zeros(model.nv)
    previous = np.zeros(model.nv)
    a = math.exp(-GAIN * DT)
    for t, q in zip(times, positions):
        on = t > T0 - 1e-12
        tau = rbd.jacobian(model, q, link, frame='local').T @ wrench if on else np.zeros(model.nv)
        step.append(tau * (1.0 - math.exp(-GAIN * (t - T0 + DT / 2))) if on else tau)
        state = a * state + (1 - a) * 0.5 * (previous + tau)
        previous = tau
        lag.append(state.copy())
    return np.array(step), np.array(lag)


CASES = {
    'two_link': ('lower', np.array([3.0, -2.0, 4.0, 0.1, 0.2, -0.1])),
    'demo_arm': ('tool_center_point', np.array([12.0, -8.0, 14.0, 0.5, -0.4, 0.3])),
}


@pytest.mark.parametrize('name', sorted(CASES))
def test_residual_is_a_first_order_response_to_an_external_wrench(name, two_link, model):
    robot = two_link if name == 'two_link' else model
    link, wrench = CASES[name]
    setup = Setup(robot, Config(contact_observer=True, contact_gain=GAIN))
    # a slow swing: J^T w changes little within the observer's time constant
    times, r, q = run(robot, Controller(), setup, link, wrench, amplitude=0.05)
    expected, lag = expected_residual(robot, times, q, link, wrench)
    size = np.abs(lag).max()
    before = times < T0 - 1e-12  # (the sample at T0 is the first to carry the push)
    print(name, 'largest |r| before t0: %.3g %% of |J^T w|, error after: %.3g %% '
          '(%.3g %% from the lag of J^T w)'
          % (100 * np.abs(r[before]).max() / size, 100 * np.abs(r - expected).max() / size,
             100 * np.abs(r - lag).max() / size))
    # free motion leaves no residual, and the residual is the lag of the samples of J^T w
    # (the trapezoidal rule is exact to second order in dt)
    assert np.abs(r[before]).max() < 1e-5 * size
    assert np.abs(r - expected).max() < 0.02 * size
    assert np.abs(r - lag).max() < 1e-5 * size
    assert np.abs(r[-1]).max() > 0.95 * size  # it did respond
    w, rank = wrench_at(robot, q[-1], link, r[-1])
    if name == 'demo_arm':
        assert rank == 6
        np.testing.assert_allclose(w, wrench, atol=0.02 * np.abs(wrench).max())
    else:
        # two joints cannot see a full wrench: the smallest wrench that explains r
        assert rank == 2
        jt = rbd.jacobian(robot, q[-1], link, frame='local').T
        np.testing.assert_allclose(jt @ w, r[-1], atol=1e-9 * size)
        assert np.linalg.norm(w) <= np.linalg.norm(wrench)


def test_observer_matches_the_momentum_formula(model):
    """The discrete observer is the contract's ``r = K (M qd - integral(...) - p0)``."""
    link, wrench = CASES['demo_arm']
    setup = Setup(model, Config(contact_observer=True, contact_gain=GAIN))
    times, r, _ = run(model, Controller(), setup, link, wrench, t_end=0.45)
    # the textbook form with the mass and Coriolis matrices on the same samples: trapezoidal
    # efforts and C^T qd - g, explicit Euler for r
    at = motion(model)

    def known(t):
        q, qd, _ = at(t)
        return (rbd.coriolis_matrix(model, q, qd).T @ qd - rbd.gravity_torques(model, q),
                rbd.mass_matrix(model, q) @ qd)

    last, p0 = known(times[0])
    integral = np.zeros(model.nv)
    ref = [np.zeros(model.nv)]
    effort = synthesised_efforts(model, at, times[0], link, wrench, False)
    for k in range(1, len(times)):
        term, p = known(times[k])
        previous, effort = effort, synthesised_efforts(model, at, times[k], link, wrench,
                                                       times[k] >= T0 - 1e-12)
        integral += (0.5 * (effort + previous) + 0.5 * (term + last) + ref[-1]) * DT
        last = term
        ref.append(GAIN * (p - integral - p0))
    ref = np.array(ref)
    size = np.abs(ref).max()
    error = np.abs(r - ref).max() / size
    print('observer against the textbook formula: %.3g %% of the largest residual'
          % (100 * error))
    # explicit Euler on r and the exact step of the observer differ by O(K dt) in the
    # transient
    assert error < 0.02


def test_drive_and_sensor_are_part_of_the_model(model):
    """Friction and armature of the drive, and a measured wrench, leave no residual."""
    viscous = np.linspace(2.0, 0.1, model.nv)
    coulomb = np.linspace(1.0, 0.05, model.nv)
    armature = np.linspace(0.3, 0.01, model.nv)
    config = Config(contact_observer=True, contact_gain=GAIN,
                    **{'drive.viscous': viscous.tolist(), 'drive.coulomb': coulomb.tolist(),
                       'drive.armature': armature.tolist()})
    setup = Setup(model, config)

    def drive(qd, qdd):
        return rbd.drive_torques(qd, qdd, viscous, coulomb, armature)

    link, wrench = CASES['demo_arm']
    # the drive's torques are in the efforts and the observer knows them
    _, r, _ = run(model, Controller(), setup, link, np.zeros(6), extra=drive, t_end=0.2)
    with_drive = rbd.rnea(model, *motion(model)(0.1))
    assert np.abs(r).max() < 0.01 * np.abs(with_drive).max()
    # the same efforts to an observer that does not know the drive: the friction shows
    plain = Setup(model, Config(contact_observer=True, contact_gain=GAIN))
    _, r_plain, _ = run(model, Controller(), plain, link, np.zeros(6), extra=drive,
                        t_end=0.2)
    assert np.abs(r_plain[-1]).max() > 0.3
    # a sensor reading the wrench at the link all along: no residual
    sensor = Sensor('ft', timeout=0.0)
    sensor.receive(0, link, wrench)
    controller = Controller([sensor])
    _, r_sensor, _ = run(model, controller, Setup(model, Config(contact_observer=True)),
                         link, wrench, start=T0, t_end=T0 + 0.1)
    assert np.abs(r_sensor).max() < 0.01 * np.abs(wrench).max()


DRIVE = {'drive.viscous': np.linspace(2.0, 0.1, 8).tolist(),
         'drive.coulomb': np.linspace(1.0, 0.05, 8).tolist(),
         'drive.armature': np.linspace(0.3, 0.01, 8).tolist()}


@pytest.mark.parametrize('contact_drive, compensate, given, plant', [
    ('on', False, True, 'drive'),  # motor current; the command does not carry the friction
    ('off', True, True, 'none'),  # a joint torque sensor; the command carries the friction
    ('auto', False, True, 'drive'),  # drive.* given: on
    ('auto', True, False, 'none'),  # only the URDF's <dynamics damping>: off
    ('on', False, False, 'urdf'),  # on without drive.*: the URDF's damping is the drive
])
def test_the_observer_drive_is_its_own_setting(model, contact_drive, compensate, given, plant):
    """contact.drive says what the efforts contain; drive.compensate only what is commanded."""
    assert model.damping.any()  # the demo arm's URDF has <dynamics damping>
    lists = DRIVE if given else {}
    setup = Setup(model, Config(contact_observer=True, contact_gain=GAIN,
                                drive_compensate=compensate, contact_drive=contact_drive,
                                **lists))
    assert setup.observer_drive == (plant != 'none') and setup.drive_on == compensate
    coefficients = {'drive': [np.array(DRIVE[k]) for k in sorted(DRIVE)],
                    'urdf': [np.zeros(8), model.friction, model.damping]}.get(plant)

    def drive(qd, qdd):  # the plant's: armature, coulomb, viscous
        armature, coulomb, viscous = coefficients
        return rbd.drive_torques(qd, qdd, viscous, coulomb, armature)

    link = CASES['demo_arm'][0]
    extra = None if coefficients is None else drive
    # free motion: the efforts of the plant explain everything
    _, r, _ = run(model, Controller(), setup, link, np.zeros(6), extra=extra, t_end=0.2)
    size = np.abs(rbd.rnea(model, *motion(model)(0.1))).max()
    assert np.abs(r).max() < 1e-3 * size
    # the feedforward carries the drive exactly when compensating, whatever contact.drive says
    q, qd, _ = motion(model)(0.1)
    out = Controller().compute(setup, q, qd, 0)
    rigid = rbd.rnea(model, q, qd, np.zeros(8))
    fed = rigid + setup.drive_torques(qd, np.zeros(8)) if compensate else rigid
    np.testing.assert_allclose(out.feedforward, fed, rtol=1e-12, atol=1e-12)
    # the other choice on the same efforts leaves (or adds) the friction in the residual
    other = Setup(model, Config(contact_observer=True, contact_gain=GAIN,
                                drive_compensate=compensate,
                                contact_drive='off' if setup.observer_drive else 'on',
                                **lists))
    _, wrong, _ = run(model, Controller(), other, link, np.zeros(6), extra=extra, t_end=0.2)
    friction = (other.drive_torques(qd, None) if other.observer_drive
                else setup.drive_torques(qd, None))
    assert np.abs(wrong[-1]).max() > 0.5 * np.abs(friction).max() > 0.01


def test_a_compensated_sensor_under_a_tracking_error_leaves_no_residual(model):
    """
    A wrist sensor compensating the gripper: the residual does not follow the tracking error.

    The arm moves, the command asks for other accelerations (a tracking error), a constant
    contact wrench acts beyond the sensor and the sensor reads it with the gripper's weight and
    inertia at the actual acceleration. The feedforward uses the commanded acceleration; the
    residual must stay zero whatever the command: the sensor measured everything beyond it.
    """
    frame = 'ft_frame'
    contact = np.array([3.0, -2.0, 5.0, 0.2, -0.1, 0.3])  # at the sensor frame, on the robot
    at = motion(model)
    times = np.arange(0.0, 0.3 + DT / 2, DT)
    tracking = np.linspace(1.0, -1.0, model.nv)  # the direction of the tracking error

    largest, carried_by_commanded = {}, {}
    for error in (0.0, 5.0, 20.0):  # rad/s^2 between commanded and actual acceleration
        sensor = Sensor('ft', timeout=0.0, compensate=True)
        controller = Controller([sensor])
        setup = Setup(model, Config(contact_observer=True, contact_gain=GAIN,
                                    desired_timeout=0.0))
        residuals, extra = [], []
        for k, t in enumerate(times):
            q, qd, qdd = at(t)
            qdd_cmd = qdd + error * tracking
            now = int(round(t * NS))
            # what the sensor reads: the contact less what carries the gripper, actually
            sensor.receive(now, frame, contact - rbd.payload_wrench(model, frame, q, qd, qdd))
            controller.set_desired(model, Desired(qdd_cmd, None, None, np.ones(8, bool)), now)
            effort = rbd.rnea(model, q, qd, qdd, {frame: contact})  # the contact beyond
            out = controller.compute(setup, q, qd, now, effort, now)
            residuals.append(out.external)
            # the feedforward: the contact from the reading at the commanded acceleration
            f_ff = sensor.reading.wrench + rbd.payload_wrench(model, frame, q, qd, qdd_cmd)
            np.testing.assert_allclose(out.feedforward,
                                       rbd.rnea(model, q, qd, qdd_cmd, {frame: f_ff}),
                                       rtol=1e-12, atol=1e-9)
            # what a residual would carry with the reading compensated at the command
            jt = rbd.jacobian(model, q, frame, frame='local').T
            extra.append(jt @ (rbd.payload_wrench(model, frame, q, qd, qdd_cmd)
                               - rbd.payload_wrench(model, frame, q, qd, qdd)))
        largest[error] = np.abs(residuals).max()
        carried_by_commanded[error] = np.abs(extra).max()
    print('largest |r| per tracking error [rad/s^2]:', largest,
          'the gripper at the commanded minus the actual acceleration:', carried_by_commanded)
    assert carried_by_commanded[20.0] > 1.0  # what the old compensation put into r [N m]
    size = np.abs(rbd.rnea(model, *at(0.1), {frame: contact})).max()
    for error in largest:
        assert largest[error] < 1e-3 * size
        assert abs(largest[error] - largest[0.0]) < 1e-6 * size


def step(controller, setup, model, t, effort=True, q=None):
    q = np.full(model.nv, 0.3) if q is None else q
    qd = np.zeros(model.nv)
    tau = rbd.gravity_torques(model, q) if effort else None
    return controller.compute(setup, q, qd, int(t * NS), tau, int(round(t * NS)))


def test_stamps_and_missing_efforts_restart_or_pause(model):
    setup = Setup(model, Config(contact_observer=True))
    controller = Controller()
    observer = controller.observer
    push = np.zeros(model.nv)
    push[1] = 5.0  # a state that moves nothing while the efforts say 5 N m less on joint 2
    q = np.full(model.nv, 0.3)

    def pushed(t):
        tau = rbd.gravity_torques(model, q) - push
        return controller.compute(setup, q, np.zeros(model.nv), int(t * NS), tau,
                                  int(round(t * NS)))

    for k in range(50):
        out = pushed(k * DT)
    assert out.external[1] > 4.0 and observer.restarts == 0
    out = pushed(49 * DT)  # the stamp does not advance
    assert not out.external.any() and out.step.restarted and observer.restarts == 1
    out = pushed(48 * DT)  # nor going backwards
    assert not out.external.any() and observer.restarts == 2
    out = pushed(48 * DT + 0.01)
    assert out.external[1] > 0.0
    out = pushed(48 * DT + 0.01 + MAX_GAP * 1.01)  # a gap
    assert not out.external.any() and observer.restarts == 3
    out = pushed(48 * DT + 0.01 + MAX_GAP * 1.01 + MAX_GAP * 0.99)  # not a gap
    assert out.external[1] > 0.0 and observer.restarts == 3
    # a new setup of the same model and joints (another threshold) goes on from there
    kept = out.external[1]
    setup = Setup(model, Config(contact_observer=True, **{'contact.threshold': [100.0] * 8}))
    out = pushed(48 * DT + 0.01 + MAX_GAP * 1.01 + MAX_GAP * 0.99 + DT)
    assert out.external[1] > kept and observer.restarts == 3
    # no efforts (another driver's joint state, merged): paused, nothing observed; the integral
    # goes on when efforts are back within the gap, and restarts after a longer pause
    t = 48 * DT + 0.01 + MAX_GAP * 1.01 + MAX_GAP * 0.99 + DT
    before = out.external[1]
    out = step(controller, setup, model, t + DT, effort=False)
    assert out.external is None and not observer.running
    out = pushed(t + 2 * DT)
    assert out.external[1] > before and observer.running and observer.restarts == 3
    out = step(controller, setup, model, t + 3 * DT, effort=False)
    out = pushed(t + 3 * DT + MAX_GAP * 1.01)
    assert not out.external.any() and observer.running and observer.restarts == 4
    out = pushed(t + 4 * DT + MAX_GAP * 1.01)
    assert out.external[1] == pytest.approx(5.0 * (1 - math.exp(-50.0 * DT)))


def test_contact_latches_reacts_and_resets(model):
    joints = list(model.joint_names)
    thresholds = [1.0] * model.nv
    setup = Setup(model, Config(contact_observer=True, command_output='feedforward',
                                contact_reaction='gravity_compensation',
                                **{'contact.threshold': thresholds}))
    controller = Controller()
    q = np.full(model.nv, 0.3)
    qd = np.full(model.nv, 0.2)
    g = rbd.gravity_torques(model, q)
    free = rbd.rnea(model, q, qd, np.zeros(model.nv))
    t = [0.0]

    def state(push=0.0):
        t[0] += DT
        tau = free.copy()
        tau[3] -= push
        return controller.compute(setup, q, qd, int(t[0] * NS), tau, int(round(t[0] * NS)))

    for _ in range(20):
        out = state()
        assert not out.step.contact
        np.testing.assert_allclose(out.command, out.feedforward)
    assert not np.allclose(out.feedforward, g)
    changed = []
    for _ in range(40):
        out = state(push=3.0)
        changed.append(out.step.changed)
        if out.step.contact:
            np.testing.assert_allclose(out.command, g)
    assert changed.count(True) == 1
    flagged = changed.index(True)
    assert out.step.contact and [joints[i] for i in controller.observer.contact_joints] == \
        ['joint4']
    # 3 N m through a first-order lag, from half a step before the first pushed sample (a
    # ramp between the samples), crosses 1 N m after about ln(1.5) / K
    a = math.exp(-GAIN * DT)
    crossing = next(k for k in range(1, 40) if 3.0 * (1.0 - a ** (k - 1) * (1.0 + a) / 2) > 1.0)
    assert flagged + 1 == crossing == math.ceil(math.log(1.5) / (GAIN * DT))
    for _ in range(5):  # latched while the push is gone
        out = state()
    assert out.step.contact
    np.testing.assert_allclose(out.command, g)
    # the node's reset runs on another thread: one landing between a state's step and the
    # choice of its command leaves that state answered as its step saw it; the next state
    # restarts the observer and is answered with the feedforward
    observer = controller.observer
    stepped = observer.step

    def step_then_reset(*args):
        result = stepped(*args)
        assert observer.reset()
        return result

    observer.step = step_then_reset
    out = state()
    del observer.step
    assert out.step.contact and out.external.any() and not observer.contact
    np.testing.assert_allclose(out.command, g)
    out = state()
    assert not out.step.contact and not out.external.any()
    np.testing.assert_allclose(out.command, out.feedforward)


@pytest.mark.parametrize('settings, word', [
    ({'contact.threshold': [1.0, 2.0]}, 'contact.threshold has 2 entries, joints has 8'),
    ({'contact.threshold': [1.0] * 7 + [-1.0]}, 'contact.threshold must be'),
    ({'contact_gain': -1.0}, 'contact.gain must be a finite number > 0'),
    ({'contact_gain': 0.0}, 'contact.gain'),
    ({'contact_wrench_link': 'nope'}, "contact.wrench_link 'nope' is not a link"),
    ({'contact_reaction': 'stop'}, "unknown value 'stop'"),
    ({'contact_drive': 'sometimes'}, "contact.drive: unknown value 'sometimes' \\(use auto"),
])
def test_setup_refuses_contact_settings(model, settings, word):
    with pytest.raises(ValueError, match=word):
        Setup(model, Config(contact_observer=True, **settings))


def test_non_finite_model_output_never_stays_in_the_integral(model):
    setup = Setup(model, Config(contact_observer=True))
    controller = Controller()
    step(controller, setup, model, 0.0)
    q = np.full(model.nv, 0.3)
    bad = rbd.gravity_torques(model, q)
    bad[0] = 1e308
    out = controller.compute(setup, q, np.full(model.nv, 1e308), int(DT * NS), bad,
                             int(DT * NS))
    assert out is None or np.isfinite(out.external).all()
    out = step(controller, setup, model, 2 * DT)
    assert np.isfinite(out.external).all()


# A push on the last link of a 7-DoF arm moving through a sum of sines, sampled at 100 Hz (a
# common rate of drivers' joint states), the efforts exactly the RNEA's with the push: the
# description in metres, and the same description in millimetres.
ARMS = {
    # link, centre of the motion (away from singular poses), moving joints
    'demo_arm': ('tool_center_point', [0.0, 0.5, 0.0, -1.2, 0.0, 0.8, 0.0, 0.02], 7),
    'xarm7': ('link7', [0.0, 0.3, 0.0, 0.9, 0.0, 0.7, 0.0], 7),
}
PUSH_FORCE = 21.0 * np.array([12.0, -14.0, 9.0]) / np.linalg.norm([12.0, -14.0, 9.0])  # N
PUSH = np.concatenate((PUSH_FORCE, [0.5, -0.3, 0.2]))  # N, N m: in the link frame
SAMPLE = 0.01  # s
PUSH_AT, PUSH_END = 0.5, 2.5  # s
MM = 1000.0


def arm_description(name):
    """Return the URDF text of ``name``: the bundled demo arm or example-robot-data's xArm7."""
    if name == 'demo_arm':
        path = demo_urdf_path()
    else:
        root = robots_directory()
        if root is None:
            pytest.skip('example_robot_data is not installed')
        path = os.path.join(root, 'xarm_description', 'urdf', 'xarm7.urdf')
    with open(path) as stream:
        return stream.read()


def sum_of_sines(center, moving):
    """Return ``t -> (q, qd, qdd)``: three sines per moving joint, 0.25, 0.6 and 2 Hz."""
    rng = np.random.default_rng(7)
    center = np.asarray(center, dtype=float)
    amplitude = np.zeros((len(center), 3))
    amplitude[:moving] = rng.uniform(0.5, 1.0, (moving, 3)) * [0.15, 0.08, 0.02]  # rad
    phase = rng.uniform(0.0, 2.0 * math.pi, amplitude.shape)
    w = 2.0 * math.pi * np.array([0.25, 0.6, 2.0])

    def at(t):
        s, c = np.sin(w * t + phase), np.cos(w * t + phase)
        return (center + (amplitude * s).sum(1), (amplitude * w * c).sum(1),
                -(amplitude * w * w * s).sum(1))
    return at


def observe_push(model, link, at, unit):
    """
    Run the observer over the samples; return times, residuals, wrench estimates and ranks.

    ``unit``: the description's unit of length in metres' terms (1000: millimetres); the
    motion and the push are the same robot's, turned into that unit.
    """
    prismatic = np.array([t == 'prismatic' for t in model.joint_types])
    coordinate = np.where(prismatic, unit, 1.0)
    push = PUSH * np.repeat([unit, unit * unit], 3)  # kg mm/s^2, kg mm^2/s^2 in millimetres
    setup = Setup(model, Config(contact_observer=True, contact_gain=GAIN))
    controller = Controller()
    times = np.arange(0.0, PUSH_END + SAMPLE / 2, SAMPLE)
    residuals, wrenches, ranks, torques = [], [], [], []
    for t in times:
        q, qd, qdd = (x * coordinate for x in at(t))
        pushed = t >= PUSH_AT - 1e-9
        # the efforts a driver measures: the RNEA with the push, not J^T of the estimator
        effort = rbd.rnea(model, q, qd, qdd, {link: push} if pushed else None)
        now = int(round(t * NS))
        r = controller.compute(setup, q, qd, now, effort, now).external
        w, rank = wrench_at(model, q, link, r)
        residuals.append(r)
        wrenches.append(w / np.repeat([unit, unit * unit], 3))  # back to N, N m
        ranks.append(rank)
        torques.append(effort - rbd.rnea(model, q, qd, qdd))
    return times, np.array(residuals), np.array(wrenches), np.array(ranks), np.array(torques)


@pytest.mark.parametrize('name', sorted(ARMS))
def test_wrench_on_a_moving_arm_in_metres_and_millimetres(name):
    """
    The push's force within 2 % once settled, the same in metres and in millimetres.

    The free motion before the push leaves no residual (the trapezoidal rule on samples); the
    wrench then lags the push's only by the observer's bandwidth on the moving arm.
    """
    link, center, moving = ARMS[name]
    urdf = arm_description(name)
    at = sum_of_sines(center, moving)
    results = {}
    for unit in (1.0, MM):
        model = rbd.Model.from_urdf(scaled(urdf, unit), gravity=(0.0, 0.0, -9.81 * unit))
        results[unit] = observe_push(model, link, at, unit)
    times = results[1.0][0]
    free = times < PUSH_AT - 1e-9
    settled = times >= PUSH_AT + 8.0 / GAIN
    for unit, (_, r, w, rank, tau) in results.items():
        error = np.linalg.norm(w[settled, :3] - PUSH_FORCE, axis=1) / np.linalg.norm(PUSH_FORCE)
        size = np.abs(tau[settled]).max()
        print('%s in %s: largest free |r| %.3g %% of the joint torques of the push, force error '
              'once settled %.3g %% at worst, %.3g %% mean, rank %s'
              % (name, 'mm' if unit == MM else 'm', 100 * np.abs(r[free]).max() / size,
                 100 * error.max(), 100 * error.mean(), sorted(set(rank[settled]))))
        # (first-order rules on the same samples leave 3 to 5 % of them, and the force 3 to 5 %
        # off)
        assert np.abs(r[free]).max() < 5e-3 * size
        assert error.max() < 0.02
        assert (rank[settled] == 6).all()
    # one robot in two units: the same wrench (the force well within 2 %) and the same rank
    np.testing.assert_array_equal(results[1.0][3], results[MM][3])
    np.testing.assert_allclose(results[MM][2], results[1.0][2], rtol=0,
                               atol=1e-6 * np.abs(PUSH).max())


@pytest.mark.parametrize('name, link, rank', [('demo_arm', 'link3', 3), ('xarm7', 'link4', 4),
                                              ('demo_arm', 'flange', 6)])
def test_wrench_rank_and_minimum_norm_do_not_depend_on_the_unit(name, link, rank):
    """
    Fewer than six joints: the minimum-norm wrench, the same in metres and in millimetres.

    The plain least squares of ``J^T w = r`` (metres and radians mixed) gives another wrench in
    each unit; the scaled one gives one wrench, of the smallest ``|f|^2 + |n|^2 / L^2`` among
    those that explain ``r``, with nothing along the wrenches the joints cannot feel.
    """
    urdf = arm_description(name)
    q = np.array(ARMS[name][1]) + 0.2
    q[7:] = ARMS[name][1][7:]  # (the finger where it was)
    answers = {}
    for unit in (1.0, MM):
        model = rbd.Model.from_urdf(scaled(urdf, unit), gravity=(0.0, 0.0, -9.81 * unit))
        coordinate = np.where([t == 'prismatic' for t in model.joint_types], unit, 1.0)
        push = PUSH * np.repeat([unit, unit * unit], 3)
        at_q = q * coordinate
        r = rbd.gravity_torques(model, at_q) - rbd.gravity_torques(model, at_q, {link: push})
        w, found = wrench_at(model, at_q, link, r)
        jt = rbd.jacobian(model, at_q, link, frame='local').T
        plain = np.linalg.lstsq(jt, r, rcond=None)[0]
        back = np.repeat([unit, unit * unit], 3)
        answers[unit] = (w / back, found, plain / back)
        assert found == rank
        np.testing.assert_allclose(jt @ w, r, rtol=0, atol=1e-9 * np.abs(r).max())
        # nothing along the unfelt wrenches, in the metric |f|^2 + |n|^2 / L^2
        length = chain_length(model, link)
        assert length > 0.0
        columns = np.repeat([1.0, length], 3)
        _, sigma, vt = np.linalg.svd(jt * columns, full_matrices=True)
        unfelt = vt[rank:]
        np.testing.assert_allclose(unfelt @ (w / columns), 0.0,
                                   atol=1e-9 * np.abs(w / columns).max())
    m, mm = answers[1.0], answers[MM]
    assert m[1] == mm[1] == rank
    np.testing.assert_allclose(mm[0], m[0], rtol=0, atol=1e-9 * np.abs(m[0]).max())
    if rank < 6:
        # the push is not found (some of it is unfelt), and the plain solve is not one answer
        assert np.abs(m[0] - PUSH).max() > 0.05 * np.abs(PUSH).max()
        assert np.abs(mm[2] - m[2]).max() > 0.01 * np.abs(m[2]).max()
    else:
        np.testing.assert_allclose(m[0], PUSH, rtol=0, atol=1e-9 * np.abs(PUSH).max())
