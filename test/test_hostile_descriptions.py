"""The hostile-description corpus against the library: refused, named, bounded in memory."""

import signal
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import rbd_dynamics as rbd

from hostile import cases, huge_valid, ROOT_LINK, valid

CASES = cases()


def test_corpus_is_large_enough():
    assert len(CASES) >= 50
    assert len({case for case, _, _ in CASES}) == len(CASES)


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
    model = rbd.Model.from_urdf(huge_valid(3000))
    assert model.nv == 2999 and len(model.link_names) == 3000
    tau = rbd.gravity_torques(model, [0.1] * model.nq)
    assert tau.shape == (2999,) and all(abs(t) < 1e9 for t in tau)


VALID = valid()
NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                    st.sampled_from(['', '-', '1e999', '0x10', '1,5', 'nan nan', '  ', '1 2 3 4']))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_mutated_descriptions_load_or_are_refused(data):
    """Any attribute value replaced, any element cut or any character changed: the loader
    either builds a model with finite torques or raises UrdfError, nothing else."""
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
