"""
Computed torque with an identified model, in the loop over real topics.

The simulated driver runs the demo arm as it really is (every link's mass off by 15-30 %, its
centre of mass moved by 1-2 cm, viscous and Coulomb friction the description does not know,
the friction hard: a joint at rest sticks). An excitation designed by ``excite`` is played on
that arm (in this process, without ROS, to keep the test short), recorded to a bag with 1 %
effort noise and identified as ``python -m rbd_dynamics identify`` does it (in this process),
validated on the last fifth of the excitation without noise; then the node tracks the 0.5 Hz
swings with computed torque, once with the description and its drive and once with
``identified.urdf`` and ``drive.yaml``.
"""

import numpy as np
import pytest

pytest.importorskip('mujoco')
pytest.importorskip('scipy')
pytest.importorskip('cvxpy')
rclpy = pytest.importorskip('rclpy')
yaml = pytest.importorskip('yaml')

import rbd_dynamics as rbd  # noqa: E402
from rbd_dynamics.analysis.differentiate import DEFAULT_WINDOW  # noqa: E402
from rbd_dynamics.cli import identify as identify_cli  # noqa: E402
from rbd_dynamics import excitation as excite  # noqa: E402, I100
from rbd_dynamics.identification import DEFAULT_MIN_SPEED, recordings  # noqa: E402
from rbd_dynamics.resources import demo_urdf_path  # noqa: E402
from support.identification import write_joint_states  # noqa: E402
from support.sim import JOINTS, Q0  # noqa: E402
from support.true_arm import play_excitation, true_arm  # noqa: E402

SEED = 3
AMPLITUDE = [0.2, 0.15, 0.2, 0.15, 0.2, 0.2, 0.2, 0.0]
SECONDS = 3.0


def track(loop, ns, node_params, sim_params):
    """Track the swings for :data:`SECONDS`; the RMS error of each arm joint [rad]."""
    trajectory = {'center': Q0.tolist(), 'amplitude': AMPLITUDE, 'frequency': 0.5}
    params = {'command_output': 'feedforward', 'kp': [400.0] * 8, 'kd': [40.0] * 8,
              'drive.compensate': True, 'drive.velocity': 'desired'}
    params.update(node_params)
    run = loop(ns, params, sim_params, trajectory=trajectory)
    t, q = run.run_until(SECONDS)
    assert len(t) and t[-1] >= SECONDS, run.logs()
    desired = Q0 + np.array(AMPLITUDE) * (1 - np.cos(np.pi * t[:, None]))
    assert np.abs(q[:, :7] - Q0[:7]).max() > 0.3  # the arm really moved
    return np.sqrt(np.mean((q - desired)[:, :7] ** 2, axis=0))


def test_identified_model_tracks_five_times_better(loop, tmp_path, capsys):
    with open(demo_urdf_path()) as stream:
        urdf = stream.read()
    model = rbd.Model.from_urdf(urdf)
    assert model.joint_names == tuple(JOINTS)
    sim_params, true_urdf = true_arm(urdf, SEED)
    excitation = excite.design(model, urdf, duration=10.0, start=Q0, harmonics=4,
                               iterations=20)
    t, q, qd, effort = play_excitation(excitation, model, true_urdf, sim_params)
    assert sim_params['drive.hard_friction']
    rng = np.random.default_rng(SEED)
    cut = 4 * len(t) // 5
    noisy = effort + 0.01 * np.sqrt((effort ** 2).mean(axis=0)) * rng.normal(size=effort.shape)
    fit = write_joint_states(str(tmp_path / 'fit'), model.joint_names, t[:cut], q[:cut],
                             qd[:cut], noisy[:cut])
    check = write_joint_states(str(tmp_path / 'check'), model.joint_names, t[cut:], q[cut:],
                               qd[cut:], effort[cut:])
    out = tmp_path / 'identified'
    code = identify_cli.main([demo_urdf_path(), fit, '--validate', check, '--out', str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert 'moving states only' in stdout

    # validation: the efforts of the states where each joint moves steadily (a sticking
    # joint's friction is anywhere within +-coulomb: no model of the state predicts it)
    table = np.loadtxt(out / 'identification.csv', delimiter=',', skiprows=1)
    measured, described, identified = table[:, 1::3], table[:, 2::3], table[:, 3::3]
    recording = recordings.read_recording(check, '/joint_states', model)
    assert np.allclose(recording.effort, measured)
    keep = recordings.steady(model, recording, DEFAULT_MIN_SPEED, DEFAULT_WINDOW)
    assert keep[:, :7].mean() > 0.5  # the arm moved most of the time
    rms_effort = np.sqrt((measured ** 2).mean())
    errors = {k: np.sqrt(((v - measured)[keep] ** 2).mean()) / rms_effort
              for k, v in (('description', described), ('identified', identified))}
    everywhere = np.sqrt(((identified - measured) ** 2).mean()) / rms_effort
    print('validation RMS error, %% of the RMS effort: moving states: description %.2f, '
          'identified %.3f; all states: identified %.2f'
          % (100 * errors['description'], 100 * errors['identified'], 100 * everywhere))
    assert errors['identified'] <= 0.01, errors
    assert 10 * errors['identified'] <= errors['description'], errors
    with open(out / 'drive.yaml') as stream:
        drive = yaml.safe_load(stream)['/**']['ros__parameters']
    assert drive['joints'] == JOINTS
    rms = {'nominal': track(loop, '/identified_loop_nominal', {}, sim_params),
           'identified': track(loop, '/identified_loop_identified',
                               {'robot_description': (out / 'identified.urdf').read_text(),
                                **{'drive.%s' % k: v for k, v in drive['drive'].items()}},
                               sim_params)}
    print('tracking RMS [mrad] with the description %s, identified %s'
          % tuple(np.array2string(1e3 * rms[k], precision=3) for k in rms))
    total = {k: np.sqrt(np.mean(v ** 2)) for k, v in rms.items()}
    assert total['nominal'] >= 5.0 * total['identified'], total
