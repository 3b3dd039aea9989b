"""
``python -m rbd_dynamics payload``: a payload's mass, centre of mass and inertia from a recording.

The recordings are synthetic: the demo arm holding a known payload on its tool centre point
(its efforts from the library with the payload set, plus a known drive), or a wrist sensor's
readings (``contact - payload_wrench``). The estimate must give back the payload.
"""

import os
import re

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.cli import payload as payload_cli
from rbd_dynamics.resources import demo_urdf_path

pytest.importorskip('scipy')
pytest.importorskip('cvxpy')
pytest.importorskip('rosbags')
yaml = pytest.importorskip('yaml')

from support.identification import efforts, joint_limits, Motion, T0_NS, \
    write_joint_states  # noqa: E402

LINK = 'tool_center_point'
MASS = 1.3
COM = np.array([0.02, -0.01, 0.05])
INERTIA = np.array([[0.004, 0.0005, 0.0002], [0.0005, 0.005, -0.0003],
                    [0.0002, -0.0003, 0.003]])
VISCOUS = [0.8, 1.1, 0.6, 0.9, 0.4, 0.3, 0.2, 2.0]
COULOMB = [1.5, 1.2, 1.0, 0.8, 0.5, 0.4, 0.3, 0.1]
SCALE = [10.0, 10.0, -8.0, 6.0, 3.0, 2.0, 1.5, 20.0]


@pytest.fixture(scope='module')
def arm():
    with open(demo_urdf_path()) as stream:
        text = stream.read()
    plain = rbd.Model.from_urdf(text, compiled=False)
    loaded = rbd.Model.from_urdf(text, compiled=False)
    loaded.set_payload(LINK, MASS, COM, INERTIA)
    return text, plain, loaded


@pytest.fixture(scope='module')
def drive_file(tmp_path_factory, arm):
    """Write a drive.yaml as identify writes it, for efforts in a driver's unit."""
    from rbd_dynamics.identification.writeback import drive_yaml
    _, plain, _ = arm
    path = tmp_path_factory.mktemp('drive') / 'drive.yaml'
    path.write_text(drive_yaml(plain.joint_names, VISCOUS, COULOMB, [0.0] * plain.nv, 0.01,
                               effort_scale=SCALE))
    return path


def moving_bag(path, arm, noise=0.0, seed=4):
    text, plain, loaded = arm
    t = np.arange(0.0, 30.0, 0.004)
    q, qd, qdd = Motion(plain, joint_limits(text), seed=seed)(t)
    tau = efforts(loaded, q, qd, qdd, VISCOUS, COULOMB)
    if noise:
        rng = np.random.default_rng(seed)
        tau += noise * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
    return write_joint_states(path, plain.joint_names, t, q, qd, tau / SCALE)


def run(args, capsys):
    code = payload_cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def written(out_dir):
    with open(out_dir / 'payload.yaml') as stream:
        return yaml.safe_load(stream)['/**']['ros__parameters']['payload']


def test_payload_from_joint_efforts_noise_free(arm, drive_file, tmp_path, capsys):
    bag = moving_bag(tmp_path / 'moving', arm)
    out_dir = tmp_path / 'out'
    code, out, err = run([demo_urdf_path(), bag, '--link', LINK, '--params-file', drive_file,
                          '--out', out_dir], capsys)
    assert code == 0, err
    p = written(out_dir)
    assert p['link'] == LINK
    assert abs(p['mass'] - MASS) < 1e-6 * MASS
    np.testing.assert_allclose(p['com'], COM, atol=1e-6)
    ixx, ixy, ixz, iyy, iyz, izz = p['inertia']
    np.testing.assert_allclose([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], INERTIA,
                               atol=1e-6)
    assert 'point mass' not in out and 'geometry_msgs/msg/InertiaStamped' in out
    # the node takes the file: with the payload set, its gravity compensation is the loaded arm's
    _, plain, loaded = arm
    model = rbd.Model.from_urdf(open(demo_urdf_path()).read(), compiled=False)
    model.set_payload(p['link'], p['mass'], p['com'], p['inertia'])
    q = np.linspace(-0.4, 0.4, model.nv)
    np.testing.assert_allclose(rbd.gravity_torques(model, q), rbd.gravity_torques(loaded, q),
                               atol=1e-5)


def test_payload_with_noise_and_its_deviations(arm, drive_file, tmp_path, capsys):
    bag = moving_bag(tmp_path / 'noisy', arm, noise=0.01)
    out_dir = tmp_path / 'out'
    code, out, err = run([demo_urdf_path(), bag, '--link', LINK, '--params-file', drive_file,
                          '--out', out_dir], capsys)
    assert code == 0, err
    p = written(out_dir)
    assert abs(p['mass'] - MASS) < 0.01 * MASS
    assert np.abs(np.array(p['com']) - COM).max() < 0.005
    assert 'mass' in out and '+-' in out


def test_static_poses_give_a_point_mass(arm, drive_file, tmp_path, capsys):
    text, plain, loaded = arm
    rng = np.random.default_rng(9)
    limits = joint_limits(text)
    lower = np.array([limits[n][0] for n in plain.joint_names])
    upper = np.array([limits[n][1] for n in plain.joint_names])
    t, q = [], []
    for k in range(10):  # ten poses of 1 s, 2 s apart: each its own segment
        pose = lower + (upper - lower) * rng.uniform(0.25, 0.75, plain.nv)
        times = 3.0 * k + np.arange(0.0, 1.0, 0.004)
        t.append(times)
        q.append(np.tile(pose, (len(times), 1)))
    t, q = np.concatenate(t), np.concatenate(q)
    zero = np.zeros_like(q)
    tau = efforts(loaded, q, zero, zero, VISCOUS, COULOMB)
    bag = write_joint_states(tmp_path / 'static', plain.joint_names, t, q, zero, tau / SCALE)
    out_dir = tmp_path / 'out'
    code, out, err = run([demo_urdf_path(), bag, '--link', LINK, '--params-file', drive_file,
                          '--out', out_dir], capsys)
    assert code == 0, err
    assert 'a point mass' in out
    p = written(out_dir)
    assert abs(p['mass'] - MASS) < 1e-6 * MASS
    np.testing.assert_allclose(p['com'], COM, atol=1e-6)
    assert p['inertia'] == [0.0] * 6
    # a driver's velocity noise at rest: no friction change is fitted to it
    noisy = write_joint_states(tmp_path / 'noisy', plain.joint_names, t, q,
                               1e-3 * rng.normal(size=q.shape), tau / SCALE)
    code, out, err = run([demo_urdf_path(), noisy, '--link', LINK, '--params-file', drive_file,
                          '--out', tmp_path / 'noisy_out'], capsys)
    assert code == 0, err
    assert out.count('friction kept: the joint hardly moves') == 7, out
    assert 'friction changed' not in out


def wrench_bag(path, arm, frame='ft_frame', seed=5):
    """Joint states without efforts and the wrist sensor's readings, half a period later."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import get_typestore, Stores
    text, plain, loaded = arm
    t = np.arange(0.0, 20.0, 0.004)
    q, qd, qdd = Motion(plain, joint_limits(text), seed=seed)(t)
    write_joint_states(path, plain.joint_names, t, q, qd)
    # the sensor at 500 Hz, between the joint states: read the motion there
    ts = np.arange(0.002, 19.99, 0.002)
    qs, qds, qdds = Motion(plain, joint_limits(text), seed=seed)(ts)
    reading = -rbd.payload_wrench(loaded, frame, qs, qds, qdds) + np.array(
        [0.5, -0.3, 0.2, 0.02, 0.01, -0.03])  # the sensor's offset
    store = get_typestore(Stores.ROS2_JAZZY)
    types = store.types
    second = path.parent / (path.name + '_wrench')
    with Writer(second, version=9) as writer:
        conn = writer.add_connection('/wrist_ft', 'geometry_msgs/msg/WrenchStamped',
                                     typestore=store)
        for time, w in zip(ts, reading):
            stamp = T0_NS + int(round(time * 1e9))
            msg = types['geometry_msgs/msg/WrenchStamped'](
                header=types['std_msgs/msg/Header'](
                    stamp=types['builtin_interfaces/msg/Time'](sec=stamp // 10 ** 9,
                                                               nanosec=stamp % 10 ** 9),
                    frame_id=frame),
                wrench=types['geometry_msgs/msg/Wrench'](
                    force=types['geometry_msgs/msg/Vector3'](x=w[0], y=w[1], z=w[2]),
                    torque=types['geometry_msgs/msg/Vector3'](x=w[3], y=w[4], z=w[5])))
            writer.write(conn, stamp, store.serialize_cdr(msg, conn.msgtype))
    return second


def test_payload_from_a_wrist_sensor(arm, tmp_path, capsys):
    # one bag with both topics: the joint states' and the wrenches' files merged by rosbags
    path = tmp_path / 'states'
    wrenches = wrench_bag(path, arm)
    from rosbags.rosbag2 import Reader, Writer
    merged = tmp_path / 'both'
    with Writer(merged, version=9) as writer:
        for source in (path, wrenches):
            with Reader(source) as reader:
                for conn in reader.connections:
                    new = writer.add_connection(conn.topic, conn.msgtype,
                                                msgdef=conn.msgdef.data,
                                                rihs01=conn.digest)
                    for _, stamp, raw in reader.messages(connections=[conn]):
                        writer.write(new, stamp, raw)
    out_dir = tmp_path / 'out'
    code, out, err = run([demo_urdf_path(), merged, '--link', LINK, '--wrench', '/wrist_ft',
                          '--out', out_dir], capsys)
    assert code == 0, err
    p = written(out_dir)
    # the joint states are interpolated to the sensor's stamps: close, not exact
    assert abs(p['mass'] - MASS) < 1e-3 * MASS
    np.testing.assert_allclose(p['com'], COM, atol=2e-4)
    assert 'offset 0.5' in out


def test_bad_input_exits_1_and_writes_nothing(arm, drive_file, tmp_path, capsys):
    text, plain, _ = arm
    bag = moving_bag(tmp_path / 'moving', arm)
    t = np.arange(0.0, 5.0, 0.004)
    still = write_joint_states(tmp_path / 'still', plain.joint_names, t,
                               np.zeros((len(t), plain.nv)), None,
                               np.zeros((len(t), plain.nv)))
    no_effort = write_joint_states(tmp_path / 'no_effort', plain.joint_names, t,
                                   np.zeros((len(t), plain.nv)))
    out_dir = tmp_path / 'out'
    for args, message in (
            ([bag, '--link', 'hand'], "--link 'hand' is not a link"),
            ([no_effort, '--link', LINK], 'has no efforts'),
            ([still, '--link', LINK], 'no recorded joint moves --link'),
            ([bag, '--link', LINK, '--params-file', tmp_path / 'missing.yaml'], 'missing.yaml')):
        code, out, err = run([demo_urdf_path()] + args + ['--out', out_dir], capsys)
        assert code == 1 and message in err, (args, err)
        assert 'Traceback' not in err
        assert not out_dir.exists() or not os.listdir(out_dir)


def friction_changed_bag(path, arm, loaded, seed=6):
    """Record the arm's efforts, its friction a fifth higher than drive.yaml says (warm)."""
    text, plain, _ = arm
    t = np.arange(0.0, 30.0, 0.004)
    q, qd, qdd = Motion(plain, joint_limits(text), seed=seed)(t)
    tau = efforts(loaded, q, qd, qdd, 1.2 * np.array(VISCOUS), 1.25 * np.array(COULOMB))
    rng = np.random.default_rng(seed)
    tau += 0.005 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
    return write_joint_states(path, plain.joint_names, t, q, qd, tau / SCALE)


def test_a_drive_that_changed_is_refitted(arm, drive_file, tmp_path, capsys):
    """The friction is higher than drive.yaml's: its change is estimated with the payload."""
    _, _, loaded = arm
    bag = friction_changed_bag(tmp_path / 'warm', arm, loaded)
    code, out, err = run([demo_urdf_path(), bag, '--link', LINK, '--params-file', drive_file,
                          '--out', tmp_path / 'out'], capsys)
    assert code == 0, err
    assert abs(written(tmp_path / 'out')['mass'] - MASS) < 0.002 * MASS
    changes = re.findall(r'^  (joint\d) .*friction changed by viscous ([-+0-9.e]+), Coulomb '
                         r'([-+0-9.e]+)\)$', out, re.M)
    assert [name for name, _, _ in changes] == ['joint%d' % k for k in range(1, 8)], out
    found = np.array([[float(v), float(c)] for _, v, c in changes])
    truth = np.column_stack([0.2 * np.array(VISCOUS[:7]), 0.25 * np.array(COULOMB[:7])])
    np.testing.assert_allclose(found, truth, rtol=0.1, atol=0.01)


def test_the_deviations_cover_a_drive_that_changed(arm, drive_file, tmp_path, capsys):
    """Kept as drive.yaml says, the friction misleads the estimate; its deviations say so."""
    _, _, loaded = arm
    bag = friction_changed_bag(tmp_path / 'warm', arm, loaded)
    code, out, err = run([demo_urdf_path(), bag, '--link', LINK, '--params-file', drive_file,
                          '--keep-friction', '--out', tmp_path / 'out'], capsys)
    assert code == 0, err
    p = written(tmp_path / 'out')
    mass, std = p['mass'], float(out.split('kg  +- ')[1].split()[0])
    # within three of its standard deviations of the truth, and the deviation is not the
    # noise's alone (the noise's alone is a sixth of this error)
    assert abs(mass - MASS) <= 3.0 * std, (mass, std)
    assert std < 0.2 * MASS, std


def test_no_payload_is_said_and_nothing_written(arm, drive_file, tmp_path, capsys):
    text, plain, _ = arm
    bag = friction_changed_bag(tmp_path / 'empty', arm, plain)
    out_dir = tmp_path / 'out'
    code, _, err = run([demo_urdf_path(), bag, '--link', LINK, '--params-file', drive_file,
                        '--out', out_dir], capsys)
    assert code == 3, err
    assert 'no payload on %s' % LINK in err and 'Traceback' not in err
    assert not out_dir.exists() or not os.listdir(out_dir)


def test_a_centre_of_mass_far_from_the_link_is_flagged(arm, drive_file, tmp_path, capsys):
    text, plain, _ = arm
    far = rbd.Model.from_urdf(text, compiled=False)
    far.set_payload(LINK, MASS, np.array([0.3, 0.2, 0.1]), INERTIA)
    bag = moving_bag(tmp_path / 'far', (text, plain, far))
    code, _, err = run([demo_urdf_path(), bag, '--link', LINK, '--params-file', drive_file,
                        '--out', tmp_path / 'out'], capsys)
    assert code == 0, err
    assert 'the centre of mass is 0.374 m from the origin of %s' % LINK in err, err
    # near the link: no word
    bag = moving_bag(tmp_path / 'near', arm)
    code, _, err = run([demo_urdf_path(), bag, '--link', LINK, '--params-file', drive_file,
                        '--out', tmp_path / 'out2'], capsys)
    assert code == 0 and 'centre of mass is' not in err, err
