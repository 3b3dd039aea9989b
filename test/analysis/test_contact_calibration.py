"""
``python -m rbd_dynamics contact``: thresholds from a recorded free motion with one transient.

The demo arm's efforts along a motion are its model's (with a drive of known friction, a scale
and a bias, all in the parameters file, as a current-reporting driver's recording would be)
plus noise, and one abrupt stop: a torque on joint2 that nothing models, for 20 ms. The
thresholds must not follow that one transient (they are those of the same motion without it),
the transient must be named with its time, and the written file must be one the node takes.
"""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.control.config import Config
from rbd_dynamics.control.setup import Setup
from rbd_dynamics.resources import demo_urdf_path

yaml = pytest.importorskip('yaml')
pytest.importorskip('rosbags')

from support.identification import efforts, joint_limits, Motion, \
    write_joint_states  # noqa: E402

SCALE = np.array([12.0, 15.0, -9.5, 7.0, 3.0, 2.5, 1.5, 40.0])
OFFSET = np.array([0.4, -1.9, 0.7, 0.3, -0.2, 0.1, 0.05, 0.0])
VISCOUS = np.linspace(0.5, 1.5, 8)
COULOMB = np.linspace(1.0, 0.2, 8)
STOP = 7.0  # s: the transient's start
JOINT2 = 1


def run(args):
    proc = subprocess.run([sys.executable, '-m', 'rbd_dynamics', 'contact'] + list(args),
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope='module')
def recorded(tmp_path_factory):
    """Return ``{'stop': bag, 'smooth': bag, 'params': file, 'model': model}``."""
    root = tmp_path_factory.mktemp('contact')
    with open(demo_urdf_path()) as stream:
        text = stream.read()
    model = rbd.Model.from_urdf(text, compiled=False)
    t = np.arange(0.0, 15.0, 0.002)
    q, qd, qdd = Motion(model, joint_limits(text), seed=5)(t)
    tau = efforts(model, q, qd, qdd, VISCOUS, COULOMB)
    rng = np.random.default_rng(7)
    tau += 0.01 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
    out = {'model': model, 'rms': np.sqrt((tau ** 2).mean(axis=0))}
    stop = (t >= STOP) & (t < STOP + 0.02)
    for name, extra in (('smooth', 0.0), ('stop', 15.0)):
        measured = tau.copy()
        measured[stop, JOINT2] += extra
        out[name] = write_joint_states(root / name, model.joint_names, t, q, qd,
                                       (measured + OFFSET) / SCALE)
    params = root / 'drive.yaml'
    params.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
        'joints': list(model.joint_names),
        'drive': {'viscous': VISCOUS.tolist(), 'coulomb': COULOMB.tolist(),
                  'coulomb_velocity': 0.01, 'effort_scale': SCALE.tolist(),
                  'effort_offset': OFFSET.tolist()}}}}))
    out['params'] = str(params)
    return out


def thresholds(path):
    with open(path) as stream:
        return yaml.safe_load(stream)['/**']['ros__parameters']


def test_one_stop_transient_does_not_set_the_thresholds(recorded, tmp_path):
    model = recorded['model']
    outputs = {}
    for name in ('smooth', 'stop'):
        code, out, err = run([demo_urdf_path(), recorded[name], '--params-file',
                              recorded['params'], '--gain', '50', '--out',
                              str(tmp_path / name)])
        assert code == 0, err
        assert 'Traceback' not in err
        outputs[name] = out
    smooth = thresholds(tmp_path / 'smooth' / 'contact.yaml')['contact']
    stop = thresholds(tmp_path / 'stop' / 'contact.yaml')['contact']
    assert smooth['observer'] is True and stop['gain'] == 50.0
    # the model, its drive, scale and bias are exact: what is left is the noise (1 % of each
    # joint's RMS effort), far below the efforts; the stop's 15 N m on joint2 changes no
    # threshold by more than a tenth
    assert (np.array(smooth['threshold']) < 0.15 * recorded['rms']).all(), \
        (smooth['threshold'], recorded['rms'])
    np.testing.assert_allclose(stop['threshold'], smooth['threshold'], rtol=0.1)
    # the transient is named with its time, and the node would flag it (and only it)
    line = re.search(r'left out of the thresholds.*?: (.*)', outputs['stop']).group(1)
    assert line.startswith('joint2 '), line
    at = float(re.search(r'joint2 [0-9.e+-]+ at ([0-9.]+) s', line).group(1))
    assert STOP - 0.01 <= at <= STOP + 0.2, line
    assert 'left out' not in outputs['smooth']
    over = re.search(r'^ +50 +[0-9.]+ ms +(\d+)', outputs['stop'], re.M)
    assert over and int(over.group(1)) > 0, outputs['stop']
    assert re.search(r'^ +50 +[0-9.]+ ms +0 ', outputs['smooth'], re.M), outputs['smooth']
    # the node takes the written file beside the drive file, which keeps its joints and order
    assert 'joints' not in thresholds(tmp_path / 'stop' / 'contact.yaml')
    params = {}
    for path in (recorded['params'], str(tmp_path / 'stop' / 'contact.yaml')):
        flat = thresholds(path)

        def walk(tree, prefix=''):
            for key, value in tree.items():
                if isinstance(value, dict):
                    walk(value, prefix + key + '.')
                else:
                    params[prefix + key] = value
        walk(flat)
    setup = Setup(model, Config.from_parameters(params))
    assert setup.observer_on and setup.threshold is not None
    np.testing.assert_allclose(setup.threshold, stop['threshold'])
    assert os.path.exists(tmp_path / 'stop' / 'contact.png')


def test_gains_are_compared_and_the_soonest_written(recorded, tmp_path):
    code, out, err = run([demo_urdf_path(), recorded['smooth'], '--params-file',
                          recorded['params'], '--gain', '10', '100', '--out', str(tmp_path)])
    assert code == 0, err
    delays = {float(g): float(d) for g, d in re.findall(r'^ +(\d+) +([0-9.]+) ms', out, re.M)}
    assert set(delays) == {10.0, 100.0}, out
    written = thresholds(tmp_path / 'contact.yaml')['contact']['gain']
    assert delays[written] == min(delays.values()), out
    assert re.search(r'^ +%g .*<- written$' % written, out, re.M), out


@pytest.mark.parametrize('args, message', [
    (['--gain', '0'], '--gain must be positive'),
    (['--margin', '0.5'], '--margin must be a number >= 1'),
    (['--params-file', 'missing.yaml'], '--params-file missing.yaml'),
])
def test_bad_options_exit_1_and_write_nothing(recorded, tmp_path, args, message):
    code, _, err = run([demo_urdf_path(), recorded['smooth'], '--out', str(tmp_path / 'out')]
                       + args)
    assert code == 1 and message in err and 'Traceback' not in err, err
    assert not os.path.exists(tmp_path / 'out')
