"""
RNEA and gravity torques against Pinocchio on real robot descriptions (example-robot-data).

For every robot of ``robots.CROSS_CHECK``: random states and random external wrenches on random
links (always including a link attached by a fixed joint to a moving body, and one on the
immobile base), compared joint by joint by name with Pinocchio's ``rnea`` and
``computeGeneralizedGravity``; the relative error ``|ours - ref| / max(1, |ref|)`` must be at most
1e-10. A few robots are also checked with batched inputs, with another gravity, with Pinocchio's
native mimic joints, and on a floating base against Pinocchio's free flyer.
"""

import os

import numpy as np
import pytest
import rbd_dynamics as rbd
from support.robots import (all_urdfs, BROKEN, CROSS_CHECK, FLOATING_JOINT, has_mimic_joints,
                            load, masters_first, PinocchioPair, robot_id, robots_directory,
                            WORLD_LINK)

pin = pytest.importorskip('pinocchio')
ROOT = robots_directory()
pytestmark = pytest.mark.skipif(ROOT is None, reason='example-robot-data is not installed')

CROSS_CHECK_TOL = 1e-10
STATES = 4

PANDA = 'panda_description/urdf/panda.urdf'
PR2 = 'pr2_description/urdf/pr2.urdf'
TALOS = 'talos_data/robots/talos_full_v2.urdf'
TIAGO_DUAL = 'tiago_description/robots/tiago_dual.urdf'
# Every usable description with mimic joints (for Pinocchio's native mimic joints).
NATIVE_MIMIC = tuple(os.path.relpath(path, ROOT).replace(os.sep, '/') for path in all_urdfs()
                     if os.path.relpath(path, ROOT).replace(os.sep, '/') not in BROKEN
                     and has_mimic_joints(path))
FLOATING = ('solo_description/robots/solo12.urdf', 'anymal_c_simple_description/urdf/anymal.urdf',
            'go2_description/urdf/go2.urdf', TALOS,
            'g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf')
# What our loader says about each unusable description.
BROKEN_MESSAGE = {'ur_description/urdf/ur3.urdf': 'no <link>',
                  'alex_description/urdf/alex_psyonic_hands.urdf': 'index_q1'}


def path_of(rel):
    return os.path.join(ROOT, rel)


def rel_error(ours, ref):
    ref = np.asarray(ref)
    return np.linalg.norm(np.asarray(ours) - ref) / max(1.0, np.linalg.norm(ref))


def assert_close(ours, ref, what):
    err = rel_error(ours, ref)
    assert err <= CROSS_CHECK_TOL, '%s: relative error %.3g (tolerance %g)' % (
        what, err, CROSS_CHECK_TOL)


def link_groups(model):
    """Links fixed to a moving body without being a body of their own, and links on the base."""
    bodies = set(model.body_links)
    merged = [link for link in model.link_names
              if model.link_body[link] >= 0 and link not in bodies]
    base = [link for link in model.link_names if model.link_body[link] < 0]
    return merged, base


def random_wrenches(rng, model, count=3):
    """``{link: (6,)}`` on ``count`` random links, a merged fixed link and a base link."""
    links = {str(link) for link in rng.choice(model.link_names, replace=False,
                                              size=min(count, len(model.link_names)))}
    for group in link_groups(model):
        if group:
            links.add(group[rng.integers(len(group))])
    return {link: rng.normal(scale=10.0, size=6) for link in sorted(links)}


def seed(rel):
    return sum(map(ord, rel))


@pytest.fixture(scope='module', params=CROSS_CHECK, ids=robot_id)
def pair(request):
    return PinocchioPair(path_of(request.param), pin)


def test_the_list_covers_the_joint_kinds():
    assert len(set(CROSS_CHECK)) == len(CROSS_CHECK) >= 25
    assert len({robot_id(rel) for rel in CROSS_CHECK}) == len(CROSS_CHECK)
    missing = [rel for rel in CROSS_CHECK if not os.path.exists(path_of(rel))]
    assert not missing
    models = [load(path_of(rel)) for rel in CROSS_CHECK]
    assert {'revolute', 'continuous', 'prismatic'} <= set().union(*(m.joint_types
                                                                    for m in models))
    assert sum(1 for m in models if m.mimic) >= 5
    assert max(m.nv for m in models) >= 100
    assert sum(1 for m in models if link_groups(m)[0]) >= 25


@pytest.mark.parametrize('rel', sorted(BROKEN), ids=robot_id)
def test_broken_descriptions_are_rejected(rel):
    """The descriptions left out of the comparison really are broken."""
    if not os.path.exists(path_of(rel)):
        pytest.skip('not shipped by this example-robot-data version')
    with pytest.raises(rbd.UrdfError, match=BROKEN_MESSAGE[rel]):
        load(path_of(rel))
    # Pinocchio refuses them too once it reads mimic joints
    with pytest.raises((ValueError, RuntimeError)):
        pin.buildModelFromUrdf(path_of(rel), mimic=True)


def test_names_and_sizes(pair):
    model = pair.model
    pm = pair.pin_model
    # Pinocchio keeps each (1-DoF) mimic joint as a joint of its own
    assert pm.nv == model.nv + len(model.mimic)
    for link in model.link_names:
        assert pm.existFrame(link, pin.BODY), link
    # a wrench on the immobile base reaches no joint, in either library
    rng = np.random.default_rng(seed(model.name))
    q = pair.random_q(rng)
    qd, qdd = rng.normal(size=(2, model.nv))
    tau = rbd.rnea(model, q, qd, qdd)
    for link in link_groups(model)[1]:
        f_ext = {link: rng.normal(scale=10.0, size=6)}
        np.testing.assert_array_equal(rbd.rnea(model, q, qd, qdd, f_ext), tau)
        assert_close(pair.rnea(q, qd, qdd, f_ext), tau, link)


def test_rnea(pair):
    model = pair.model
    rng = np.random.default_rng(seed(model.name))
    for _ in range(STATES):
        q = pair.random_q(rng)
        qd, qdd = rng.normal(size=(2, model.nv))
        f_ext = random_wrenches(rng, model)
        assert_close(rbd.rnea(model, q, qd, qdd), pair.rnea(q, qd, qdd), 'rnea')
        assert_close(rbd.rnea(model, q, qd, qdd, f_ext), pair.rnea(q, qd, qdd, f_ext),
                     'rnea with wrenches on %s' % sorted(f_ext))


def test_gravity_torques(pair):
    model = pair.model
    rng = np.random.default_rng(1 + seed(model.name))
    zero = np.zeros(model.nv)
    for _ in range(STATES):
        q = pair.random_q(rng)
        f_ext = random_wrenches(rng, model)
        assert_close(rbd.gravity_torques(model, q), pair.gravity(q), 'gravity')
        assert_close(rbd.gravity_torques(model, q, f_ext), pair.rnea(q, zero, zero, f_ext),
                     'gravity with wrenches on %s' % sorted(f_ext))


def test_a_wrong_wrench_is_detected(pair):
    """A wrench applied with the wrong sign shows far above the tolerance."""
    model = pair.model
    rng = np.random.default_rng(5)
    q = pair.random_q(rng)
    merged, _ = link_groups(model)
    link = merged[-1] if merged else model.body_links[-1]
    wrench = rng.normal(scale=10.0, size=6)
    ref = pair.rnea(q, np.zeros(model.nv), np.zeros(model.nv), {link: wrench})
    assert_close(rbd.gravity_torques(model, q, {link: wrench}), ref, link)
    assert np.linalg.norm(ref - pair.gravity(q)) > 1e-3  # the wrench reaches some joint
    assert rel_error(rbd.gravity_torques(model, q, {link: -wrench}), ref) > 1e-6


PIN_VERSION = tuple(int(part) for part in pin.__version__.split('.')[:2])


@pytest.mark.skipif(PIN_VERSION < (4, 0), reason='Pinocchio before 4.0: its native mimic joints '
                    'give other torques than 4.x and than the mimic-free model (seen with 3.7.0 '
                    'on panda and pr2)')
@pytest.mark.parametrize('rel', NATIVE_MIMIC, ids=robot_id)
def test_pinocchio_native_mimic_joints(rel, tmp_path):
    """
    Pinocchio's own mimic joints give the same torques.

    Pinocchio's own mimic joints: no folding on our side, the torques compare directly
    (joints renamed so that Pinocchio meets each master first, see robots.masters_first).
    """
    path = tmp_path / os.path.basename(rel)
    path.write_text(masters_first(path_of(rel)))
    pair = PinocchioPair(str(path), pin, mimic=True)
    model = pair.model
    assert model.mimic and pair.pin_model.nv == model.nv
    rng = np.random.default_rng(seed(rel))
    for _ in range(STATES):
        q = pair.random_q(rng)
        qd, qdd = rng.normal(size=(2, model.nv))
        f_ext = random_wrenches(rng, model)
        assert_close(rbd.rnea(model, q, qd, qdd, f_ext), pair.rnea(q, qd, qdd, f_ext), 'rnea')
        assert_close(rbd.gravity_torques(model, q), pair.gravity(q), 'gravity')


def test_every_description_with_mimic_joints_is_compared():
    assert {PANDA, PR2, TALOS, 'romeo_description/urdf/romeo.urdf',
            'baxter_description/urdf/baxter.urdf',
            'tiago_pro_description/robots/tiago_pro.urdf'} <= set(NATIVE_MIMIC)


@pytest.mark.parametrize('rel', (PANDA, 'kinova_description/robots/kinova.urdf', PR2,
                                 'romeo_description/urdf/romeo.urdf'), ids=robot_id)
def test_other_gravity(rel):
    gravity = (1.5, -2.0, -9.0)
    pair = PinocchioPair(path_of(rel), pin, gravity=gravity)
    model = pair.model
    rng = np.random.default_rng(seed(rel))
    for _ in range(STATES):
        q = pair.random_q(rng)
        qd, qdd = rng.normal(size=(2, model.nv))
        assert_close(rbd.gravity_torques(model, q), pair.gravity(q), 'gravity')
        assert_close(rbd.rnea(model, q, qd, qdd), pair.rnea(q, qd, qdd), 'rnea')


@pytest.mark.parametrize('rel', (PANDA, PR2, TALOS, TIAGO_DUAL), ids=robot_id)
def test_batches(rel):
    """A ``(B, nq)`` batch (and a ``(2, 3, nq)`` one) against Pinocchio state by state."""
    pair = PinocchioPair(path_of(rel), pin)
    model = pair.model
    rng = np.random.default_rng(seed(rel))
    batch = 6
    q = np.array([pair.random_q(rng) for _ in range(batch)])
    qd, qdd = rng.normal(size=(2, batch, model.nv))
    merged, _ = link_groups(model)
    f_ext = {link: rng.normal(scale=10.0, size=(batch, 6))
             for link in (merged[0], model.body_links[-1])}
    tau = rbd.rnea(model, q, qd, qdd, f_ext)
    tau_g = rbd.gravity_torques(model, q, f_ext)
    assert tau.shape == tau_g.shape == (batch, model.nv)
    zero = np.zeros(model.nv)
    for s in range(batch):
        single = {link: wrench[s] for link, wrench in f_ext.items()}
        assert_close(tau[s], pair.rnea(q[s], qd[s], qdd[s], single), 'rnea, state %d' % s)
        assert_close(tau_g[s], pair.rnea(q[s], zero, zero, single), 'gravity, state %d' % s)
    shaped = {link: wrench.reshape(2, 3, 6) for link, wrench in f_ext.items()}
    tau_2x3 = rbd.rnea(model, q.reshape(2, 3, -1), qd.reshape(2, 3, -1), qdd.reshape(2, 3, -1),
                       shaped)
    assert tau_2x3.shape == (2, 3, model.nv)
    assert_close(tau_2x3.reshape(batch, -1), tau, '(2, 3) batch')


@pytest.mark.parametrize('rel', FLOATING, ids=robot_id)
def test_floating_base(rel):
    """A URDF floating joint against Pinocchio's free flyer (same q and velocity layout)."""
    pair = PinocchioPair(path_of(rel), pin, floating=True)
    model = pair.model
    assert model.root_link == WORLD_LINK
    assert model.joint_names[0] == FLOATING_JOINT and model.joint_types[0] == 'floating'
    assert pair.pin_model.joints[1].shortname() == 'JointModelFreeFlyer'
    assert (model.nq, model.nv) == (pair.pin_model.nq - len(model.mimic),
                                    pair.pin_model.nv - len(model.mimic))
    rng = np.random.default_rng(seed(rel))
    zero = np.zeros(model.nv)
    for _ in range(STATES):
        q = pair.random_q(rng)
        qd, qdd = rng.normal(size=(2, model.nv))
        f_ext = random_wrenches(rng, model)
        f_ext[model.body_links[0]] = rng.normal(scale=10.0, size=6)  # the robot's own root
        assert_close(rbd.rnea(model, q, qd, qdd), pair.rnea(q, qd, qdd), 'rnea')
        assert_close(rbd.rnea(model, q, qd, qdd, f_ext), pair.rnea(q, qd, qdd, f_ext),
                     'rnea with wrenches on %s' % sorted(f_ext))
        assert_close(rbd.gravity_torques(model, q), pair.gravity(q), 'gravity')
        assert_close(rbd.gravity_torques(model, q, f_ext), pair.rnea(q, zero, zero, f_ext),
                     'gravity with wrenches')
