"""
A driver that speaks current, its scales unknown, and a payload nobody typed in.

The simulated driver runs the demo arm as it really is (:func:`support.true_arm.true_arm`:
masses, centres of mass and friction the description does not know; hard friction) and reports
and takes efforts divided by a scale per joint, one of them negative. The user's steps, each as
its command does it (in this process, without ROS, to keep the test short):

1. an excitation designed with the gripper's finger held (``excite --hold``), played on the
   arm with and without a calibration load of 2 kg, efforts recorded with 1 % noise;
2. ``identify --effort-scale estimate --load gripper_base:2 ...``: the scales recovered;
3. the excitation played again with an unknown payload in the hand; ``payload`` on top of the
   identified description and ``drive.yaml`` estimates it;
4. the node, over real topics, publishes gravity compensation in the driver's units with the
   identified description, ``drive.yaml`` and ``payload.yaml``: it holds the arm where it is;
   told nothing of the payload it lets the arm sag.
"""

import numpy as np
import pytest

pytest.importorskip('mujoco')
pytest.importorskip('scipy')
pytest.importorskip('cvxpy')
rclpy = pytest.importorskip('rclpy')
pytest.importorskip('yaml')

import rbd_dynamics as rbd  # noqa: E402
from rbd_dynamics.cli import identify as identify_cli, payload as payload_cli  # noqa: E402
from rbd_dynamics import excitation as excite  # noqa: E402, I100
from rbd_dynamics.identification import hold  # noqa: E402
from rbd_dynamics.resources import demo_urdf_path  # noqa: E402
from support.identification import read_parameters_file, write_joint_states  # noqa: E402
from support.sim import JOINTS, Q0  # noqa: E402
from support.true_arm import play_excitation, true_arm  # noqa: E402

SEED = 3
# N m (N) per unit of the driver's effort; the third motor turns against its joint's axis
SCALE = np.array([12.0, 15.0, -9.5, 7.0, 3.0, 2.5, 1.5, 40.0])
FINGER = 'left_finger_joint'
LINK = 'gripper_base'
CALIBRATION = (LINK, 2.0, [0.05, 0.04, 0.1], [0.004, 0.0, 0.0, 0.004, 0.0, 0.002])
UNKNOWN = (LINK, 1.3, [0.03, -0.02, 0.09], [0.003, 0.0005, 0.0, 0.004, 0.0, 0.002])
NOISE = 0.01


class _WithFinger:
    """The excitation of the arm with the finger held at its start: every joint's columns."""

    def __init__(self, excitation, finger):
        self.time, self.excitation, self.finger = excitation.time, excitation, finger

    def at(self, t):
        return tuple(np.column_stack([v, np.full(len(t), self.finger if k == 0 else 0.0)])
                     for k, v in enumerate(self.excitation.at(t)))


@pytest.fixture(scope='module')
def steps(tmp_path_factory):
    """Run steps 1-3; the output folders, the printed summaries and the true arm."""
    root = tmp_path_factory.mktemp('units_loop')
    with open(demo_urdf_path()) as stream:
        urdf = stream.read()
    model = rbd.Model.from_urdf(urdf)
    assert model.joint_names == tuple(JOINTS) and JOINTS[-1] == FINGER
    sim_params, true_urdf = true_arm(urdf, SEED)
    finger = '%s=%g' % (FINGER, Q0[-1])
    arm_urdf = hold.held_description(urdf, {FINGER: Q0[-1]})
    excitation = excite.design(rbd.Model.from_urdf(arm_urdf), arm_urdf, duration=10.0,
                               start=Q0[:-1], harmonics=4, iterations=20)
    rng = np.random.default_rng(SEED)
    bags = {}
    for name, payload in (('free', None), ('calibration', CALIBRATION), ('unknown', UNKNOWN)):
        t, q, qd, effort = play_excitation(_WithFinger(excitation, Q0[-1]), model, true_urdf,
                                           sim_params, payload=payload)
        current = effort / SCALE
        current += NOISE * np.sqrt((current ** 2).mean(axis=0)) * rng.normal(size=effort.shape)
        bags[name] = write_joint_states(str(root / name), model.joint_names, t, q, qd, current)
    out = {'ident': root / 'identified', 'payload': root / 'payload'}
    printed = {}
    for step, command in (
            ('ident', [identify_cli.main, demo_urdf_path(), bags['free'], '--effort-scale',
                       'estimate', '--load', '%s:%g' % CALIBRATION[:2], bags['calibration'],
                       '--hold', finger, '--out', str(out['ident'])]),
            ('payload', [payload_cli.main, str(out['ident'] / 'identified.urdf'),
                         bags['unknown'], '--link', LINK, '--params-file',
                         str(out['ident'] / 'drive.yaml'), '--hold', finger,
                         '--out', str(out['payload'])])):
        printed[step] = _run(command)
    return out, printed, sim_params


def _run(command):
    import contextlib
    import io
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = command[0](command[1:])
    assert code == 0, stdout.getvalue() + stderr.getvalue()
    return stdout.getvalue()


def test_scales_recovered_with_a_known_load(steps):
    out, printed, _ = steps
    drive = read_parameters_file(out['ident'] / 'drive.yaml')
    scale = np.array(drive['drive.effort_scale'])
    print(printed['ident'])
    print('estimated / true scale', np.array2string(scale[:-1] / SCALE[:-1], precision=5))
    assert np.allclose(scale[:-1], SCALE[:-1], rtol=0.01), scale
    # the held finger's scale is not estimated: written as 1, and said
    assert scale[-1] == 1.0
    assert 'not estimated (held): the scale of %s' % FINGER in printed['ident']
    assert 'the loads of known mass (2 kg on %s)' % LINK in printed['ident']


def test_unknown_payload_estimated(steps):
    out, printed, _ = steps
    payload = read_parameters_file(out['payload'] / 'payload.yaml')
    print(printed['payload'])
    assert payload['payload.link'] == LINK
    mass, com = payload['payload.mass'], np.array(payload['payload.com'])
    print('payload mass %.4f kg (true %g), centre of mass off by %.2f mm'
          % (mass, UNKNOWN[1], 1e3 * np.linalg.norm(com - UNKNOWN[2])))
    assert abs(mass - UNKNOWN[1]) < 0.02 * UNKNOWN[1], mass
    assert np.linalg.norm(com - UNKNOWN[2]) < 0.005, com


def test_gravity_compensation_with_the_estimated_payload_holds_the_arm(steps, loop):
    out, _, sim_params = steps
    sim = dict(sim_params, **{'drive.effort_scale': SCALE.tolist()})
    sim.update({'payload.link': LINK, 'payload.mass': UNKNOWN[1],
                'payload.com': UNKNOWN[2], 'payload.inertia': UNKNOWN[3]})
    with open(out['ident'] / 'identified.urdf') as stream:
        identified = stream.read()
    node = {'command_output': 'gravity_compensation', 'robot_description': identified}
    node.update(read_parameters_file(out['ident'] / 'drive.yaml'))
    # the finger's driver scale, not estimated (held), given by hand as the summary asks
    node['drive.effort_scale'] = node['drive.effort_scale'][:-1] + [float(SCALE[-1])]
    drift = {}
    for told in (True, False):
        params = dict(node)
        if told:
            params.update(read_parameters_file(out['payload'] / 'payload.yaml'))
        run = loop('/units_hold_%s' % told, params, sim)
        t, q = run.run_until(2.0)
        assert len(t) and t[-1] >= 2.0, run.logs()
        drift[told] = np.abs(q - Q0)[:, :-1].max()
    print('largest drift of an arm joint in 2 s of gravity compensation: with the estimated '
          'payload %.2e rad, without it %.2e rad' % (drift[True], drift[False]))
    assert drift[True] < 2e-3, drift
    assert drift[False] > 20 * drift[True], drift
