"""
Offline analysis: ``python -m rbd_dynamics bag`` and ``... trajectory``.

The bags are written here with rosbags' writer (MCAP and SQLite 3 storage) from analytic joint
motions (sums of sines), so positions, velocities and accelerations are known exactly.
"""

import csv
import os
import subprocess
import sys

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.analysis.differentiate import derivative, half_width, sample_step, \
    savgol_derivative
from rbd_dynamics.cli import bag as cli
from rbd_dynamics.resources import demo_urdf_path

rosbags = pytest.importorskip('rosbags')
yaml = pytest.importorskip('yaml')

from rosbags.rosbag2 import StoragePlugin, Writer  # noqa: E402
from rosbags.typesys import get_typestore, Stores  # noqa: E402
from support.robots import floating_urdf  # noqa: E402

TYPESTORE = get_typestore(Stores.ROS2_JAZZY)
JointState = TYPESTORE.types['sensor_msgs/msg/JointState']
Header = TYPESTORE.types['std_msgs/msg/Header']
Stamp = TYPESTORE.types['builtin_interfaces/msg/Time']
String = TYPESTORE.types['std_msgs/msg/String']
STORAGES = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}
ARM = ['joint%d' % i for i in range(1, 8)]
T0_NS = 1700000000 * 10 ** 9  # a realistic epoch for the header stamps


@pytest.fixture(scope='module')
def model():
    return rbd.Model.from_urdf_file(demo_urdf_path())


class Motion:
    """Sums of sines per joint: exact q, qd, qdd at any time [s]."""

    def __init__(self, names, seed=0):
        rng = np.random.default_rng(seed)
        self.names = list(names)
        k = len(names)
        self.amp = rng.uniform(0.1, 0.4, (k, 2))
        self.freq = rng.uniform(0.3, 1.5, (k, 2))
        self.phase = rng.uniform(0, 2 * np.pi, (k, 2))
        self.offset = rng.uniform(-0.5, 0.5, k)
        prismatic = [i for i, n in enumerate(names) if 'finger' in n]
        self.amp[prismatic] *= 0.04  # the fingers move 0..0.04 m
        self.offset[prismatic] = 0.02

    def __call__(self, t, derivative=0):
        w = 2 * np.pi * self.freq
        arg = w[None] * np.asarray(t)[:, None, None] + self.phase[None]
        terms = [np.sin(arg), w * np.cos(arg), -w ** 2 * np.sin(arg)][derivative]
        value = (self.amp[None] * terms).sum(axis=2)
        return value + self.offset if derivative == 0 else value


def joint_state(stamp_ns, names, position, velocity=(), effort=()):
    sec, nanosec = divmod(int(stamp_ns), 10 ** 9)
    return JointState(header=Header(stamp=Stamp(sec=sec, nanosec=nanosec), frame_id=''),
                      name=list(names), position=np.asarray(position, dtype=float),
                      velocity=np.asarray(velocity, dtype=float),
                      effort=np.asarray(effort, dtype=float))


def write_bag(path, messages, storage='mcap', topic='/joint_states', msgtype=None):
    """``messages``: ``(receive time [ns], message)``, written on ``topic``."""
    msgtype = msgtype or JointState.__msgtype__
    with Writer(path, version=9, storage_plugin=STORAGES[storage]) as writer:
        conn = writer.add_connection(topic, msgtype, typestore=TYPESTORE)
        for received, msg in messages:
            writer.write(conn, int(received), TYPESTORE.serialize_cdr(msg, msgtype))
    return str(path)


def read_csv(path):
    with open(path) as stream:
        rows = list(csv.reader(stream))
    return rows[0], np.array(rows[1:], dtype=float)


def column(header, data, name):
    return data[:, header.index(name)]


def table(header, data, prefix, names):
    return np.column_stack([column(header, data, '%s.%s' % (prefix, n)) for n in names])


def run_cli(args):
    """``python -m rbd_dynamics ...`` in a process of its own: (exit code, stdout, stderr)."""
    env = dict(os.environ, RBD_DYNAMICS_DISABLE_JIT='1')  # input checks: no compiled path
    proc = subprocess.run([sys.executable, '-m', 'rbd_dynamics'] + list(args), env=env,
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def two_publishers(model, rate_arm=500.0, rate_gripper=100.0, duration=2.0, efforts=True):
    """
    Record two drivers publishing joint states.

    An arm driver (joint1..7, velocities and efforts) and a gripper driver (the finger,
    its mimic and a joint of another robot; no velocities), interleaved as a bag has them.
    """
    motion = Motion(model.joint_names)
    gripper = ['left_finger_joint', 'right_finger_joint', 'other_robot_joint']
    messages = []
    t_arm = np.arange(0.0, duration, 1.0 / rate_arm)
    q, qd = motion(t_arm), motion(t_arm, 1)
    tau = rbd.rnea(model, q, qd, motion(t_arm, 2))
    for k, t in enumerate(t_arm):
        stamp = T0_NS + int(round(t * 1e9))
        messages.append((stamp + 200000, joint_state(
            stamp, ARM, q[k, :7], qd[k, :7], tau[k, :7] + 0.5 if efforts else ())))
    t_grip = np.arange(0.0013, duration, 1.0 / rate_gripper)
    finger = motion(t_grip)[:, 7]
    for k, t in enumerate(t_grip):
        stamp = T0_NS + int(round(t * 1e9))
        messages.append((stamp + 300000, joint_state(stamp, gripper,
                                                     [finger[k], finger[k], 1.0])))
    messages.sort(key=lambda m: m[0])
    return motion, messages


@pytest.mark.parametrize('storage', sorted(STORAGES))
def test_bag_merges_publishers_and_writes_contract_columns(model, tmp_path, capsys, storage):
    motion, messages = two_publishers(model)
    bag = write_bag(tmp_path / 'bag', messages, storage)
    out = tmp_path / 'out'
    assert cli.main(['bag', demo_urdf_path(), bag, '--out', str(out)]) == 0
    captured = capsys.readouterr()
    names = model.joint_names
    header, data = read_csv(out / 'torques.csv')
    expected = ['time'] + ['%s.%s' % (p, n) for p in ('q', 'qd', 'qdd', 'tau') for n in names]
    expected += ['effort.%s' % n for n in ARM]  # the gripper recorded no effort
    assert header == expected
    # Rows start once every joint has been seen: the first gripper message at 1.3 ms.
    assert len(data) > 0.9 * (500 + 100) * 2
    assert np.all(np.diff(column(header, data, 'time')) > 0)
    q, qd, qdd = (table(header, data, p, names) for p in ('q', 'qd', 'qdd'))
    tau = table(header, data, 'tau', names)
    np.testing.assert_allclose(tau, rbd.rnea(model, q, qd, qdd), rtol=1e-9, atol=1e-9)
    # Merged by name: positions are the motion at each row's time (interpolated between
    # each joint's own samples).
    t = column(header, data, 'time') + 0.0013
    np.testing.assert_allclose(q[:, :7], motion(t)[:, :7], atol=1e-4)
    np.testing.assert_allclose(q[:, 7], motion(t)[:, 7], atol=1e-4)
    # The recorded efforts are the model's torques + 0.5: the RMS difference is 0.5 there.
    for name in names:
        assert name in captured.out
    assert 'other_robot_joint' in captured.err  # ignored, and said so
    assert 'right_finger_joint' not in captured.err  # a mimic joint is not unknown
    lines = {line.split()[0]: line.split() for line in captured.out.splitlines() if line}
    assert float(lines['joint1'][-1]) == pytest.approx(0.5, abs=0.05)
    assert lines['left_finger_joint'][-1] == '-'
    check_png(out / 'torques.png', len(names))


#: The arm's efforts per unit of a driver's (one joint turning the other way).
SCALE = np.array([12.0, 15.0, -9.5, 7.0, 3.0, 2.5, 1.5])


def scaled_bag(path, model):
    """Record :func:`two_publishers`, the arm's efforts divided by :data:`SCALE`."""
    _, messages = two_publishers(model)
    for _, msg in messages:
        if len(msg.effort):
            msg.effort = np.asarray(msg.effort) / SCALE
    return write_bag(path, messages)


def test_bag_converts_efforts_in_the_drivers_units(model, tmp_path, capsys):
    """``--effort-scale FILE``: efforts recorded divided by a scale compare as joint torques."""
    scale = SCALE
    bag = scaled_bag(tmp_path / 'bag', model)
    scale_file = tmp_path / 'scale.yaml'
    scale_file.write_text('/**:\n  ros__parameters:\n    joints: [%s]\n    drive:\n'
                          '      effort_scale: [%s]\n'
                          % (', '.join(ARM), ', '.join('%g' % k for k in scale)))
    out = tmp_path / 'out'
    assert cli.main(['bag', demo_urdf_path(), bag, '--effort-scale', str(scale_file),
                     '--out', str(out)]) == 0
    captured = capsys.readouterr()
    assert 'efforts converted to joint torques by drive.effort_scale' in captured.out
    header, data = read_csv(out / 'torques.csv')
    tau, effort = table(header, data, 'tau', ARM), table(header, data, 'effort', ARM)
    # the recorded efforts were the model's torques + 0.5 before the division
    interior = slice(len(tau) // 10, -len(tau) // 10)
    assert np.abs(effort - tau - 0.5)[interior].max() < 0.05
    # a scale file for joints the description does not have: exit 1, nothing written
    scale_file.write_text('/**:\n  ros__parameters:\n    joints: [a, b]\n    drive:\n'
                          '      effort_scale: [1.0, 2.0]\n')
    code, _, err = run_cli(['bag', demo_urdf_path(), bag, '--effort-scale', str(scale_file),
                            '--out', str(tmp_path / 'refused')])
    assert code == 1 and 'Traceback' not in err and 'a, b' in err, err
    assert not os.path.exists(tmp_path / 'refused')


def test_bag_with_a_drive_file_adds_its_friction_and_converts_by_its_scale(
        model, tmp_path, capsys):
    """``--params-file drive.yaml``: the drive's torques added, efforts converted by its scale."""
    scale = SCALE
    viscous = np.linspace(0.5, 2.0, 7)
    coulomb = np.linspace(1.0, 0.3, 7)
    armature = np.linspace(0.2, 0.05, 7)
    bag = scaled_bag(tmp_path / 'bag', model)
    drive_file = tmp_path / 'drive.yaml'
    drive_file.write_text(
        '/**:\n  ros__parameters:\n    joints: [%s]\n    drive:\n      effort_scale: [%s]\n'
        '      viscous: [%s]\n      coulomb: [%s]\n      armature: [%s]\n'
        '      coulomb_velocity: 0.05\n      effort_offset: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]\n'
        % tuple(', '.join('%r' % float(v) for v in values) if k else ', '.join(values)
                for k, values in enumerate((ARM, scale, viscous, coulomb, armature))))
    out = tmp_path / 'out'
    assert cli.main(['bag', demo_urdf_path(), bag, '--params-file', str(drive_file),
                     '--out', str(out)]) == 0
    assert 'torques with the drive of' in capsys.readouterr().out
    header, data = read_csv(out / 'torques.csv')
    names = model.joint_names
    q, qd, qdd = (table(header, data, p, names) for p in ('q', 'qd', 'qdd'))
    full = lambda values, rest: np.concatenate([values, [rest]])  # noqa: E731 (the finger)
    expected = rbd.rnea(model, q, qd, qdd) + rbd.drive_torques(
        qd, qdd, full(viscous, model.damping[7]), full(coulomb, model.friction[7]),
        full(armature, 0.0), 0.05)
    tau = table(header, data, 'tau', names)
    np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9)
    effort = table(header, data, 'effort', ARM)
    rigid = rbd.rnea(model, q, qd, qdd)[:, :7]
    interior = slice(len(tau) // 10, -len(tau) // 10)
    # converted to N m, and the recording's bias of 0.5 taken off
    assert np.abs(effort - rigid)[interior].max() < 0.05
    # a drive file whose scale leaves out a joint with efforts: refused, not read as N m
    partial = tmp_path / 'partial.yaml'
    partial.write_text('/**:\n  ros__parameters:\n    joints: [%s]\n    drive:\n'
                       '      effort_scale: [%s]\n'
                       % (', '.join(ARM[:6]), ', '.join('%g' % k for k in scale[:6])))
    code, _, err = run_cli(['bag', demo_urdf_path(), bag, '--params-file', str(partial),
                            '--out', str(tmp_path / 'partial')])
    assert code == 1 and 'gives no scale for joint7' in err and 'Traceback' not in err, err
    assert not os.path.exists(tmp_path / 'partial')
    # both a scale file and a drive file: which scale is meant is not guessed
    code, _, err = run_cli(['bag', demo_urdf_path(), bag, '--params-file', str(drive_file),
                            '--effort-scale', str(drive_file), '--out', str(tmp_path / 'no')])
    assert code == 1 and 'not both' in err and 'Traceback' not in err, err
    assert not os.path.exists(tmp_path / 'no')


def check_png(path, panels):
    from matplotlib import image
    picture = image.imread(str(path))
    assert picture.shape[1] == 720 and picture.shape[0] == int(80 * (1.0 + 1.3 * panels))
    assert picture.shape[2] in (3, 4)
    rgb = picture[..., :3]
    assert rgb.std() > 0.05  # not blank
    # the torque curves are drawn in matplotlib's blue
    blue = (np.abs(rgb - np.array([0.12, 0.47, 0.71])).max(axis=2) < 0.1).sum()
    assert blue > 100 * panels


@pytest.mark.parametrize('recorded_velocity', [True, False])
def test_accelerations_within_5_percent(model, tmp_path, recorded_velocity):
    """
    Accelerations from a noisy recording are within 5 % of the truth.

    500 Hz with stamp jitter, 1e-5 rad position noise; velocities exact + 1e-4 rad/s
    noise, or absent (differentiated from the positions).
    """
    rng = np.random.default_rng(1)
    motion = Motion(model.joint_names, seed=2)
    n = 2000
    t = np.arange(n) / 500.0 + rng.uniform(-5e-5, 5e-5, n)
    q = motion(t) + rng.normal(0, 1e-5, (n, model.nv))
    qd = motion(t, 1) + rng.normal(0, 1e-4, (n, model.nv))
    stamps = T0_NS + np.round(t * 1e9).astype(np.int64)
    messages = [(s, joint_state(s, model.joint_names, q[k],
                                qd[k] if recorded_velocity else ()))
                for k, s in enumerate(stamps)]
    bag = write_bag(tmp_path / 'bag', messages, 'sqlite3')
    assert cli.main(['bag', demo_urdf_path(), bag, '--out', str(tmp_path)]) == 0
    header, data = read_csv(tmp_path / 'torques.csv')
    times = column(header, data, 'time') + (stamps[0] - T0_NS) * 1e-9
    qdd = table(header, data, 'qdd', model.joint_names)
    inner = slice(50, -50)  # away from the ends (the filter's half window is 12 samples)
    truth = motion(times, 2)[inner]
    error = np.sqrt(np.mean((qdd[inner] - truth) ** 2, axis=0))
    scale = np.sqrt(np.mean(truth ** 2, axis=0))
    assert np.all(error < 0.05 * scale), error / scale
    if not recorded_velocity:
        qd_csv = table(header, data, 'qd', model.joint_names)[inner]
        assert np.all(np.sqrt(np.mean((qd_csv - motion(times, 1)[inner]) ** 2, axis=0))
                      < 0.01 * np.sqrt(np.mean(motion(times, 1)[inner] ** 2, axis=0)))


def test_gaps_split_segments_and_zero_stamps_use_receive_time(model, tmp_path, capsys):
    """
    Gaps split segments; zero stamps use the receive time.

    A 0.5 s pause: no rows inside, no derivative across it. Zero header stamps: the
    bag's receive times are used.
    """
    motion = Motion(model.joint_names, seed=3)
    t = np.concatenate([np.arange(0, 1.0, 0.002), np.arange(1.5, 2.5, 0.002)])
    messages = [(T0_NS + int(round(x * 1e9)), joint_state(0, model.joint_names, q, v))
                for x, q, v in zip(t, motion(t), motion(t, 1))]
    bag = write_bag(tmp_path / 'bag', messages)
    assert cli.main(['bag', demo_urdf_path(), bag, '--out', str(tmp_path)]) == 0
    header, data = read_csv(tmp_path / 'torques.csv')
    time = column(header, data, 'time')
    np.testing.assert_allclose(time, t, atol=1e-9)
    qdd = table(header, data, 'qdd', model.joint_names)
    # Differentiating across the pause would put a step of qd into qdd (hundreds of rad/s^2).
    assert np.abs(qdd - motion(t, 2)).max() < 1.0


def test_sample_step_and_window_ignore_drops_and_pauses():
    """One step for the derivatives and the steady rows: a drop or a pause does not move it."""
    rng = np.random.default_rng(4)
    t = np.arange(1000) * 0.002 + rng.uniform(-5e-5, 5e-5, 1000)
    assert sample_step(t) == pytest.approx((t[-1] - t[0]) / 999, rel=1e-12)  # the mean
    dropped = np.delete(t, [100, 500])
    paused = np.concatenate([t, t[-1] + 3.0 + t])
    for times in (dropped, paused):
        assert sample_step(times) == pytest.approx(0.002, rel=1e-3)
        assert half_width(times, 0.045) == half_width(t, 0.045) == 11
    assert sample_step(t[:1]) == 0.0 and half_width(t[:1], 0.05) == 0
    # a dropped sample: the derivative on the samples' own grid, as without the drop
    y = np.sin(np.arange(200) * 0.01)[:, None]
    whole = derivative(np.arange(200) * 0.002, y)
    np.testing.assert_allclose(np.delete(whole, 80, axis=0),
                               derivative(np.delete(np.arange(200) * 0.002, 80),
                                          np.delete(y, 80, axis=0)), atol=1e-3)


def test_savgol_derivative_exact_on_cubics():
    t = np.linspace(-1, 2, 301)
    y = np.column_stack([2 - t + 0.5 * t ** 2 - 0.3 * t ** 3, np.full_like(t, 4.0)])
    slope = savgol_derivative(y, t[1] - t[0], 7)
    np.testing.assert_allclose(slope[:, 0], -1 + t - 0.9 * t ** 2, atol=1e-9)
    np.testing.assert_allclose(slope[:, 1], 0, atol=1e-9)
    short = savgol_derivative(y[:4], t[1] - t[0], 7)  # window shrinks to the 4 samples
    assert np.all(np.isfinite(short))


# Trajectories -----------------------------------------------------------------------------


def trajectory_yaml(names, times, q, qd, qdd, effort=None):
    """Write the text ``ros2 topic echo --once`` prints for a JointTrajectory."""
    doc = {'header': {'stamp': {'sec': 0, 'nanosec': 0}, 'frame_id': ''},
           'joint_names': list(names), 'points': []}
    for k, t in enumerate(times):
        sec, nanosec = divmod(int(round(t * 1e9)), 10 ** 9)
        doc['points'].append({
            'positions': q[k].tolist(), 'velocities': qd[k].tolist(),
            'accelerations': qdd[k].tolist(),
            'effort': [] if effort is None else effort[k].tolist(),
            'time_from_start': {'sec': sec, 'nanosec': nanosec}})
    return yaml.safe_dump(doc, default_flow_style=False, sort_keys=False) + '---\n'


def test_trajectory_feasible(model, tmp_path, capsys):
    names = ARM  # the finger is not in the message: held at rest at --hold's value
    times = np.linspace(0.0, 2.0, 41)
    motion = Motion(names, seed=4)
    q, qd, qdd = motion(times), motion(times, 1), motion(times, 2)
    path = tmp_path / 'plan.yaml'
    path.write_text(trajectory_yaml(names, times, q, qd, qdd))
    code = cli.main(['trajectory', demo_urdf_path(), str(path), '--out', str(tmp_path),
                     '--hold', 'left_finger_joint=0.01'])
    out = capsys.readouterr()
    assert code == 0
    assert 'feasible' in out.out and 'exceeds' not in out.out
    assert 'left_finger_joint = 0.01' in out.err
    header, data = read_csv(tmp_path / 'torques.csv')
    np.testing.assert_allclose(column(header, data, 'time'), times, atol=1e-9)
    full = np.column_stack([q, np.full(len(times), 0.01)])
    zero = np.zeros((len(times), 1))
    expected = rbd.rnea(model, full, np.column_stack([qd, zero]),
                        np.column_stack([qdd, zero]))
    np.testing.assert_allclose(table(header, data, 'tau', model.joint_names), expected,
                               rtol=1e-9, atol=1e-9)
    check_png(tmp_path / 'torques.png', model.nv)


def test_trajectory_over_the_limits_names_the_first_excess(model, tmp_path):
    names = list(model.joint_names)
    times = np.linspace(0.0, 1.0, 21)
    motion = Motion(names, seed=5)
    q, qd, qdd = motion(times), motion(times, 1), motion(times, 2)
    qdd[12:, 3] += 400.0  # joint4 (limit 176 N m) is pushed hard from point 12 on
    tau = rbd.rnea(model, q, qd, qdd)
    over = np.abs(tau) > model.effort_limits
    row = np.flatnonzero(over.any(axis=1))[0]
    joint = names[int(np.flatnonzero(over[row])[0])]  # the first in joint order, as the node
    path = tmp_path / 'plan.yaml'
    path.write_text(trajectory_yaml(names, times, q, qd, qdd, effort=tau))
    code, out, err = run_cli(['trajectory', demo_urdf_path(), str(path), '--out',
                              str(tmp_path)])
    assert code == 3, err
    assert 'exceeds' in out and joint in out.split('exceeds')[1]
    assert ('time_from_start %.9g s' % times[row]) in out
    header, _ = read_csv(tmp_path / 'torques.csv')
    assert header[-len(names):] == ['effort.%s' % n for n in names]


# Bad input --------------------------------------------------------------------------------


@pytest.fixture(scope='module')
def bad_inputs(tmp_path_factory, model):
    root = tmp_path_factory.mktemp('bad')
    text = root / 'notes.mcap'
    text.write_text('not a bag\n')
    no_meta = root / 'empty_dir'
    no_meta.mkdir()
    string_bag = write_bag(root / 'strings', [(T0_NS, String(data='hello'))],
                           msgtype=String.__msgtype__)
    other_topic = write_bag(root / 'other', [(T0_NS, joint_state(T0_NS, ARM, np.zeros(7)))],
                            topic='/arm/joint_states')
    strangers = write_bag(root / 'strangers', [
        (T0_NS + k * 10 ** 6, joint_state(T0_NS + k * 10 ** 6, ['a', 'b'], [0.0, 1.0]))
        for k in range(10)], 'sqlite3')
    not_traj = root / 'params.yaml'
    not_traj.write_text('rbd_dynamics:\n  ros__parameters:\n    joints: []\n')
    broken = root / 'broken.yaml'
    broken.write_text('joint_names: [joint1\npoints: {\n')
    short = root / 'short.yaml'
    short.write_text(trajectory_yaml(['joint1', 'joint2'], [0.0], np.zeros((1, 1)),
                                     np.zeros((1, 2)), np.zeros((1, 2))))
    return {
        'text file': (['bag', str(text)], 'not a readable rosbag2'),
        'directory': (['bag', str(no_meta)], 'no metadata.yaml and no .db3 or .mcap file'),
        'missing file': (['bag', str(root / 'nothing')], 'does not exist'),
        'missing topic': (['bag', other_topic], 'has no topic /joint_states'),
        'other type': (['bag', string_bag], 'std_msgs/msg/String'),
        'unknown joints': (['bag', strangers], "none of the model's joints"),
        'not a trajectory': (['trajectory', str(not_traj)], 'not a trajectory_msgs'),
        'not yaml': (['trajectory', str(broken)], 'not YAML'),
        'short positions': (['trajectory', str(short)], 'positions has 1 entries'),
    }


@pytest.mark.parametrize('case', ['text file', 'directory', 'missing file', 'missing topic',
                                  'other type', 'unknown joints', 'not a trajectory',
                                  'not yaml', 'short positions'])
def test_bad_input_is_named_without_traceback(bad_inputs, tmp_path, case):
    (command, path), expected = bad_inputs[case]
    code, out, err = run_cli([command, demo_urdf_path(), path, '--out', str(tmp_path)])
    assert code == 1
    assert 'Traceback' not in err
    assert expected in err
    assert not (tmp_path / 'torques.csv').exists()


def test_bad_robot_and_arguments(tmp_path):
    code, _, err = run_cli(['bag', str(tmp_path / 'missing.urdf'), str(tmp_path)])
    assert code == 1 and 'missing.urdf' in err and 'Traceback' not in err
    code, _, err = run_cli(['trajectory', demo_urdf_path(), str(tmp_path), '--hold',
                            'joint9=1'])
    assert code == 1 and 'joint9' in err and 'Traceback' not in err


def test_multi_dof_joints_are_refused(tmp_path):
    path = tmp_path / 'floating.urdf'
    path.write_text(floating_urdf(demo_urdf_path()))
    code, _, err = run_cli(['bag', str(path), str(tmp_path)])
    assert code == 1 and 'Traceback' not in err
    assert "joint 'root_joint' is floating (7 coordinates)" in err and 'root_link' in err, err


def test_one_state_command_unchanged():
    code, out, err = run_cli(['--q'] + ['0.1'] * 8)
    assert code == 0, err
    assert 'tau_gravity' in out and 'joint7' in out


def test_states_out_of_range_are_refused_not_nan(tmp_path, capsys):
    names = ['joint1', 'joint2']
    path = tmp_path / 'absurd.yaml'
    path.write_text(trajectory_yaml(names, [0.0, 1.0], np.zeros((2, 2)),
                                    np.full((2, 2), 1e200), np.zeros((2, 2))))
    assert cli.main(['trajectory', demo_urdf_path(), str(path), '--out', str(tmp_path)]) == 1
    assert 'not finite' in capsys.readouterr().err
    assert not (tmp_path / 'torques.csv').exists()
