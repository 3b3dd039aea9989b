"""
The packed model's layout (:mod:`rbd_dynamics.compiled.layout`, :mod:`.packed`).

The reader gives back what :class:`~rbd_dynamics.compiled.packed.PackedModel` wrote: the sizes,
the tree, the inertias (in the rotated body frames whose z is the joint axis) and the links;
its views share the blob's memory.
"""

import numpy as np
from rbd_dynamics.compiled import layout
from rbd_dynamics.compiled.packed import PackedModel
from support.compiled import load, MODELS


def test_decode_reads_what_the_packed_model_wrote(code_model):
    for model in (code_model, load(MODELS['demo_arm'])):
        packed = PackedModel(model)
        view = layout.decode(packed.blob)
        assert list(view.header) == [model.nb, model.nqf, model.nvf, model.nq, model.nv]
        assert list(view.body_ints[:, layout.BI_PARENT]) == list(model.parent)
        assert list(view.q_src) == list(model.q_src) and list(view.v_src) == list(model.v_src)
        np.testing.assert_array_equal(view.gravity, model.gravity)
        eom = layout.decode_eom(packed.blob)
        assert eom.links.shape == (len(model.link_names), layout.LINK_FLOATS)
        assert [int(b) for b in eom.links[:, layout.L_BODY]] == \
            [model.link_body[link] for link in model.link_names]
        # views, not copies
        view.work[0, 0] = 123.0
        assert packed.work[0, 0] == 123.0 and np.shares_memory(view.work, packed.blob)


def test_inertias_are_packed_in_the_turned_body_frames(code_model):
    packed = PackedModel(code_model)
    for i, inertia in enumerate(code_model.inertia):
        R = layout.rot6(packed.rotation[i])
        turned = R.T @ inertia @ R
        row = packed.inertia[i]
        assert row[layout.IN_MASS] == turned[3, 3]
        np.testing.assert_allclose(row[layout.IN_H:layout.IN_H + 3],
                                   (turned[2, 4], turned[0, 5], turned[1, 3]), atol=1e-15)
        np.testing.assert_allclose(
            row[layout.IN_ROT:layout.IN_ROT + 6], turned[0, [0, 1, 2]].tolist()
            + turned[1, [1, 2]].tolist() + [turned[2, 2]], atol=1e-15)


def test_z_to_axis_turns_z_onto_the_axis():
    rng = np.random.default_rng(6)
    axes = [np.array(a, dtype=float) for a in ((0, 0, 1), (0, 0, -1), (1, 0, 0))]
    axes += [v / np.linalg.norm(v) for v in rng.normal(size=(5, 3))]
    for axis in axes:
        Q = layout.z_to_axis(axis)
        np.testing.assert_allclose(Q @ [0, 0, 1], axis, atol=1e-15)
        np.testing.assert_allclose(Q @ Q.T, np.eye(3), atol=1e-15)
        assert np.linalg.det(Q) > 0
    np.testing.assert_array_equal(layout.z_to_axis(np.array([0.0, 0.0, 1.0])), np.eye(3))
