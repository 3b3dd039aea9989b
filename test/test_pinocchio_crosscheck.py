"""RNEA and gravity torques against Pinocchio on real robot descriptions (example-robot-data).

Random states and random external wrenches on random links (links attached by fixed joints
always among them), compared joint by joint by name; relative error at most 1e-10.
"""

import os

import numpy as np
import pytest

import rbd_dynamics as rbd

from robots import CROSS_CHECK, load, PinocchioPair, robots_directory

pin = pytest.importorskip('pinocchio')
ROOT = robots_directory()
pytestmark = pytest.mark.skipif(ROOT is None, reason='example-robot-data is not installed')

TOL = 1e-10
STATES = 4


def rel_error(ours, ref):
    return np.linalg.norm(np.asarray(ours) - np.asarray(ref)) / max(1.0, np.linalg.norm(ref))


def fixed_children(model):
    """Links that are not the child of a moving joint (merged into a body, or on the base)."""
    own = set(model.body_links)
    return [link for link in model.link_names if link not in own and link != model.root_link]


def random_wrenches(rng, model, count=3):
    links = list(rng.choice(model.link_names, size=min(count, len(model.link_names)),
                            replace=False))
    fixed = fixed_children(model)
    if fixed:
        links.append(fixed[rng.integers(len(fixed))])
    return {link: rng.normal(scale=10.0, size=6) for link in links}


def test_enough_robots():
    assert len(CROSS_CHECK) >= 25
    if ROOT is not None:
        missing = [rel for rel in CROSS_CHECK if not os.path.exists(os.path.join(ROOT, rel))]
        assert not missing


@pytest.fixture(scope='module', params=CROSS_CHECK, ids=lambda rel: os.path.basename(rel))
def pair(request):
    return PinocchioPair(os.path.join(ROOT, request.param), pin)


def test_rnea_with_wrenches(pair):
    model = pair.model
    rng = np.random.default_rng(sum(map(ord, model.name)))
    worst = 0.0
    for _ in range(STATES):
        q = pair.random_q(rng)
        qd = rng.normal(size=model.nv)
        qdd = rng.normal(size=model.nv)
        f_ext = random_wrenches(rng, model)
        ours = rbd.rnea(model, q, qd, qdd, f_ext)
        worst = max(worst, rel_error(ours, pair.rnea(q, qd, qdd, f_ext)))
        worst = max(worst, rel_error(rbd.rnea(model, q, qd, qdd), pair.rnea(q, qd, qdd)))
    assert worst <= TOL


def test_gravity_torques_with_wrenches(pair):
    model = pair.model
    rng = np.random.default_rng(1 + sum(map(ord, model.name)))
    for _ in range(STATES):
        q = pair.random_q(rng)
        f_ext = random_wrenches(rng, model)
        zero = np.zeros(model.nv)
        assert rel_error(rbd.gravity_torques(model, q), pair.gravity(q)) <= TOL
        assert rel_error(rbd.gravity_torques(model, q, f_ext),
                         pair.rnea(q, zero, zero, f_ext)) <= TOL


def test_the_comparison_can_fail(pair):
    """A wrench applied with the wrong sign shows up far above the tolerance."""
    model = pair.model
    rng = np.random.default_rng(5)
    q = pair.random_q(rng)
    zero = np.zeros(model.nv)
    moving = [link for link in model.link_names if model.link_body[link] >= 0]
    link = (fixed_children(model) + moving)[-1] if moving else model.root_link
    wrench = rng.normal(scale=10.0, size=6)
    ref = pair.rnea(q, zero, zero, {link: wrench})
    assert rel_error(rbd.gravity_torques(model, q, {link: wrench}), ref) <= TOL
    if np.linalg.norm(ref - pair.gravity(q)) > 1e-6:  # the wrench reaches some joint
        assert rel_error(rbd.gravity_torques(model, q, {link: -wrench}), ref) > 1e-6


@pytest.mark.parametrize('rel', ['panda_description/urdf/panda.urdf',
                                 'talos_data/robots/talos_full_v2.urdf'])
def test_batches(rel):
    if ROOT is None:
        pytest.skip('example-robot-data is not installed')
    pair = PinocchioPair(os.path.join(ROOT, rel), pin)
    model = pair.model
    rng = np.random.default_rng(11)
    q = np.array([pair.random_q(rng) for _ in range(20)]).reshape(4, 5, model.nq)
    qd = rng.normal(size=(4, 5, model.nv))
    qdd = rng.normal(size=(4, 5, model.nv))
    link = fixed_children(model)[0]
    wrench = rng.normal(size=(4, 5, 6))
    tau = rbd.rnea(model, q, qd, qdd, {link: wrench})
    tau_g = rbd.gravity_torques(model, q)
    assert tau.shape == (4, 5, model.nv)
    for i in range(4):
        for j in range(5):
            ref = pair.rnea(q[i, j], qd[i, j], qdd[i, j], {link: wrench[i, j]})
            assert rel_error(tau[i, j], ref) <= TOL
            assert rel_error(tau_g[i, j], pair.gravity(q[i, j])) <= TOL


def floating_urdf(path, tmp_path):
    """The robot on a URDF ``floating`` joint from a new ``world`` link."""
    with open(path) as stream:
        text = stream.read()
    model = load(path)
    start = text.index('<robot')
    end = text.index('>', start) + 1
    extra = ('<link name="world"/><joint name="root_joint" type="floating">'
             '<parent link="world"/><child link="%s"/></joint>' % model.root_link)
    out = tmp_path / os.path.basename(path)
    out.write_text(text[:end] + extra + text[end:])
    return str(out)


@pytest.mark.parametrize('rel', ['solo_description/robots/solo12.urdf',
                                 'talos_data/robots/talos_full_v2.urdf',
                                 'anymal_c_simple_description/urdf/anymal.urdf'])
def test_floating_base(rel, tmp_path):
    """A URDF floating joint against Pinocchio's free flyer (same q and velocity layout)."""
    if ROOT is None:
        pytest.skip('example-robot-data is not installed')
    path = os.path.join(ROOT, rel)
    model = load(floating_urdf(path, tmp_path))
    assert model.joint_names[0] == 'root_joint' and model.joint_types[0] == 'floating'
    pin_model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    data = pin_model.createData()
    pair = PinocchioPair(path, pin)  # the name maps of the fixed-base robot
    rng = np.random.default_rng(17)
    for _ in range(STATES):
        q_fixed = pair.random_q(rng)
        base = rng.normal(size=7)
        base[3:] /= np.linalg.norm(base[3:])
        q = np.concatenate([base, q_fixed])
        qd = rng.normal(size=model.nv)
        qdd = rng.normal(size=model.nv)
        f_ext = random_wrenches(rng, model)
        f_ext[model.link_names[1]] = rng.normal(size=6)  # the robot's own root link
        pq_fixed, pv_fixed, pa_fixed = pair.pin_state(q_fixed, qd[6:], qdd[6:])
        pq = np.concatenate([base, pq_fixed])
        pv = np.concatenate([qd[:6], pv_fixed])
        pa = np.concatenate([qdd[:6], pa_fixed])
        forces = pin.StdVec_Force()
        for _ in range(pin_model.njoints):
            forces.append(pin.Force.Zero())
        for link, wrench in f_ext.items():
            if link == 'world':
                continue
            frame = pin_model.frames[pin_model.getFrameId(link, pin.BODY)]
            forces[frame.parentJoint] = (forces[frame.parentJoint]
                                         + frame.placement.act(pin.Force(wrench[:3], wrench[3:])))
        ref = pin.rnea(pin_model, data, pq, pv, pa, forces)
        # after the free flyer, Pinocchio's joints keep the fixed-base order and layout
        ref = np.concatenate([ref[:6], pair.fold(ref[6:])])
        assert rel_error(rbd.rnea(model, q, qd, qdd, f_ext), ref) <= TOL
