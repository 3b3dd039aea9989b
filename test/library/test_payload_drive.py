"""
The real-robot parts of the library: drive torques, URDF limits and dynamics, payloads.

- ``drive_torques`` against its closed form, and its regressor columns (``drive_columns``)
  times the coefficients against it; armature against Pinocchio's ``rnea`` (which
  adds ``model.armature * a``);
- ``effort_limits``, ``damping`` and ``friction`` read from ``<limit>`` and ``<dynamics>``, with
  mimic joints reflected onto their masters;
- a payload set at runtime equals a description that has the payload as a fixed child link
  (1e-12, compiled and NumPy paths), and a thread computing while another changes the payload
  never sees half of a change.
"""

import threading
import warnings

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.drive import drive_columns, DRIVE_TERMS
from rbd_dynamics.resources import demo_urdf_path
from support.urdf_builders import inertial, joint, link, robot

PAYLOAD = {'mass': 2.0, 'com': (0.01, -0.02, 0.08),
           'inertia': (0.011, 0.001, -0.002, 0.013, 0.0015, 0.009)}


def _demo_text():
    with open(demo_urdf_path()) as stream:
        return stream.read()


def _with_fixed_payload(text, link_name, mass, com, inertia):
    """Return the description with the payload as a link fixed to ``link_name`` at its origin."""
    ixx, ixy, ixz, iyy, iyz, izz = inertia
    extra = (link('payload_body', inertial(mass, com, ixx=ixx, iyy=iyy, izz=izz, ixy=ixy,
                                           ixz=ixz, iyz=iyz))
             + joint('payload_joint', 'fixed', link_name, 'payload_body'))
    return text.replace('</robot>', extra + '</robot>')


def _models(compiled):
    text = _demo_text()
    runtime = rbd.Model.from_urdf(text, compiled=compiled)
    fixed = rbd.Model.from_urdf(_with_fixed_payload(text, 'ft_frame', **PAYLOAD),
                                compiled=compiled)
    return runtime, fixed


def test_drive_torques_closed_form():
    rng = np.random.default_rng(1)
    qd, qdd, viscous, coulomb, armature = rng.normal(size=(5, 6))
    viscous, coulomb, armature = abs(viscous), abs(coulomb), abs(armature)
    tau = rbd.drive_torques(qd, qdd, viscous, coulomb, armature, coulomb_velocity=0.05)
    expected = [armature[i] * qdd[i] + viscous[i] * qd[i]
                + coulomb[i] * np.tanh(qd[i] / 0.05) for i in range(6)]
    np.testing.assert_allclose(tau, expected, rtol=1e-15, atol=1e-15)
    # far from zero velocity the smooth sign is the sign; at zero it is zero
    assert rbd.drive_torques([2.0, -2.0, 0.0], coulomb=3.0).tolist() == [3.0, -3.0, 0.0]
    # batches broadcast against per-joint coefficients
    batch = rbd.drive_torques(np.tile(qd, (4, 1)), None, viscous)
    np.testing.assert_allclose(batch, np.tile(viscous * qd, (4, 1)), rtol=1e-15)
    for bad in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match='coulomb_velocity'):
            rbd.drive_torques(qd, coulomb_velocity=bad)


def test_drive_columns_are_the_law_linear_in_its_coefficients():
    """The drive's regressor columns times the coefficients are the drive torques, offset added."""
    rng = np.random.default_rng(2)
    qd, qdd = rng.normal(size=(2, 5, 6))
    viscous, coulomb, armature, offset = rng.normal(size=(4, 6))
    width = np.abs(rng.normal(size=6)) + 0.01
    columns = drive_columns(qd, qdd, width)
    assert columns.shape == (5, 6, len(DRIVE_TERMS))
    coefficients = np.column_stack([viscous, coulomb, armature, offset])
    tau = rbd.drive_torques(qd, qdd, viscous, coulomb, armature, width) + offset
    np.testing.assert_allclose(np.einsum('sjk,jk->sj', columns, coefficients), tau,
                               rtol=1e-13, atol=1e-13)
    some = drive_columns(qd, None, width, ('offset', 'coulomb'))
    np.testing.assert_array_equal(some, columns[..., [3, 1]])
    with pytest.raises(ValueError, match='qdd'):
        drive_columns(qd, None, width, ('armature',))
    with pytest.raises(ValueError, match='no drive term'):
        drive_columns(qd, qdd, width, ('stiction',))


def test_limits_and_dynamics_from_the_urdf():
    text = robot(
        'drive',
        link('base'), link('a', inertial(1.0, ixx=0.1, iyy=0.1, izz=0.1)),
        link('b', inertial(1.0, ixx=0.1, iyy=0.1, izz=0.1)),
        link('c', inertial(1.0, ixx=0.1, iyy=0.1, izz=0.1)),
        joint('j1', 'revolute', 'base', 'a').replace(
            '</joint>', '<limit effort="12.5" lower="-1" upper="1" velocity="2"/>'
            '<dynamics damping="0.3" friction="0.7"/></joint>'),
        joint('j2', 'continuous', 'a', 'b').replace(
            '</joint>', '<limit effort="0" velocity="2"/></joint>'),
        joint('j3', 'revolute', 'b', 'c', mimic=('j1', -2.0, 0.1)).replace(
            '</joint>', '<limit effort="99"/><dynamics damping="0.5" friction="0.25"/></joint>'))
    model = rbd.Model.from_urdf(text, compiled=False)
    assert model.joint_names == ('j1', 'j2')
    # effort 0 and an absent <limit> both mean unlimited; a mimic joint's limit is its own
    assert model.effort_limits.tolist() == [12.5, np.inf]
    # the mimic joint's drive moves with its master: damping times k^2, friction times |k|
    np.testing.assert_allclose(model.damping, [0.3 + 4.0 * 0.5, 0.0], rtol=1e-15)
    np.testing.assert_allclose(model.friction, [0.7 + 2.0 * 0.25, 0.0], rtol=1e-15)
    # which is what the drive law of both joints, folded like their torques, gives
    qd_master = 0.4
    direct = (0.3 * qd_master + 0.7 * np.tanh(qd_master / 0.01)
              - 2.0 * (0.5 * -2.0 * qd_master + 0.25 * np.tanh(-2.0 * qd_master / 0.01)))
    folded = rbd.drive_torques([qd_master, 0.0], None, model.damping, model.friction)[0]
    assert folded == pytest.approx(direct, rel=1e-6)  # tanh(40) vs tanh(80): both 1 - 1e-35
    for bad, word in (('effort="-1"', 'effort'), ('damping="nan"', 'damping'),
                      ('friction="-0.1"', 'friction')):
        tag = 'limit' if 'effort' in bad else 'dynamics'
        broken = robot('bad', link('base'), link('a'),
                       joint('j', 'revolute', 'base', 'a').replace(
                           '</joint>', '<%s %s/></joint>' % (tag, bad)))
        with pytest.raises(rbd.UrdfError, match="joint 'j'.*" + word):
            rbd.Model.from_urdf(broken, compiled=False)


def test_demo_arm_values():
    model = rbd.Model.from_urdf_file(demo_urdf_path(), compiled=False)
    assert model.effort_limits.tolist() == [320, 320, 176, 176, 110, 40, 40, 70]
    # the right finger mimics the left with multiplier 1: its damping adds to the master's
    assert model.damping.tolist() == [0.5] * 7 + [4.0]
    for array in (model.effort_limits, model.damping, model.friction):
        with pytest.raises(ValueError):
            array[0] = 1.0  # read-only, like gravity


def test_armature_against_pinocchio():
    pin = pytest.importorskip('pinocchio')
    model = rbd.Model.from_urdf_file(demo_urdf_path())
    pin_model = pin.buildModelFromUrdf(demo_urdf_path(), mimic=False)
    # Pinocchio has the mimic finger as a joint of its own: give it its master's coordinates
    names = list(pin_model.names)[1:]
    src = [model.joint_names.index(model.mimic.get(n, (n,))[0]) for n in names]
    rng = np.random.default_rng(3)
    armature = rng.uniform(0.1, 1.0, model.nv)
    pin_model.armature = np.array([armature[s] if n in model.joint_names else 0.0
                                   for n, s in zip(names, src)])
    data = pin_model.createData()
    for _ in range(4):
        q, qd, qdd = rng.uniform(-1, 1, (3, model.nv))
        ref = pin.rnea(pin_model, data, q[src], qd[src], qdd[src])
        folded = np.zeros(model.nv)
        np.add.at(folded, src, ref)
        ours = rbd.rnea(model, q, qd, qdd) + rbd.drive_torques(qd, qdd, armature=armature)
        np.testing.assert_allclose(ours, folded, rtol=0, atol=1e-10)


@pytest.mark.parametrize('compiled', [True, False], ids=['compiled', 'numpy'])
def test_runtime_payload_equals_a_fixed_child_link(compiled):
    runtime, fixed = _models(compiled)
    assert (runtime.packed is not None) == (fixed.packed is not None)
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-1, 1, (3, runtime.nv))
    wrench = {'link4': rng.normal(size=6)}
    before = rbd.rnea(runtime, q, qd, qdd, wrench)
    runtime.set_payload('ft_frame', **PAYLOAD)
    assert set(runtime.payloads) == {'ft_frame'}
    for a, b in ((rbd.rnea(runtime, q, qd, qdd, wrench), rbd.rnea(fixed, q, qd, qdd, wrench)),
                 (rbd.gravity_torques(runtime, q), rbd.gravity_torques(fixed, q)),
                 (rbd.rnea(runtime, np.tile(q, (300, 1)), qd, qdd),  # in ranges on threads
                  rbd.rnea(fixed, np.tile(q, (300, 1)), qd, qdd))):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    # payload_wrench of a link the payload is beyond includes it, of the link itself too
    for name in ('link5', 'ft_frame', 'link7'):
        np.testing.assert_allclose(rbd.payload_wrench(runtime, name, q, qd, qdd),
                                   rbd.payload_wrench(fixed, name, q, qd, qdd),
                                   rtol=0, atol=1e-12)
    # the left finger is not beyond... it is: the gripper hangs below ft_frame; the base is not
    np.testing.assert_allclose(rbd.payload_wrench(runtime, 'base_link', q),
                               rbd.payload_wrench(fixed, 'base_link', q), rtol=0, atol=1e-12)
    runtime.set_payload('ft_frame', 0.0)  # mass 0 removes it
    assert runtime.payloads == {}
    np.testing.assert_allclose(rbd.rnea(runtime, q, qd, qdd, wrench), before, rtol=0, atol=0)


def test_payload_on_the_base_changes_no_torque():
    model = rbd.Model.from_urdf_file(demo_urdf_path())
    q = np.full(model.nq, 0.3)
    tau = rbd.gravity_torques(model, q)
    model.set_payload('base_link', 10.0, (0.2, 0, 0))
    np.testing.assert_array_equal(rbd.gravity_torques(model, q), tau)
    # but the base link's payload wrench carries it: 10 kg more against gravity
    wrench = rbd.payload_wrench(model, 'base_link', q)
    model.clear_payloads()
    assert (wrench - rbd.payload_wrench(model, 'base_link', q))[2] == pytest.approx(98.1)


def test_payload_set_before_compiling():
    runtime, fixed = _models(compiled=False)
    runtime.set_payload('ft_frame', **PAYLOAD)
    assert runtime.compile()
    q = np.linspace(-1, 1, runtime.nq)
    np.testing.assert_allclose(rbd.gravity_torques(runtime, q), rbd.gravity_torques(fixed, q),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize('bad, word', [
    ({'link': 'nope', 'mass': 1.0}, 'unknown link'),
    ({'link': 'ft_frame', 'mass': -1.0}, 'mass'),
    ({'link': 'ft_frame', 'mass': np.nan}, 'mass'),
    ({'link': 'ft_frame', 'mass': 1.0, 'com': (0, 0, np.inf)}, 'com'),
    ({'link': 'ft_frame', 'mass': 1.0, 'com': (0, 0)}, 'com'),
    ({'link': 'ft_frame', 'mass': 1.0, 'inertia': (1, 0, 0, 1, 0, np.nan)}, 'inertia'),
    ({'link': 'ft_frame', 'mass': 1.0, 'inertia': (-1, 0, 0, 1, 0, 1)}, 'inertia'),
    ({'link': 'ft_frame', 'mass': 1.0, 'inertia': (1, 0, 0)}, 'inertia'),
    # moments >= 0 that no body has: the largest above the sum of the others
    ({'link': 'ft_frame', 'mass': 1.0, 'inertia': (1, 0, 0, 0.2, 0, 0.2)}, 'triangle'),
    ({'link': 'ft_frame', 'mass': 1.0, 'inertia': (1, 0.9, 0, 1, 0, 1)}, 'inertia'),
])
def test_bad_payloads_are_refused_and_change_nothing(bad, word):
    model = rbd.Model.from_urdf_file(demo_urdf_path())
    model.set_payload('link7', 1.0)
    q = np.full(model.nq, 0.2)
    tau = rbd.gravity_torques(model, q)
    with pytest.raises(ValueError, match=word):
        model.set_payload(**bad)
    assert set(model.payloads) == {'link7'}
    np.testing.assert_array_equal(rbd.gravity_torques(model, q), tau)


def test_no_torn_reads_while_the_payload_changes():
    """
    No torn reads while the payload changes.

    One thread computes while another switches the payload between two values: every result
    is the torque of one payload or of the other, never of a mix.
    """
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.InertiaWarning)
        model = rbd.Model.from_urdf_file(demo_urdf_path())
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.uniform(-1, 1, (3, model.nv))
    light = {'mass': 0.5, 'com': (0.0, 0.0, 0.05), 'inertia': (0.001, 0, 0, 0.001, 0, 0.001)}
    heavy = {'mass': 5.0, 'com': (0.05, 0.02, 0.2), 'inertia': (0.05, 0.01, 0, 0.04, 0, 0.03)}
    expected = []
    for payload in (light, heavy):
        model.set_payload('ft_frame', **payload)
        expected.append((rbd.rnea(model, q, qd, qdd), rbd.gravity_torques(model, q),
                         rbd.payload_wrench(model, 'link6', q, qd, qdd)))
    stop = threading.Event()
    mixed = []
    counts = [0, 0]

    def compute():
        while not stop.is_set():
            got = (rbd.rnea(model, q, qd, qdd), rbd.gravity_torques(model, q),
                   rbd.payload_wrench(model, 'link6', q, qd, qdd))
            for k in range(3):
                match = [np.allclose(got[k], ref[k], rtol=0, atol=1e-12) for ref in expected]
                if not any(match):
                    mixed.append((k, got[k]))
                else:
                    counts[match.index(True)] += 1

    worker = threading.Thread(target=compute)
    worker.start()
    try:
        for i in range(2000):
            model.set_payload('ft_frame', **(light, heavy)[i % 2])
            if i % 50 == 0:
                threading.Event().wait(0.001)  # let the worker run between bursts too
    finally:
        stop.set()
        worker.join()
    assert not mixed, mixed[:3]
    assert min(counts) > 0, counts  # both payloads were seen by the computing thread


def test_limits_of_a_floating_base_have_one_entry_per_velocity():
    text = robot('float', link('world'), link('body', inertial(1.0, ixx=0.1, iyy=0.1, izz=0.1)),
                 link('arm', inertial(1.0, ixx=0.1, iyy=0.1, izz=0.1)),
                 joint('base', 'floating', 'world', 'body'),
                 joint('j', 'revolute', 'body', 'arm').replace(
                     '</joint>', '<limit effort="7"/><dynamics damping="0.25"/></joint>'))
    model = rbd.Model.from_urdf(text, compiled=False)
    assert model.nv == 7 and model.joint_names == ('base', 'j')
    assert model.effort_limits.tolist() == [np.inf] * 6 + [7.0]
    assert model.damping.tolist() == [0.0] * 6 + [0.25]
    assert model.friction.tolist() == [0.0] * 7
