"""
``identify --effort-scale FILE``: recordings in the driver's units identify the same model.

The efforts of a recording in N m are divided by a scale per joint (one of them negative, as
a motor turning the other way); with the scale file, ``identify`` must find what it finds on
the N m recording, and write the scale into ``drive.yaml`` for the node.
"""

import os
import re

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.cli import identify as identify_cli
from rbd_dynamics.resources import demo_urdf_path

pytest.importorskip('scipy')
pytest.importorskip('cvxpy')
pytest.importorskip('rosbags')
yaml = pytest.importorskip('yaml')

from support.identification import efforts, joint_limits, Motion, \
    perturbed_description, write_joint_states  # noqa: E402

SCALE = np.array([12.0, 15.0, -9.5, 7.0, 3.0, 2.5, 1.5, 40.0])


@pytest.fixture(scope='module')
def recordings(tmp_path_factory):
    """Return ``{'torque': bag, 'current': bag}``: one motion, efforts in N m and in 'A'."""
    root = tmp_path_factory.mktemp('units')
    with open(demo_urdf_path()) as stream:
        text = stream.read()
    nominal = rbd.Model.from_urdf(text, compiled=False)
    true = rbd.Model.from_urdf(perturbed_description(text, seed=2), compiled=False)
    t = np.arange(0.0, 30.0, 0.004)
    q, qd, qdd = Motion(nominal, joint_limits(text), seed=4)(t)
    rng = np.random.default_rng(3)
    tau = efforts(true, q, qd, qdd, rng.uniform(0.2, 2.0, nominal.nv),
                  rng.uniform(0.2, 2.0, nominal.nv))
    return {'torque': write_joint_states(root / 'torque', nominal.joint_names, t, q, qd, tau),
            'current': write_joint_states(root / 'current', nominal.joint_names, t, q, qd,
                                          tau / SCALE),
            'names': nominal.joint_names, 'motion': (q[::25], qd[::25], qdd[::25])}


def scale_file(path, names, scale):
    path.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
        'joints': list(names), 'drive': {'effort_scale': [float(s) for s in scale]}}}}))
    return path


def drive_of(out):
    with open(out / 'drive.yaml') as stream:
        return yaml.safe_load(stream)['/**']['ros__parameters']['drive']


def test_scaled_recording_identifies_the_same_model(recordings, tmp_path, capsys):
    names = recordings['names']
    plain, scaled = tmp_path / 'plain', tmp_path / 'scaled'
    assert identify_cli.main([demo_urdf_path(), recordings['torque'], '--out', str(plain)]) == 0
    # the file's joints in another order than the description's
    order = list(reversed(range(len(names))))
    path = scale_file(tmp_path / 'scale.yaml', [names[j] for j in order], SCALE[order])
    code = identify_cli.main([demo_urdf_path(), recordings['current'], '--effort-scale',
                              str(path), '--out', str(scaled)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert 'efforts converted to joint torques by drive.effort_scale' in stdout
    assert 'warning' not in stderr, stderr  # the right scales are not doubted
    a, b = drive_of(plain), drive_of(scaled)
    np.testing.assert_allclose(b['effort_scale'], SCALE)
    assert 'effort_scale' not in a
    # the same model: the same efforts along the motion (the parameters themselves may differ
    # where the data leave them free: the finger's, here)
    q, qd, qdd = recordings['motion']
    predicted = []
    for out, drive in ((plain, a), (scaled, b)):
        model = rbd.Model.from_urdf_file(str(out / 'identified.urdf'), compiled=False)
        predicted.append(rbd.rnea(model, q, qd, qdd) + rbd.drive_torques(
            qd, qdd, drive['viscous'], drive['coulomb'], drive['armature'],
            drive['coulomb_velocity']))
    rms = np.sqrt((predicted[0] ** 2).mean(axis=0))
    assert np.abs(predicted[1] - predicted[0]).max(axis=0).max() < 1e-3 * rms.max()


def test_a_wrong_scale_is_warned_of(recordings, tmp_path, capsys):
    """Scales (one of the wrong sign) given to efforts already in N m: identified, and said."""
    names = recordings['names']
    scale = np.array([2.0, 2.0, -2.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    path = scale_file(tmp_path / 'scale.yaml', names, scale)
    code = identify_cli.main([demo_urdf_path(), recordings['torque'], '--effort-scale',
                              str(path), '--out', str(tmp_path / 'out')])
    _, stderr = capsys.readouterr()
    assert code == 0, stderr
    doubted = re.findall(r'warning: (\w+): converted by its scale', stderr)
    # joint1 turns about the vertical: no gravity on it, and its efforts twice as large are
    # fitted as about twice the inertia about that axis, as well as the right ones; joint2
    # carries the arm's weight and joint3 has the wrong sign, which no consistent model follows
    assert doubted == list(names[1:3]), stderr


@pytest.mark.parametrize('content, message', [
    ({'joints': ['joint1', 'elbow'], 'drive': {'effort_scale': [1.0, 2.0]}},
     'names joints the description does not have: elbow'),
    ({'joints': ['joint1'], 'drive': {'effort_scale': [1.0, 2.0]}}, 'has 2 entries, joints has 1'),
    ({'drive': {'viscous': [1.0]}}, 'has no drive.effort_scale'),
    ({'joints': ['joint1'], 'drive': {'effort_scale': [0.0]}}, 'finite non-zero'),
    ({'joints': ['joint1'], 'drive': {'effort_scale': [2.0]}}, 'gives no scale for joint2'),
])
def test_bad_scale_files_exit_1_and_write_nothing(recordings, tmp_path, capsys, content,
                                                  message):
    path = tmp_path / 'scale.yaml'
    path.write_text(yaml.safe_dump({'rbd_dynamics': {'ros__parameters': content}}))
    out = tmp_path / 'out'
    code = identify_cli.main([demo_urdf_path(), recordings['current'], '--effort-scale',
                              str(path), '--out', str(out)])
    _, stderr = capsys.readouterr()
    assert code == 1 and message in stderr, stderr
    assert 'Traceback' not in stderr
    assert not out.exists() or not os.listdir(out)


LOAD = ('tool_center_point', 2.0, np.array([0.01, 0.02, 0.06]),
        np.diag([0.004, 0.005, 0.003]))


@pytest.fixture(scope='module')
def estimate_bags(tmp_path_factory):
    """Record the arm, and the arm with a load, efforts in a driver's units; noise-free and 1 %."""
    root = tmp_path_factory.mktemp('estimate')
    with open(demo_urdf_path()) as stream:
        text = stream.read()
    nominal = rbd.Model.from_urdf(text, compiled=False)
    true = rbd.Model.from_urdf(perturbed_description(text, seed=5), compiled=False)
    rng = np.random.default_rng(6)
    viscous, coulomb = rng.uniform(0.2, 2.0, nominal.nv), rng.uniform(0.2, 2.0, nominal.nv)
    finger = nominal.joint_names.index('left_finger_joint')
    out = {}
    for noise in (0.0, 0.01):
        for name, seed, load in (('arm', 7, False), ('load', 8, True), ('warm load', 8, True)):
            if name == 'warm load' and not noise:
                continue
            model = true
            if load:
                model = rbd.Model.from_urdf(perturbed_description(text, seed=5),
                                            compiled=False)
                model.set_payload(LOAD[0], LOAD[1], LOAD[2], LOAD[3])
            t = np.arange(0.0, 30.0, 0.004)
            motion = Motion(nominal, joint_limits(text), seed=seed)
            motion.amp[finger] = 0.0  # the gripper stands still (and is held)
            q, qd, qdd = motion(t)
            q[:, finger] = 0.02
            if name == 'warm load':  # the gears under the load, warmer: more friction, a bias
                tau = efforts(model, q, qd, qdd, 1.3 * viscous, 1.25 * coulomb) \
                    + rng.uniform(-0.5, 0.5, nominal.nv)
            else:
                tau = efforts(model, q, qd, qdd, viscous, coulomb)
            if noise:
                tau += noise * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
            folder = '%s_%g' % (name.replace(' ', '_'), noise)
            out[name, noise] = write_joint_states(root / folder, nominal.joint_names, t, q, qd,
                                                  tau / SCALE)
    return out


@pytest.mark.parametrize('noise, tolerance', [(0.0, 1e-6), (0.01, 0.01)])
def test_scales_estimated_with_a_known_load(estimate_bags, tmp_path, capsys, noise, tolerance):
    out = tmp_path / 'out'
    code = identify_cli.main([demo_urdf_path(), estimate_bags['arm', noise], '--effort-scale',
                              'estimate', '--load', '%s:%g' % LOAD[:2],
                              estimate_bags['load', noise], '--out', str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert 'effort scales estimated' in stdout and '2 kg on tool_center_point' in stdout
    assert 'held' in stdout and 'left_finger_joint' in stdout
    got = np.array(drive_of(out)['effort_scale'])
    arm = slice(0, 7)  # the finger is held: its scale stays 1
    np.testing.assert_allclose(got[arm], SCALE[arm], rtol=tolerance)
    assert got[7] == 1.0


def test_a_load_recorded_with_more_friction_still_gives_the_scales(estimate_bags, tmp_path,
                                                                   capsys):
    """The loaded recording's friction a quarter higher, and biased: not taken for scales."""
    out = tmp_path / 'out'
    code = identify_cli.main([demo_urdf_path(), estimate_bags['arm', 0.01], '--effort-scale',
                              'estimate', '--load', '%s:%g' % LOAD[:2],
                              estimate_bags['warm load', 0.01], '--out', str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    got = np.array(drive_of(out)['effort_scale'])[:7]
    # within 1 % and within three of the printed deviations
    np.testing.assert_allclose(got, SCALE[:7], rtol=0.01)
    rows = re.findall(r'^  (joint\d) +([-0-9.e]+) +([0-9.e-]+)', stdout, re.M)
    std = np.array([float(s) for _, _, s in rows])
    assert len(std) >= 7, stdout
    assert (np.abs(got - SCALE[:7]) <= 3 * std[:7]).all(), (got, SCALE[:7], std)


def test_without_a_load_the_description_fixes_the_factor(estimate_bags, tmp_path, capsys):
    out = tmp_path / 'out'
    code = identify_cli.main([demo_urdf_path(), estimate_bags['arm', 0.0], '--effort-scale',
                              'estimate', '--out', str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert "the description's inertial parameters, a weaker reference" in stdout
    got = np.array(drive_of(out)['effort_scale'])
    # the ratios between joints are the data's; the common factor the description's (its
    # masses 15 to 30 % off the true arm's)
    ratio = got[:7] / SCALE[:7]
    assert np.ptp(ratio) < 1e-4 * ratio.mean()
    assert 0.7 < ratio.mean() < 1.3


@pytest.mark.parametrize('args, message', [
    (['--load', 'tool_center_point:2'], '--load fixes the common factor'),
    (['--effort-scale', 'estimate', '--load', 'hand:2', 'BAG'], "'hand' is not a link"),
    (['--effort-scale', 'estimate', '--load', 'tool_center_point:-1', 'BAG'],
     'the mass must be a positive number'),
])
def test_bad_loads_exit_1(estimate_bags, tmp_path, capsys, args, message):
    args = [estimate_bags['load', 0.0] if a == 'BAG' else a for a in args]
    out = tmp_path / 'out'
    code = identify_cli.main([demo_urdf_path(), estimate_bags['arm', 0.0]] + args
                             + ['--out', str(out)])
    _, stderr = capsys.readouterr()
    assert code == 1 and message in stderr, stderr
    assert not out.exists() or not os.listdir(out)


@pytest.mark.parametrize('value', [1e-05, -2.5e-07, 1e20, 0.1, 5.0, -0.0, 123456789.0])
def test_written_numbers_read_back_as_numbers(value, tmp_path):
    """A tiny offset written as 1e-05 read back as a string, and the file was refused."""
    from rbd_dynamics.identification.units import read_drive
    from rbd_dynamics.analysis.parameters_file import yaml_number
    from rbd_dynamics.identification.writeback import drive_yaml
    assert yaml.safe_load('x: %s' % yaml_number(value))['x'] == value
    with open(demo_urdf_path()) as stream:
        model = rbd.Model.from_urdf(stream.read(), compiled=False)
    nv = model.nv
    path = tmp_path / 'drive.yaml'
    path.write_text(drive_yaml(model.joint_names, [abs(value)] * nv, [abs(value)] * nv,
                               [0.0] * nv, 0.01, effort_offset=[value] * nv))
    drive = read_drive(str(path), model)
    np.testing.assert_array_equal(drive['effort_offset'], value)
    np.testing.assert_array_equal(drive['viscous'], abs(value))
