"""
``python -m rbd_dynamics excite``: the excitation stays within every limit, at rest at both ends.

The limits are read here from the URDF with ElementTree (not with the package's reader), on a
demo arm whose velocity and effort limits are made tight enough to bind.
"""

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.resources import demo_urdf_path

pytest.importorskip('scipy')
pytest.importorskip('yaml')

from rbd_dynamics.analysis.planned import read_trajectory  # noqa: E402, I100

VELOCITY = 0.8  # rad/s on the arm joints (the demo arm's own: 1.7)
ACCELERATION = 2.5  # rad/s^2 and m/s^2
MARGIN = 0.1
EFFORT = 15.0  # N m on joint2 and joint4 (the demo arm's: 320 and 176)


def run_excite(args):
    env = dict(os.environ, RBD_DYNAMICS_DISABLE_JIT='1')  # short runs: no compilation
    proc = subprocess.run([sys.executable, '-m', 'rbd_dynamics', 'excite'] + list(args),
                          env=env, capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope='module')
def tight_arm(tmp_path_factory):
    """
    Return the demo arm with tight velocity limits and effort limits, and the file's path.

    The effort limits of joint2 and joint4 are :data:`EFFORT`, about what accelerating the
    arm at those bounds takes, so the design presses on them.
    """
    tree = ET.parse(demo_urdf_path())
    for element in tree.getroot().iter('joint'):
        limit = element.find('limit')
        if limit is None or element.get('type') != 'revolute':
            continue
        limit.set('velocity', repr(VELOCITY))
        if element.get('name') in ('joint2', 'joint4'):
            limit.set('effort', repr(EFFORT))
    path = tmp_path_factory.mktemp('tight') / 'tight_arm.urdf'
    tree.write(path)
    return path


def limits_of(path, names):
    """``(lower, upper, velocity, effort)`` per joint of ``names``, from the file."""
    by_name = {j.get('name'): j.find('limit') for j in ET.parse(path).getroot().iter('joint')}
    return [np.array([float(by_name[n].get(key)) for n in names])
            for key in ('lower', 'upper', 'velocity', 'effort')]


def design_args(path, out, iterations):
    return [str(path), '--duration', '6', '--harmonics', '3', '--iterations', str(iterations),
            '--acceleration', str(ACCELERATION), '--out', str(out)]


@pytest.fixture(scope='module')
def designed(tight_arm, tmp_path_factory):
    """Return ``(exit code, stdout, stderr, output directory)`` of one design on the arm."""
    out = tmp_path_factory.mktemp('designed')
    return run_excite(design_args(tight_arm, out, 25)) + (out,)


def condition_of(out):
    return float(re.search(r'condition number ([0-9.e+]+)', out).group(1))


def test_excitation_within_every_limit_at_rest_at_both_ends(tight_arm, designed):
    code, out, err, tmp_path = designed
    assert code == 0, err
    assert 'excite: iteration' in err  # the progress line
    cond = condition_of(out)
    assert 'duration 6 s' in out
    trajectory = read_trajectory(str(tmp_path / 'excitation.yaml'))
    model = rbd.Model.from_urdf_file(str(tight_arm), compiled=False)
    assert trajectory.joint_names == model.joint_names
    t, q, qd, qdd = (trajectory.time, trajectory.positions, trajectory.velocities,
                     trajectory.accelerations)
    assert t[0] == 0.0 and abs(t[-1] - 6.0) < 1e-9
    assert np.diff(t).max() <= 0.01 + 1e-9
    lower, upper, velocity, effort = limits_of(tight_arm, model.joint_names)
    start = 0.5 * (lower + upper)
    for k in (0, -1):
        np.testing.assert_allclose(q[k], start, atol=1e-12)
        assert np.abs(qd[k]).max() < 1e-12 and np.abs(qdd[k]).max() < 1e-12
    # near the ends too: the series leaves and reaches the start pose smoothly
    assert np.abs(qd[1]).max() < 1e-2 and np.abs(qd[-2]).max() < 1e-2
    keep = MARGIN * (upper - lower)
    assert np.all(q >= lower + keep - 1e-12) and np.all(q <= upper - keep + 1e-12)
    assert np.all(np.abs(qd) <= velocity + 1e-12)
    assert np.all(np.abs(qdd) <= ACCELERATION + 1e-12)
    tau = rbd.rnea(model, q, qd, qdd) + rbd.drive_torques(qd, qdd, model.damping,
                                                          model.friction)
    assert np.all(np.abs(tau) <= effort + 1e-9), (np.abs(tau) / effort).max(axis=0)
    # the limits bind: the design uses the room it has
    arm = slice(0, 7)
    assert (np.abs(qd[:, arm]) / velocity[arm]).max() > 0.7
    assert (np.abs(tau) / effort).max() > 0.5
    # every arm joint moves, and the printed condition number is that of the motion written
    assert np.ptp(q[:, arm], axis=0).min() > 0.1
    from rbd_dynamics import excitation as excite
    from rbd_dynamics.identification import Layout
    layout = Layout(model)
    W = layout.columns(q, qd, qdd)[..., excite.excited_columns(layout)]
    assert abs(excite.condition_number(W) - cond) < 1e-3 * cond
    assert cond < 1e3


def test_optimising_lowers_the_condition_number(tight_arm, designed, tmp_path):
    """The optimiser's work shows: the design is better conditioned than its first guess."""
    code, out, err = run_excite(design_args(tight_arm, tmp_path, 0))
    # the first guess alone is too poor for identify: refused, with its condition number
    assert code == 3, err
    assert designed[0] == 0, designed[2]
    first, optimised = condition_of(err), condition_of(designed[1])
    assert optimised < 0.5 * first, (first, optimised)


def test_a_motion_identify_would_refuse_is_not_written(tight_arm, tmp_path):
    """A margin that leaves every joint 1 % of its range: refused, saying why; nothing written."""
    out = tmp_path / 'out'
    code, _, err = run_excite(design_args(tight_arm, out, 3) + ['--margin', '0.499'])
    assert code == 3, err
    assert 'Traceback' not in err
    reason = re.search(r'condition number ([0-9.e+]+), more than identify accepts '
                       r'\(1e\+05, --max-condition\)\. '
                       r'The optimiser reached ([0-9.e+]+) on its samples', err)
    assert reason, err
    assert float(reason.group(1)) > 1e5
    assert 'Nothing written' in err and not out.exists()
    # as identify, the limit is an option: above the design's figure, the motion is written
    limit = '%g' % (2 * float(reason.group(1)))
    code, stdout, err = run_excite(design_args(tight_arm, out, 3)
                                   + ['--margin', '0.499', '--max-condition', limit])
    assert code == 0 and (out / 'excitation.yaml').exists(), err


@pytest.mark.parametrize('args, message', [
    (['--start', '0', '0'], '--start needs 8 values'),
    (['--start', '0', '0', '0', '0', '0', '1.95', '0', '0.02'], 'outside the position limits'),
    (['--duration', '5', '--period', '2'], 'must divide the duration'),
    (['--margin', '0.7'], '--margin'),
    (['--hold', 'no_such_joint=0'], 'not independent joints of the model'),
    (['--hold', 'left_finger_joint=0.5'], 'outside its limits'),
    (['--hold', 'joint1=nan'], 'finite numbers'),
])
def test_bad_input_exits_1_and_writes_nothing(tmp_path, args, message):
    code, out, err = run_excite([demo_urdf_path(), '--out', str(tmp_path / 'out')] + args)
    assert code == 1, (out, err)
    assert message in err and 'Traceback' not in err
    assert not os.path.exists(tmp_path / 'out' / 'excitation.yaml')


def test_a_held_joint_stays_where_it_is(tmp_path):
    """
    ``--hold``: the joint stays at its value, at rest; the others move as designed.

    The file still names every joint (a JointTrajectoryController takes whole goals), and the
    recording of that motion is what ``identify`` holds as standing still.
    """
    code, out, err = run_excite([demo_urdf_path(), '--duration', '4', '--harmonics', '2',
                                 '--iterations', '2', '--hold', 'left_finger_joint=0.015',
                                 '--start', '0', '0.3', '0', '-0.8', '0', '0.6', '0', '0',
                                 '--out', str(tmp_path)])
    assert code == 0, err
    assert 'held (constant in excitation.yaml): left_finger_joint at 0.015' in out
    planned = read_trajectory(str(tmp_path / 'excitation.yaml'))
    names, q, qd, qdd = (planned.joint_names, planned.positions, planned.velocities,
                         planned.accelerations)
    finger = list(names).index('left_finger_joint')
    assert len(names) == 8 and np.all(q[:, finger] == 0.015)
    assert not np.any(qd[:, finger]) and not np.any(qdd[:, finger])
    moving = np.ptp(q, axis=0)
    assert np.all(np.delete(moving, finger) > 0.05), moving
    assert np.allclose(q[0], [0, 0.3, 0, -0.8, 0, 0.6, 0, 0.015])


def test_an_unreadable_description_exits_1(tmp_path):
    code, _, err = run_excite([str(tmp_path / 'missing.urdf'), '--out', str(tmp_path)])
    assert code == 1 and 'cannot read' in err and 'Traceback' not in err


def test_excite_and_identify_share_the_base_parameters(tight_arm):
    """
    The motion ``excite`` designs conditions the columns ``identify`` fits.

    The design's layout is the one ``identify`` builds for the same model and friction width
    (:class:`~rbd_dynamics.identification.Layout`): the same columns, the same base columns,
    the same combinations ``K`` folded into them.
    """
    from rbd_dynamics import excitation as excite
    from rbd_dynamics.identification import Layout
    model = rbd.Model.from_urdf_file(tight_arm, compiled=False)
    result = excite.design(model, open(tight_arm).read(), duration=2.0, harmonics=2,
                           iterations=1)
    fitted, designed = Layout(model), result.layout
    assert designed.names == fitted.names
    assert list(designed.base) == list(fitted.base)
    assert list(designed.dependent) == list(fitted.dependent)
    assert np.abs(designed.K - fitted.K).max() < 1e-9 * max(1.0, np.abs(fitted.K).max())
    # it conditions every base column but the effort offsets (constants)
    excited = [fitted.names[c] for c in excite.excited_columns(designed)]
    offsets = [n for n in (fitted.names[c] for c in fitted.base) if n.endswith('.offset')]
    assert len(offsets) == model.nv and not set(offsets) & set(excited)
    assert sorted(excited + offsets) == sorted(fitted.names[c] for c in fitted.base)
    assert result.columns == (fitted.rank - model.nv, fitted.p)
