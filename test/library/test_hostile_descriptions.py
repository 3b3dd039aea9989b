"""The hostile-description corpus against the library: refused, named, bounded in memory."""

import math
import signal
import tracemalloc
import warnings

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest
import rbd_dynamics as rbd
from support.hostile import cases, huge_valid, ROOT_LINK, valid

CASES = cases()


def test_corpus_is_large_enough():
    assert len(CASES) >= 50
    assert len({case for case, _, _ in CASES}) == len(CASES)
    assert all(word for _, _, word in CASES)  # every case names what its error must say


@pytest.fixture
def hang_guard():
    """Fail instead of hanging the suite if a description never comes back (Unix)."""
    def expired(*_):
        raise RuntimeError('description still being processed after 20 s')

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize('case, text, word', CASES, ids=[c[0] for c in CASES])
def test_refused_with_a_named_reason(case, text, word, hang_guard):
    tracemalloc.start()
    try:
        with pytest.raises(rbd.UrdfError) as info:
            rbd.Model.from_urdf(text, root_link=ROOT_LINK.get(case))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert word.lower() in message.lower(), message
    assert isinstance(info.value, ValueError)
    # nothing is expanded: at most a few times the document itself
    assert peak < 4 * len(text.encode('utf-8', errors='replace')) + 8 * 2 ** 20, peak


def test_an_external_dtd_is_never_fetched(hang_guard):
    """A DOCTYPE naming an external DTD loads without touching the network or the disk."""
    text = ('<?xml version="1.0"?><!DOCTYPE robot SYSTEM "http://192.0.2.1/robot.dtd">'
            '<robot name="x"><link name="a"/></robot>')
    model = rbd.Model.from_urdf(text)
    assert model.link_names == ('a',) and model.nv == 0


def test_a_huge_valid_description_loads(hang_guard):
    """
    A huge valid description loads.

    The 3000-link tree of hostile.huge_valid: link i hangs from link (i - 1) // 2 by a joint
    0.2 m above it about (i % 2, (i + 1) % 2, 1), its centre of mass 0.1 m above its origin.
    With only the two joints at the root turned, each holds its branch as one rigid body:
    tau = -a . (R(a, theta) c) x g, with c the first moment of the branch about the joint.
    """
    links = 3000
    model = rbd.Model.from_urdf(huge_valid(links))
    assert model.nv == model.nq == links - 1 and len(model.link_names) == links
    mass = [1.0] + [float('%.3f' % (1.0 + math.sin(i) ** 2)) for i in range(1, links)]
    depth = [0] * links
    branch = [0] * links  # the child of l0 each link hangs from
    for i in range(1, links):
        parent = (i - 1) // 2
        depth[i] = depth[parent] + 1
        branch[i] = i if parent == 0 else branch[parent]
    g = np.array([0.0, 0.0, -9.81])
    q = np.zeros(model.nq)
    angles = {1: 0.7, 2: -1.1}
    for i, theta in angles.items():
        q[model.joint_names.index('j%d' % i)] = theta
    tau = rbd.gravity_torques(model, q)
    assert tau.shape == (links - 1,) and np.all(np.isfinite(tau))
    for i, theta in angles.items():
        axis = np.array([i % 2, (i + 1) % 2, 1.0]) / np.sqrt(2.0)
        moment = sum(mass[k] * (0.2 * (depth[k] - 1) + 0.1)
                     for k in range(1, links) if branch[k] == i)
        c = np.array([0.0, 0.0, moment])
        turned = (c * np.cos(theta) + np.cross(axis, c) * np.sin(theta)
                  + axis * (axis @ c) * (1.0 - np.cos(theta)))
        expected = -axis @ np.cross(turned, g)
        assert abs(expected) > 100.0
        assert tau[model.joint_names.index('j%d' % i)] == pytest.approx(expected, rel=1e-9)


VALID = valid()
NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                    st.sampled_from(['', '-', '1e999', '0x10', '1,5', 'nan nan', '  ', '1 2 3 4']))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_mutated_descriptions_load_or_are_refused(data):
    """
    Mutated descriptions load or are refused.

    Any attribute value replaced, any element cut or any character changed: the loader
    either builds a model with finite torques or raises UrdfError, nothing else.
    """
    text = VALID
    for _ in range(data.draw(st.integers(1, 3))):
        kind = data.draw(st.sampled_from(['value', 'cut', 'char']))
        if kind == 'value':
            quotes = [i for i, c in enumerate(text) if c == '"']
            k = data.draw(st.integers(0, len(quotes) // 2 - 1)) * 2
            text = text[:quotes[k] + 1] + data.draw(NUMBERS) + text[quotes[k + 1]:]
        elif kind == 'cut':
            start = data.draw(st.integers(0, len(text) - 1))
            text = text[:start] + text[start + data.draw(st.integers(1, 80)):]
        else:
            at = data.draw(st.integers(0, len(text) - 1))
            text = text[:at] + data.draw(st.sampled_from('<>"/=& \x00x9-')) + text[at + 1:]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', rbd.InertiaWarning)
            model = rbd.Model.from_urdf(text)
    except rbd.UrdfError:
        return
    tau = rbd.gravity_torques(model, np.full(model.nq, 0.3))
    assert np.all(np.isfinite(tau))
