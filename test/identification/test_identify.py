"""
Identification: ``python -m rbd_dynamics identify`` and :mod:`rbd_dynamics.identification`.

The data are synthetic: efforts of a "true" robot (the demo arm with every link's mass,
centre of mass and inertia changed, and a drive the description does not have) along sums of
sinusoids, so the parameters the identification should find are known.
"""

import os
import re
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics import identification as idf
from rbd_dynamics.cli import identify as identify_cli
from rbd_dynamics.resources import demo_urdf_path

pytest.importorskip('scipy')
pytest.importorskip('cvxpy')
rosbags = pytest.importorskip('rosbags')
yaml = pytest.importorskip('yaml')

from support.identification import efforts, joint_limits, Motion, \
    perturbed_description, write_joint_states  # noqa: E402

OUTPUTS = ('identified.urdf', 'drive.yaml', 'description.yaml', 'identification.csv',
           'identification.png')


@pytest.fixture(scope='module')
def arm():
    """Return ``(description text, nominal model, true text, true model, joint limits)``."""
    with open(demo_urdf_path()) as stream:
        text = stream.read()
    true_text = perturbed_description(text, seed=1)
    return (text, rbd.Model.from_urdf(text, compiled=False), true_text,
            rbd.Model.from_urdf(true_text, compiled=False), joint_limits(text))


def true_drive(layout, seed=5):
    """Draw viscous and Coulomb friction per joint, armature where separable, offsets."""
    rng = np.random.default_rng(seed)
    nv = layout.model.nv
    drive = {'viscous': rng.uniform(0.2, 2.0, nv), 'coulomb': rng.uniform(0.2, 2.0, nv),
             'armature': np.zeros(nv), 'offset': rng.uniform(-0.3, 0.3, nv)}
    for term, j in layout.drive:
        if term == 'armature':
            drive['armature'][j] = rng.uniform(0.01, 0.1)
    return drive


def test_noise_free_data_give_the_base_parameters_and_a_consistent_model(arm):
    text, nominal, _, _, limits = arm
    # links 3 on changed; link1 only where no motion sees it (its inertia about its
    # horizontal axes): with its izz changed, its described mass and centre of mass could
    # become inconsistent with the data, and could not stay
    true_text = perturbed_description(text, seed=1, links=nominal.body_links[2:])
    root = ET.fromstring(true_text)
    tensor = root.find("link[@name='link1']/inertial/inertia")
    for key in ('ixx', 'iyy'):
        tensor.set(key, '%.17g' % (1.2 * float(tensor.get(key))))
    true = rbd.Model.from_urdf(ET.tostring(root, encoding='unicode'), compiled=False)
    layout = idf.Layout(nominal)
    drive = true_drive(layout)
    t = np.arange(0.0, 30.0, 0.005)
    q, qd, qdd = Motion(nominal, limits, seed=3)(t)
    tau = efforts(true, q, qd, qdd, coulomb_velocity=layout.coulomb_velocity, **drive)
    x_true = np.zeros(layout.p)
    x_true[:layout.n_links] = true.inertial_parameters()
    for (term, j), c in layout.drive.items():
        x_true[c] = drive[term][j]
    stack = idf.Stack(layout).add(q, qd, qdd, tau, chunk=1000)
    result = idf.solve(stack)

    # the base parameters of the weighted least squares fit: exact
    expected = layout.base_parameters(x_true)
    assert np.abs(result.base - expected).max() <= 1e-8 * np.abs(expected).max()
    # the consistent full parameters reproduce them and the torques: the best fit has a
    # consistent completion, and the solve finds it (not a compromise with the description)
    assert result.solver['exact'] and result.solver['status'] == 'optimal'
    assert np.abs(layout.base_parameters(result.x) - expected).max() \
        < 1e-6 * np.abs(expected).max()
    # every written link is physically consistent, and so is every body
    own = np.array(list(result.own_link_parameters().values()))
    assert (idf.consistency_margin(own) >= -1e-12).all()  # 0: rounding on the edge
    assert (idf.consistency_margin(result.body_parameters()) >= -1e-12).all()
    # where no motion can see a parameter, the description's value stays
    prior = layout.prior()
    silent = [10 * nominal.body_links.index(link) + idf.PARAMETER_NAMES.index(name)
              for link, names in result.undetermined.items() for name in names]
    assert len(silent) >= 9  # link1 turns about a vertical axis: only its izz counts
    assert (np.abs(result.x[silent] - prior[silent]) <= 1e-4 * layout.scale[silent]).all()
    assert not np.allclose(x_true[silent], prior[silent])  # not because the truth is there
    # the identified drive is the true one where it is identified
    for term in ('viscous', 'coulomb', 'offset'):
        assert np.allclose(result.drive[term], drive[term], rtol=1e-4, atol=1e-6), term


def test_data_an_inconsistent_robot_explains_give_the_best_consistent_fit(arm):
    """
    Efforts that only an inconsistent body explains: consistency costs effort residual.

    The efforts are ``Y x`` for parameters whose link4 has a negative mass (every body's
    mass is seen by the efforts, so no completion is consistent). The written parameters are
    consistent, the constraint binds on link7, and no consistent parameters fit the efforts
    better: the solve's residual is at most that of the description's scaled into place, or
    of the true robot with link7's mass at zero.
    """
    text, nominal, _, true, limits = arm
    layout = idf.Layout(nominal)
    drive = true_drive(layout)
    x_bad = np.zeros(layout.p)
    x_bad[:layout.n_links] = true.inertial_parameters()
    for (term, j), c in layout.drive.items():
        x_bad[c] = drive[term][j]
    b = nominal.body_links.index('link7')
    x_bad[10 * b:10 * b + 10] *= -2.0  # the hand's mass, first moment and inertia negative
    t = np.arange(0.0, 30.0, 0.005)
    q, qd, qdd = Motion(nominal, limits, seed=3)(t)
    tau = np.einsum('nvp,p->nv', layout.columns(q, qd, qdd), x_bad)
    stack = idf.Stack(layout).add(q, qd, qdd, tau)
    result = idf.solve(stack)
    assert not result.solver['exact'] and result.solver['status'] == 'optimal'
    own = np.array(list(result.own_link_parameters().values()))
    assert (idf.consistency_margin(own) >= 0).all()
    assert 'link7' in result.binding

    def residual(x):
        return np.sqrt(stack.residual_square(x).sum())

    unconstrained = residual(result.x_base)
    assert unconstrained < 1e-6 * np.sqrt(stack.tau_square.sum())  # the data are exact
    cost = residual(result.x)
    assert cost > 1e-3 * np.sqrt(stack.tau_square.sum())  # consistency costs residual
    x_zero = x_bad.copy()
    # a consistent guess: link7's own link without mass (its fixed children as described)
    x_zero[10 * b:10 * b + 10] = idf.own_link_offsets(nominal)[b]
    assert (idf.consistency_margin(x_zero[:layout.n_links].reshape(-1, 10)
                                   - idf.own_link_offsets(nominal)) >= 0).all()
    assert cost <= residual(x_zero)


def test_a_sticking_joints_rows_are_left_out(arm):
    """
    Rows where a joint does not move steadily are left out; the others stay exact.

    The efforts of the true robot, except where a joint moves slower than the default
    ``--min-speed``: there its effort is anywhere within +-2 N m of it, as a sticking joint's
    friction is. Fitted, those rows pull the base parameters away; left out (``keep``, from
    :func:`moving`), the base parameters come out as without them.
    """
    text, nominal, _, true, limits = arm
    layout = idf.Layout(nominal)
    drive = true_drive(layout)
    t = np.arange(0.0, 30.0, 0.005)
    q, qd, qdd = Motion(nominal, limits, seed=3)(t)
    tau = efforts(true, q, qd, qdd, coulomb_velocity=layout.coulomb_velocity, **drive)
    keep = idf.moving(nominal, qd, idf.DEFAULT_MIN_SPEED, span=5)
    keep[:, nominal.joint_types.index('prismatic')] = True  # the finger creeps: it stays
    assert 0.01 < 1 - keep.mean() < 0.3  # the arm's joints pass through rest
    sticking = tau + np.where(keep, 0.0, np.random.default_rng(0).uniform(-2, 2, tau.shape))
    x_true = np.zeros(layout.p)
    x_true[:layout.n_links] = true.inertial_parameters()
    for (term, j), c in layout.drive.items():
        x_true[c] = drive[term][j]
    expected = layout.base_parameters(x_true)
    scale = np.abs(expected).max()
    left_out = idf.solve(idf.Stack(layout).add(q, qd, qdd, sticking, keep=keep))
    fitted = idf.solve(idf.Stack(layout).add(q, qd, qdd, sticking))
    assert np.abs(left_out.base - expected).max() <= 1e-8 * scale
    assert np.abs(fitted.base - expected).max() > 1e-3 * scale


def test_rows_left_out_stay_aligned_with_states_left_out():
    """A state with a NaN is left out whole; ``keep`` of the other states still applies."""
    model = rbd.Model.from_urdf_file(demo_urdf_path(), compiled=False)
    layout = idf.Layout(model)
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, 50, model.nv))
    tau = rng.normal(size=(50, model.nv))
    q[3, 2] = np.nan
    keep = np.ones(q.shape, dtype=bool)
    keep[10:20, 1] = False
    stack = idf.Stack(layout).add(q, qd, qdd, tau, keep=keep)
    assert stack.samples == 49
    assert stack.fitted[1] == 39 and stack.fitted[0] == 49
    # the same as stacking the kept rows without the NaN state
    rows = np.delete(np.arange(50), 3)
    plain = idf.Stack(layout).add(q[rows], qd[rows], qdd[rows], tau[rows], keep=keep[rows])
    for a, b in zip(stack.factors, plain.factors):
        assert np.allclose(np.abs(a), np.abs(b))
    with pytest.raises(ValueError, match='keep has shape'):
        idf.Stack(layout).add(q, qd, qdd, tau, keep=keep[:, :3])


def test_moving_needs_the_speed_through_the_span():
    model = rbd.Model.from_urdf_file(demo_urdf_path(), compiled=False)
    qd = np.full((20, model.nv), 1.0)
    qd[10, 0] = 0.01
    qd[:, model.joint_types.index('prismatic')] = 0.01  # a tenth of the speed for those
    assert idf.moving(model, qd, 0.05).sum() == qd.size - 1
    within = idf.moving(model, qd, 0.05, span=3)
    assert not within[7:14, 0].any() and within[:7, 0].all() and within[14:, 0].all()
    assert within[:, 1:].all()
    assert idf.moving(model, qd, 0.0).all()


def test_wrong_description_and_unknown_friction_within_one_percent(arm):
    """Masses +-30 %, centres of mass moved <= 2 cm, friction unknown, 1 % effort noise."""
    text, nominal, _, true, limits = arm
    layout = idf.Layout(nominal)
    rng = np.random.default_rng(7)
    nv = nominal.nv
    viscous, coulomb = rng.uniform(0.2, 2.0, nv), rng.uniform(0.2, 2.0, nv)
    motion = Motion(nominal, limits, seed=4)
    t = np.arange(0.0, 60.0, 0.004)
    q, qd, qdd = motion(t)
    tau = efforts(true, q, qd, qdd, viscous, coulomb)
    rms = np.sqrt((tau ** 2).mean(axis=0))
    measured = tau + 0.01 * rms * rng.normal(size=tau.shape)
    fit = slice(0, 4 * len(t) // 5)
    stack = idf.Stack(layout).add(q[fit], qd[fit], qdd[fit], measured[fit])
    result = idf.solve(stack)

    # validation on the held-out fifth, against the efforts without noise
    held = slice(4 * len(t) // 5, None)
    truth = tau[held]
    model = layout.columns(q[held], qd[held], qdd[held]) @ result.x
    described = layout.columns(q[held], qd[held], qdd[held]) @ layout.prior()
    rms_torque = np.sqrt((truth ** 2).mean())
    error = np.sqrt(((model - truth) ** 2).mean())
    nominal_error = np.sqrt(((described - truth) ** 2).mean())
    assert error <= 0.01 * rms_torque, (error, rms_torque)
    assert error * 10 <= nominal_error, (error, nominal_error)
    own = np.array(list(result.own_link_parameters().values()))
    assert (idf.consistency_margin(own) >= -1e-12).all()


def test_friction_widths_per_joint_are_recovered(arm):
    """
    Every joint its own width of the smooth sign: found within 10 %, and then the fit exact.

    Noise-free efforts of the true arm with widths from 0.005 to 0.2 rad/s; the search starts
    from the node's 0.01 for every joint.
    """
    from rbd_dynamics.identification.friction import coulomb_widths
    text, nominal, _, true, limits = arm
    nv = nominal.nv
    widths = np.array([0.005, 0.02, 0.05, 0.1, 0.2, 0.03, 0.012, 0.004])[:nv]
    layout = idf.Layout(nominal)
    drive = true_drive(layout)
    t = np.arange(0.0, 30.0, 0.005)
    q, qd, qdd = Motion(nominal, limits, seed=3)(t)
    tau = efforts(true, q, qd, qdd, coulomb_velocity=widths, **drive)
    found = coulomb_widths(nominal, q, qd, qdd, tau, np.ones(q.shape, dtype=bool), 0.01)
    arm_joints = [j for j, kind in enumerate(nominal.joint_types) if kind != 'prismatic']
    np.testing.assert_allclose(found[arm_joints], widths[arm_joints], rtol=0.1)
    # with the found widths the efforts are explained: the widths are what made the difference
    for width, bound in ((found, 1e-3), (0.01, None)):
        layout = idf.Layout(nominal, width)
        stack = idf.Stack(layout).add(q, qd, qdd, tau)
        result = idf.solve(stack)
        share = np.sqrt(stack.residual_square(result.x).sum() / stack.tau_square.sum())
        if bound is not None:
            assert share < bound, share
            fitted = share
    assert share > 10 * fitted


def test_pseudo_inertia_round_trip_and_consistency():
    """The pseudo-inertia and the ten parameters map to each other; PSD is physical."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        L = np.tril(rng.normal(size=(4, 4)))
        J = L @ L.T  # a pseudo-inertia: positive definite
        theta = idf.parameters_from_pseudo(J)
        assert np.allclose(idf.pseudo_inertia(theta), J)
        assert idf.consistency_margin(theta) > 0
        # the rotational inertia about the centre of mass is then positive definite and
        # its principal moments keep the triangle inequality
        mass, com, inertia = idf.link_inertial(theta)
        moments = np.linalg.eigvalsh(inertia)
        assert mass > 0 and moments[0] > 0 and moments[0] + moments[1] >= moments[2]
    # a moment breaking the triangle inequality is not
    theta = np.array([1.0, 0, 0, 0, 0.1, 0, 0, 0.1, 0, 0.3])
    assert idf.consistency_margin(theta) < 0


def test_a_link_a_hair_outside_its_margin_is_moved_onto_it():
    """The solver's tolerance may leave a link just outside: the fit moves it onto the margin."""
    from rbd_dynamics.analysis import AnalysisError
    from rbd_dynamics.identification.fit import _MARGIN, _onto_margin
    rng = np.random.default_rng(1)
    L = np.tril(rng.normal(size=(4, 4)))
    inside = idf.parameters_from_pseudo(L @ L.T)
    low = np.linalg.eigvalsh(idf.pseudo_inertia(inside))[0]
    edge = idf.parameters_from_pseudo(L @ L.T - (low + 1e-10) * np.eye(4))  # just outside
    offsets = np.array([rng.normal(size=10), rng.normal(size=10)])  # the other links' share
    x = np.concatenate([inside + offsets[0], edge + offsets[1], [0.7]])  # then a drive term
    size = np.array([1.0, 1.0])  # a failed solve beyond 1e-6 of the size
    before = x.copy()
    _onto_margin(x, offsets, size)
    np.testing.assert_array_equal(x[:10], before[:10])  # inside: untouched
    assert x[-1] == before[-1]
    moved = x[10:20] - offsets[1]
    assert idf.consistency_margin(edge) < 0 < idf.consistency_margin(moved)
    np.testing.assert_allclose(np.linalg.eigvalsh(idf.pseudo_inertia(moved))[0],
                               _MARGIN * size[1], rtol=1e-3)
    assert np.abs(moved - edge).max() < 1e-8  # a change of the order of the gap, no more
    # far outside: a failed solve, not rounding
    far = idf.parameters_from_pseudo(L @ L.T - (low + 1e-3) * np.eye(4))
    far = np.concatenate([inside + offsets[0], far + offsets[1]])
    with pytest.raises(AnalysisError, match='outside the constraint'):
        _onto_margin(far, offsets, size)


# The command ----------------------------------------------------------------------------------


@pytest.fixture(scope='module')
def bags(tmp_path_factory, arm):
    """Record a fit and a validation bag of the true arm, 1 % effort noise."""
    root = tmp_path_factory.mktemp('identify')
    text, nominal, true_text, true, limits = arm
    rng = np.random.default_rng(11)
    viscous, coulomb = rng.uniform(0.2, 2.0, nominal.nv), rng.uniform(0.2, 2.0, nominal.nv)
    # the sensors' bias, the same in both recordings
    offset = np.concatenate([rng.uniform(-1.0, 1.0, nominal.nv - 1), [0.0]])
    out = {'viscous': viscous, 'coulomb': coulomb, 'offset': offset}
    for name, seed, duration in (('fit', 3, 40.0), ('check', 8, 10.0)):
        t = np.arange(0.0, duration, 0.004)
        q, qd, qdd = Motion(nominal, limits, seed=seed)(t)
        tau = efforts(true, q, qd, qdd, viscous, coulomb) + offset
        tau += 0.01 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
        out[name] = write_joint_states(root / name, nominal.joint_names, t, q, qd, tau)
    # joint4 swings; the others tremble by 0.01 rad (more than standing still: not held)
    t = np.arange(0.0, 10.0, 0.004)
    motion = Motion(nominal, limits, seed=3)
    others = np.array([n != 'joint4' for n in nominal.joint_names])
    motion.amp[others] *= 0.01 / motion.amp[others].sum(axis=1, keepdims=True)
    q, qd, qdd = motion(t)
    out['one joint'] = write_joint_states(root / 'one_joint', nominal.joint_names, t, q, qd,
                                          efforts(true, q, qd, qdd, viscous, coulomb))
    # partial recordings: the finger never recorded in one, standing still in the other
    finger = nominal.joint_names.index('left_finger_joint')
    arm_joints = [n for n in nominal.joint_names if n != 'left_finger_joint']
    for name, seed, duration, recorded in (('no finger', 3, 40.0, False),
                                           ('still finger', 8, 10.0, True)):
        t = np.arange(0.0, duration, 0.004)
        motion = Motion(nominal, limits, seed=seed)
        motion.amp[finger] = 0.0
        q, qd, qdd = motion(t)
        q[:, finger] = 0.0  # where the finger stands (held at 0 where it is not recorded)
        tau = efforts(true, q, qd, qdd, viscous, coulomb)
        tau += 0.01 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
        columns = [nominal.joint_names.index(n) for n in arm_joints]
        names = arm_joints
        if recorded:  # both fingers: the mimic joint follows the finger, as drivers report it
            columns = list(range(nominal.nv)) + [finger]
            names = list(nominal.joint_names) + ['right_finger_joint']
        out[name] = write_joint_states(root / name.replace(' ', '_'), names, t,
                                       q[:, columns], qd[:, columns], tau[:, columns])
    return out


def test_identify_writes_a_description_urdfdom_reads(arm, bags, tmp_path, capsys):
    text, nominal, true_text, true, _ = arm
    out = tmp_path / 'out'
    code = identify_cli.main([demo_urdf_path(), bags['fit'], '--validate', bags['check'],
                              '--out', str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert sorted(os.listdir(out)) == sorted(OUTPUTS)
    # every step that can take long says so as it starts, and nothing is doubted
    steps = re.findall(r'^identify: (\w+ \w+)', stderr, re.M)
    assert steps == ['reading 2', 'choosing the', 'identifying the', 'solving for',
                     'validating the', 'writing into'], stderr
    assert 'condition number' in stdout and 'undetermined' in stdout
    assert 'moving states only' in stdout and 'left out of the fit' in stdout
    assert 'link1: m mcx mcy mcz ixx ixy ixz iyy iyz' in stdout
    # the consistent model predicts within 1 % of the unconstrained base parameters
    cost = re.search(r'cost of consistency: validation error ([0-9.]+) % consistent \(written\), '
                     r'([0-9.]+) % unconstrained', stdout)
    assert cost, stdout
    assert float(cost.group(1)) <= 1.01 * float(cost.group(2))
    identified_text = (out / 'identified.urdf').read_text()

    # urdfdom (urdf_parser_py) and Pinocchio read it; joints and other links are unchanged
    urdf = pytest.importorskip('urdf_parser_py.urdf')
    robot = urdf.URDF.from_xml_string(identified_text.encode())
    original = urdf.URDF.from_xml_string(text.encode())
    assert [j.name for j in robot.joints] == [j.name for j in original.joints]
    for a, b in zip(robot.joints, original.joints):
        assert (a.type, a.parent, a.child) == (b.type, b.parent, b.child)
        assert a.origin.xyz == b.origin.xyz and a.origin.rpy == b.origin.rpy
        assert (a.limit is None) == (b.limit is None)
        if a.limit is not None:
            assert (a.limit.lower, a.limit.upper, a.limit.effort) == \
                (b.limit.lower, b.limit.upper, b.limit.effort)
    links = {link.name: link for link in robot.links}
    for name in ('ft_sensor_link', 'gripper_base', 'base_link'):  # not a body's own link
        before = {link.name: link for link in original.links}[name].inertial
        assert links[name].inertial.mass == before.mass
        assert links[name].inertial.origin.xyz == before.origin.xyz
    pin = pytest.importorskip('pinocchio')
    pin.buildModelFromXML(identified_text)

    # the written description predicts the true arm's efforts better than the nominal one
    identified = rbd.Model.from_urdf(identified_text, compiled=False)
    assert identified.warnings == ()  # every inertia physically consistent
    rng = np.random.default_rng(0)
    q = rng.uniform(-1.0, 1.0, (200, nominal.nv)) * 0.5
    q[:, -1] = 0.02
    g_true = rbd.gravity_torques(true, q)
    error = np.abs(rbd.gravity_torques(identified, q) - g_true).max()
    assert error * 10 < np.abs(rbd.gravity_torques(nominal, q) - g_true).max()

    # drive.yaml: the node's parameter names, the friction found
    params = yaml.safe_load((out / 'drive.yaml').read_text())
    node = params['/**']['ros__parameters']
    assert node['joints'] == list(nominal.joint_names)
    assert set(node['drive']) == {'viscous', 'coulomb', 'coulomb_velocity', 'armature',
                                  'effort_offset'}
    # the sensors' bias found, for the node to take off the measured efforts (to 0.1 N m: on
    # joint2, which carries the arm, a constant trades against its gravity terms by 0.05 N m)
    np.testing.assert_allclose(node['drive']['effort_offset'][:7], bags['offset'][:7],
                               rtol=0, atol=0.1)
    # a width per joint, identified: the data's 0.01 rad/s where the joint moves
    widths = np.array(node['drive']['coulomb_velocity'])
    assert widths.shape == (nominal.nv,) and (widths > 0).all()
    assert np.allclose(widths[:7], 0.01, rtol=0.25), widths
    arm_joints = slice(0, 7)  # the gripper's finger moves little and carries little
    assert np.allclose(node['drive']['viscous'][arm_joints], bags['viscous'][arm_joints],
                       rtol=0.1, atol=0.05)
    assert np.allclose(node['drive']['coulomb'][arm_joints], bags['coulomb'][arm_joints],
                       rtol=0.1, atol=0.05)
    header = (out / 'identification.csv').read_text().split('\n', 1)[0].split(',')
    assert header[:4] == ['time', 'measured.joint1', 'description.joint1',
                          'identified.joint1']


def test_identify_is_one_library_call_that_writes_nothing(arm, bags, tmp_path, monkeypatch):
    """The pipeline the command runs, called as a script would: a result, and no file."""
    from rbd_dynamics.identification.pipeline import identify, Settings
    from rbd_dynamics.identification.report import rms_errors
    text, nominal = arm[:2]
    monkeypatch.chdir(tmp_path)
    steps = []
    found = identify(Settings(text, rbd.Model.from_urdf(text), [bags['fit']], [bags['check']]),
                     step=steps.append)
    assert os.listdir(tmp_path) == []
    assert steps[0] == 'reading 2 recordings' and steps[-1] == 'validating the identified model'
    assert sorted(found.files(100)) == sorted(OUTPUTS)
    assert found.model.joint_names == nominal.joint_names and not found.held
    assert found.window in (0.05, 0.1, 0.2, 0.4) and set(found.windows) == {0.05, 0.1, 0.2, 0.4}
    # the identified model predicts the validation recording better than the description
    effort, before, after = (np.sqrt((e ** 2).sum()) for e in rms_errors(found.rows, nominal.nv))
    assert after < 0.5 * before and found.warnings() == []
    model = rbd.Model.from_urdf(found.identified_text, compiled=False)
    np.testing.assert_allclose(model.inertial_parameters(),
                               found.identified_model.inertial_parameters(), atol=1e-12)


def test_a_solve_that_does_not_converge_exits_1_and_writes_nothing(bags, tmp_path, capsys):
    out = tmp_path / 'out'
    code = identify_cli.main([demo_urdf_path(), bags['fit'], '--max-iterations', '2',
                              '--out', str(out)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert 'did not converge' in err and 'nothing written' in err
    assert not out.exists() and os.listdir(tmp_path) == []


@pytest.mark.parametrize('fit, check', [('no finger', 'still finger'),
                                        ('still finger', 'no finger')])
def test_a_gripper_not_recorded_or_standing_still_is_held(arm, bags, fit, check, tmp_path,
                                                          capsys):
    """
    The finger missing from one recording and standing still in the other: held, not refused.

    In either role (fit or validation): the model is identified with the finger fixed where it
    stands, the summary names it, and the written description keeps every joint as it was.
    """
    text, nominal, _, true, _ = arm
    out = tmp_path / 'out'
    code = identify_cli.main([demo_urdf_path(), bags[fit], '--validate', bags[check],
                              '--out', str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    held = re.search(r'^held .*: (.*)$', stdout, re.M)
    assert held, stdout
    reason = 'never recorded' if fit == 'no finger' else 'standing still within 0.1 mm'
    assert held.group(1) == 'left_finger_joint at 0 (%s)' % reason
    assert 'finger_joint' not in stderr  # no warning about the fingers the model holds
    # the node keeps giving the held joint a torque: it is in drive.yaml's joints, with the
    # description's friction
    drive = yaml.safe_load((out / 'drive.yaml').read_text())['/**']['ros__parameters']
    assert drive['joints'] == list(nominal.joint_names)
    finger = nominal.joint_names.index('left_finger_joint')
    assert drive['drive']['viscous'][finger] == nominal.damping[finger]
    assert drive['drive']['coulomb_velocity'][finger] == 0.01
    identified = (out / 'identified.urdf').read_text()
    joints = {j.get('name'): j.get('type') for j in ET.fromstring(identified).iter('joint')}
    assert joints == {j.get('name'): j.get('type') for j in ET.fromstring(text).iter('joint')}
    cost = re.search(r'validation error ([0-9.]+) % consistent', stdout)
    assert float(cost.group(1)) < 2.0, stdout  # 1 % noise


def test_the_written_description_gives_back_the_identified_parameters(arm):
    """
    ``identified.urdf`` read again: every body's parameters are the identified ones.

    With the finger held (its links lumped into the hand's body, their own links as described)
    and armature identified, the description written back and held again has exactly the
    parameters the identification found, body by body.
    """
    from rbd_dynamics.identification import hold
    from rbd_dynamics.identification.writeback import identified_urdf
    text, nominal, true_text, _, limits = arm
    held = {'left_finger_joint': 0.01}
    model = rbd.Model.from_urdf(hold.held_description(text, held), compiled=False)
    true_held = rbd.Model.from_urdf(hold.held_description(true_text, held), compiled=False)
    assert model.nv == nominal.nv - 1 and model.nb < nominal.nb
    layout = idf.Layout(model)
    drive = true_drive(layout)
    assert drive['armature'].any()  # armature identified on some joints
    t = np.arange(0.0, 20.0, 0.005)
    q, qd, qdd = Motion(model, limits, seed=5)(t)
    tau = efforts(true_held, q, qd, qdd, coulomb_velocity=layout.coulomb_velocity, **drive)
    result = idf.solve(idf.Stack(layout).add(q, qd, qdd, tau))
    written = identified_urdf(text, result.own_link_parameters())
    again = rbd.Model.from_urdf(hold.held_description(written, held), compiled=False)
    body = result.body_parameters().reshape(-1)
    np.testing.assert_allclose(again.inertial_parameters(), body, rtol=1e-12,
                               atol=1e-12 * np.abs(body).max())
    # the held links keep their description
    full = rbd.Model.from_urdf(written, compiled=False)
    for link in ('left_finger', 'right_finger'):
        assert np.array_equal(full.runtime.link_inertia[link],
                              nominal.runtime.link_inertia[link])


def test_the_outputs_go_into_the_directory_and_nowhere_else(bags, tmp_path, capsys,
                                                            monkeypatch):
    """The default ``--out .``: the files in the current directory, nothing beside it."""
    work = tmp_path / 'work'
    work.mkdir()
    monkeypatch.chdir(work)
    code = identify_cli.main([demo_urdf_path(), bags['fit']])
    assert code == 0, capsys.readouterr().err
    assert sorted(os.listdir(work)) == sorted(OUTPUTS)
    assert os.listdir(tmp_path) == ['work']


def test_single_joint_motion_exits_3_naming_the_joints(bags, tmp_path, capsys):
    code = identify_cli.main([demo_urdf_path(), bags['one joint'], '--out', str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 3, err
    assert 'does not determine the base parameters' in err
    named = err.split('barely moved:')[1]
    assert 'joint1' in named and 'joint7' in named and 'joint4,' not in named
    assert os.listdir(tmp_path) == []


def test_a_joint_that_never_moves_steadily_is_fitted_at_every_speed(arm, tmp_path, capsys):
    """A finger moving by millimetres per second: its rows stay, or nothing would fit it."""
    text, nominal, _, true, limits = arm
    finger = nominal.joint_types.index('prismatic')
    rng = np.random.default_rng(3)
    viscous, coulomb = rng.uniform(0.2, 2.0, nominal.nv), rng.uniform(0.2, 2.0, nominal.nv)
    motion = Motion(nominal, limits, seed=3)
    motion.amp[finger] *= 0.3
    t = np.arange(0.0, 40.0, 0.004)
    q, qd, qdd = motion(t)
    assert np.abs(qd[:, finger]).max() < 0.1 * identify_cli.DEFAULT_MIN_SPEED
    bag = write_joint_states(tmp_path / 'bag', nominal.joint_names, t, q, qd,
                             efforts(true, q, qd, qdd, viscous, coulomb))
    code = identify_cli.main([demo_urdf_path(), bag, '--out', str(tmp_path / 'out')])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert 'fitted at every speed (moved steadily in under 1 % of the states): ' \
        'left_finger_joint' in stdout


@pytest.fixture(scope='module')
def bad_bags(tmp_path_factory, arm):
    root = tmp_path_factory.mktemp('bad')
    nominal = arm[1]
    t = np.arange(0.0, 1.0, 0.01)
    q = np.zeros((len(t), nominal.nv))
    names = list(nominal.joint_names)
    text_file = root / 'notes.mcap'
    text_file.write_text('not a bag\n')
    return {
        'no efforts': (write_joint_states(root / 'no_effort', names, t, q, q), 'no efforts'),
        'foreign joints': (write_joint_states(root / 'foreign', names + ['other_joint'], t,
                                              np.zeros((len(t), 9)), np.zeros((len(t), 9)),
                                              np.zeros((len(t), 9))), 'other_joint'),
        'empty': (write_joint_states(root / 'empty', names, t[:0], q[:0], q[:0], q[:0]),
                  'no messages'),
        'unreadable': (str(text_file), 'not a readable rosbag2'),
        # a validation recording without a joint the fit moves
        'a joint missing': (write_joint_states(root / 'missing', names[:3] + names[4:], t,
                                               q[:, 1:], q[:, 1:], q[:, 1:]),
                            'joint4 never appear'),
        'another robot': (write_joint_states(root / 'other_robot', ['a', 'b'], t,
                                             np.zeros((len(t), 2)), np.zeros((len(t), 2)),
                                             np.zeros((len(t), 2))), 'a, b'),
    }


@pytest.mark.parametrize('case', ['no efforts', 'foreign joints', 'empty', 'unreadable',
                                  'a joint missing', 'another robot'])
def test_bad_input_exits_1_and_writes_nothing(bags, bad_bags, case, tmp_path, capsys):
    bag, expected = bad_bags[case]
    out = tmp_path / 'out'
    args = [demo_urdf_path(), bags['fit'], '--validate', bag] \
        if case in ('another robot', 'a joint missing') else [demo_urdf_path(), bag]
    code = identify_cli.main(args + ['--out', str(out)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert expected in err and 'Traceback' not in err
    assert not out.exists() and os.listdir(tmp_path) == []


@pytest.mark.parametrize('option', [['--min-speed', '-1'], ['--min-speed', 'nan'],
                                    ['--window', '0']])
def test_bad_options_exit_1_and_write_nothing(bags, option, tmp_path, capsys):
    out = tmp_path / 'out'
    code = identify_cli.main([demo_urdf_path(), bags['fit'], '--out', str(out)] + option)
    err = capsys.readouterr().err
    assert code == 1, err
    assert option[0] in err and 'Traceback' not in err
    assert not out.exists() and os.listdir(tmp_path) == []


@pytest.mark.parametrize('module', ['scipy', 'matplotlib', 'cvxpy'])
def test_without_the_analysis_extra_exits_1_before_reading(bags, module, tmp_path, capsys,
                                                           monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # what a missing package raises on import
    out = tmp_path / 'out'
    code = identify_cli.main([demo_urdf_path(), bags['fit'], '--out', str(out)])
    err = capsys.readouterr().err
    assert code == 1 and module in err and 'rbd_dynamics[analysis]' in err, err
    assert 'Traceback' not in err and not out.exists()


def test_description_yaml_carries_the_description_exactly(arm, bags, tmp_path, capsys):
    """
    ``description.yaml``: the identified description as ``robot_description``, text for text.

    YAML reads the literal block back as the file's text, whatever it holds: comments with
    ``: `` (which break ``-p robot_description:=...``), lines that start with spaces, ``#``.
    """
    from rbd_dynamics.identification.writeback import drive_yaml
    out = tmp_path / 'out'
    code = identify_cli.main([demo_urdf_path(), bags['fit'], '--out', str(out)])
    assert code == 0, capsys.readouterr().err
    params = yaml.safe_load((out / 'description.yaml').read_text())['/**']['ros__parameters']
    assert params['robot_description'] == (out / 'identified.urdf').read_text()
    drive = yaml.safe_load((out / 'drive.yaml').read_text())['/**']['ros__parameters']
    assert params['joints'] == drive['joints'] and params['drive'] == drive['drive']
    text = ('  <?xml version="1.0"?>\n<!-- Author: A. Person: arms: 2 -->\n# not a comment\n'
            '<robot name="r">\n\n\t<link name="a"/>  \n</robot>\n')
    path = tmp_path / 'odd.yaml'
    path.write_text(drive_yaml(['j'], [0.0], [0.0], [0.0], 0.01, description=text))
    assert yaml.safe_load(path.read_text())['/**']['ros__parameters']['robot_description'] \
        == text


def test_drive_yaml_is_a_node_parameters_file(tmp_path):
    from rbd_dynamics.identification.writeback import drive_yaml
    parameter = pytest.importorskip('rclpy.parameter')
    path = tmp_path / 'drive.yaml'
    # joint names YAML would read as a bool, a number or a mapping stay strings
    names = ['joint1', 'on', '2', 'a: b']
    path.write_text(drive_yaml(names, [0.5, 1, 0, 0], [0, 2.5, 0, 0], [0.01, 0, 0, 0], 0.02,
                               ['a note']))
    # written for any node name (the node reads it from --params-file under its own name in
    # test/node/test_node_real_robot.py)
    assert path.read_text().count('/**:') == 1
    values = parameter.parameter_dict_from_yaml_file(str(path), use_wildcard=True)
    # rclpy.parameter.Parameter objects holding rcl_interfaces ParameterValue messages
    values = {name: p.value for name, p in values.items()}
    assert list(values['joints'].string_array_value) == names
    # doubles everywhere, as the node declares them (an integer would be refused)
    assert list(values['drive.viscous'].double_array_value) == [0.5, 1.0, 0.0, 0.0]
    assert list(values['drive.coulomb'].double_array_value) == [0.0, 2.5, 0.0, 0.0]
    assert list(values['drive.armature'].double_array_value) == [0.01, 0.0, 0.0, 0.0]
    assert list(values['drive.coulomb_velocity'].double_array_value) == [0.02] * 4
    path.write_text(drive_yaml(names, [0.5, 1, 0, 0], [0, 2.5, 0, 0], [0.01, 0, 0, 0],
                               [0.02, 0.05, 1, 0.3]))
    values = parameter.parameter_dict_from_yaml_file(str(path), use_wildcard=True)
    assert list(values['drive.coulomb_velocity'].value.double_array_value) == \
        [0.02, 0.05, 1.0, 0.3]


@pytest.fixture(scope='module')
def noisy_velocity_bags(tmp_path_factory, arm):
    """
    Record a driver that reports a noisy velocity (4 mrad/s at 1 kHz, as a Panda's), torques.

    The efforts are a joint torque sensor's (the rigid body, an offset, 0.5 % noise): what a
    consistent model of the right form fits to the noise, once the states are right.
    """
    root = tmp_path_factory.mktemp('noisy_velocity')
    text, nominal, _, true, limits = arm
    rng = np.random.default_rng(21)
    out = {}
    for name, seed, duration in (('fit', 3, 30.0), ('check', 8, 10.0)):
        t = np.arange(0.0, duration, 0.001)
        q, qd, qdd = Motion(nominal, limits, seed=seed)(t)
        tau = efforts(true, q, qd, qdd, offset=rng.uniform(-0.3, 0.3, nominal.nv))
        tau += 0.005 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
        measured = qd + 0.004 * rng.normal(size=qd.shape)
        out[name] = write_joint_states(root / name, nominal.joint_names, t, q, measured, tau)
    return out


def test_the_differentiation_window_is_chosen_from_the_data(noisy_velocity_bags, tmp_path,
                                                            capsys):
    """
    The window the data favour, where the default one lets the velocity noise in.

    With 0.05 s the accelerations carry the velocity's noise into the regressor; the window
    chosen leaves less residual, predicts the held-out recording better, and the consistent
    model costs at most 2 % of the unconstrained one's error.
    """
    bags = noisy_velocity_bags
    figures = {}
    for label, extra in (('chosen', []), ('short', ['--window', '0.05'])):
        code = identify_cli.main([demo_urdf_path(), bags['fit'], '--validate', bags['check'],
                                  '--out', str(tmp_path / label)] + extra)
        stdout, stderr = capsys.readouterr()
        assert code == 0, stderr
        cost = re.search(r'cost of consistency: validation error ([0-9.]+) % consistent '
                         r'\(written\), ([0-9.]+) % unconstrained', stdout)
        figures[label] = float(cost.group(1)), float(cost.group(2)), stdout
    chosen = re.search(r'^differentiation window ([0-9.]+) s, the shortest whose states leave '
                       r'the least residual', figures['chosen'][2], re.M)
    assert chosen and float(chosen.group(1)) > 0.05, figures['chosen'][2]
    assert '\ndifferentiation window' not in figures['short'][2]  # given: not chosen
    consistent, unconstrained, _ = figures['chosen']
    assert consistent < figures['short'][0], figures
    assert consistent <= 1.02 * unconstrained, figures['chosen'][2]
