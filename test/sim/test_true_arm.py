"""The simulated arm's changes from its description (:mod:`rbd_dynamics.sim.true_arm`)."""

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.sim.true_arm import changed_description


def body_parameters(model, link):
    """Return ``(mass, centre of mass, rotational inertia about it)`` of ``link``'s body."""
    pi = model.inertial_parameters().reshape(-1, 10)[model.body_links.index(link)]
    m, h = pi[0], pi[1:4]
    ixx, ixy, ixz, iyy, iyz, izz = pi[4:]
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    c = h / m
    about_com = inertia - m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
    return m, c, about_com


def test_listed_links_change_and_no_other(urdf):
    nominal = rbd.Model.from_urdf(urdf, compiled=False)
    shift = np.array([0.02, -0.01, 0.0, 0.0, 0.0, 0.015])
    changed = rbd.Model.from_urdf(changed_description(urdf, ['link2', 'link5'], [1.3, 0.75],
                                                      shift), compiled=False)
    for link, factor, delta in (('link2', 1.3, shift[:3]), ('link5', 0.75, shift[3:])):
        m0, c0, i0 = body_parameters(nominal, link)
        m1, c1, i1 = body_parameters(changed, link)
        assert m1 == pytest.approx(factor * m0, rel=1e-12)
        # link2 and link5 are bodies of one link each with an unrotated inertial frame
        np.testing.assert_allclose(c1, c0 + delta, atol=1e-12)
        np.testing.assert_allclose(i1, factor * i0, atol=1e-12)
    for link in ('link1', 'link3', 'link4', 'link6', 'link7'):
        for a, b in zip(body_parameters(nominal, link), body_parameters(changed, link)):
            np.testing.assert_allclose(a, b, atol=1e-14)
    q = np.array([0.3, 0.6, -0.2, -1.2, 0.1, 0.8, 0.0, 0.02])
    assert np.abs(rbd.gravity_torques(changed, q) - rbd.gravity_torques(nominal, q)).max() > 0.5


@pytest.mark.parametrize('links, scale, shift, match', [
    (['no_such_link'], [1.0], [], 'not in the description'),
    (['link2'], [1.0, 2.0, 3.0], [], 'mass_scale has 3 entries'),
    (['link2'], [0.0], [], 'must be positive'),
    (['link2'], [], [0.1, 0.2], 'com_shift has 2 entries'),
    (['link2'], [float('nan')], [], 'finite'),
    (['tool_center_point'], [1.0], [], 'no inertial'),
])
def test_bad_changes_are_refused(urdf, links, scale, shift, match):
    with pytest.raises(ValueError, match=match):
        changed_description(urdf, links, scale, shift)
