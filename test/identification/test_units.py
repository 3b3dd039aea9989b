"""
``identify --effort-scale FILE``: recordings in the driver's units identify the same model.

The efforts of a recording in N m are divided by a scale per joint (one of them negative, as
a motor turning the other way); with the scale file, ``identify`` must find what it finds on
the N m recording, and write the scale into ``drive.yaml`` for the node.
"""

import os

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.identification import identify_cli
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
