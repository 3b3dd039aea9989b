"""
The robot's world: capsules, clearances and their gradients, meshes and keep-out files.

Capsules hold their shapes, clearances and gradients agree with sampling and differences, and
meshes and keep-out files are read as they are written.
"""

import os
import struct

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics import world
from rbd_dynamics.analysis import AnalysisError
from rbd_dynamics.resources import demo_urdf_path

from support.robots import ur10_path

pytest.importorskip('scipy')
pytest.importorskip('yaml')

BOX = {'center': [0.45, 0.0, 0.45], 'size': [0.2, 0.6, 0.3]}


@pytest.fixture(scope='module')
def keep_out_file(tmp_path_factory):
    path = tmp_path_factory.mktemp('world') / 'keep_out.yaml'
    path.write_text('boxes:\n  - center: %s\n    size: %s\n' % (BOX['center'], BOX['size']))
    return path


@pytest.mark.parametrize('text, message', [
    ('boxes: [{center: [0, 0], size: [1, 1, 1]}]', 'center must be three numbers'),
    ('boxes: [{center: [0, 0, 0], size: [1, 0, 1]}]', 'size must be positive'),
    ('planes: [{point: [0, 0, 0], normal: [0, 0, 0]}]', 'the normal is zero'),
    ('spheres: []', 'expected a mapping of planes and boxes'),
    ('planes: [1, 2]', 'expected the keys point, normal'),
    ('{', 'is not YAML'),
])
def test_keep_out_file_errors_named(tmp_path, text, message):
    path = tmp_path / 'keep.yaml'
    path.write_text(text)
    with pytest.raises(AnalysisError, match=message):
        world.read_keep_out(str(path))


def test_capsule_contains_its_points_and_is_tight_on_a_cylinder():
    rng = np.random.default_rng(3)
    for _ in range(20):
        points = rng.normal(size=(200, 3)) * rng.uniform(0.01, 0.5, size=3)
        a, b, r = world.fit_capsule(points)
        _, _, p, q = world.closest_points(points, points, np.broadcast_to(a, points.shape),
                                          np.broadcast_to(b, points.shape))
        assert np.linalg.norm(p - q, axis=1).max() <= r + 1e-12
    # a cylinder's capsule: its radius and its length, along its axis
    element = type('E', (), {'tag': 'cylinder', 'attrib': {'radius': '0.05', 'length': '0.3'},
                             'line': 1})()
    points, extra = world.shape_points(element)
    a, b, r = world.fit_capsule(points)
    assert abs(r - 0.05 / np.cos(np.pi / world.RIM_POINTS)) < 1e-9
    assert abs(np.linalg.norm(b - a) - 0.3) < 1e-9 and abs(abs((b - a)[2]) - 0.3) < 1e-9


def test_segment_distance_against_sampling():
    rng = np.random.default_rng(4)
    a0, a1, b0, b1 = (rng.normal(size=(500, 3)) for _ in range(4))
    a1[:50] = a0[:50]                      # points
    b1[150:200] = b0[150:200]
    b1[50:100] = b0[50:100] + 2.0 * (a1[50:100] - a0[50:100])  # parallel segments
    s, t, p, q = world.closest_points(a0, a1, b0, b1)
    got = np.linalg.norm(p - q, axis=1)
    u = np.linspace(0.0, 1.0, 401)
    P = a0[:, None] + u[None, :, None] * (a1 - a0)[:, None]
    Q = b0[:, None] + u[None, :, None] * (b1 - b0)[:, None]
    brute = np.linalg.norm(P[:, :, None] - Q[:, None, :], axis=-1).min(axis=(1, 2))
    assert np.all(got <= brute + 1e-12) and np.all(brute - got < 5e-3)


def test_clearance_gradient_matches_differences(keep_out_file):
    text = open(demo_urdf_path()).read()
    model = rbd.Model.from_urdf(text, compiled=False)
    collisions = world.Collisions(model, text, keep_out=world.read_keep_out(
        str(keep_out_file)))
    q = np.random.default_rng(5).uniform(-1.0, 1.0, model.nv)
    q[-1] = 0.02
    g, dg = collisions.clearances(q[None], gradient=True)
    h = 1e-7
    for k in range(model.nv):
        step = np.zeros(model.nv)
        step[k] = h
        numeric = (collisions.clearances((q + step)[None])
                   - collisions.clearances((q - step)[None])) / (2 * h)
        np.testing.assert_allclose(dg[0, :, k], numeric[0], atol=1e-5)


def test_stl_binary_and_ascii_read_alike(tmp_path):
    triangles = np.random.default_rng(6).normal(size=(5, 3, 3)).astype('<f4')
    binary = tmp_path / 'mesh.stl'
    with open(binary, 'wb') as stream:
        stream.write(b'\0' * 80 + struct.pack('<I', len(triangles)))
        for tri in triangles:
            stream.write(np.zeros(3, '<f4').tobytes() + tri.tobytes() + b'\0\0')
    ascii_path = tmp_path / 'mesh_ascii.stl'
    lines = ['solid m'] + ['facet normal 0 0 0\nouter loop\n%s\nendloop\nendfacet'
                           % '\n'.join('vertex %r %r %r' % tuple(map(float, v)) for v in tri)
                           for tri in triangles] + ['endsolid m']
    ascii_path.write_text('\n'.join(lines))
    expected = np.unique(triangles.reshape(-1, 3).astype(float), axis=0)
    np.testing.assert_array_equal(world.read_mesh(str(binary)), expected)
    np.testing.assert_array_equal(world.read_mesh(str(ascii_path)), expected)
    with pytest.raises(world.MeshError, match='format'):
        world.read_mesh(str(tmp_path / 'mesh.ply'))


def test_split_capsules_hold_every_triangle_of_a_real_mesh():
    mesh = os.path.join(os.path.dirname(os.path.dirname(ur10_path())), 'meshes', 'ur10',
                        'collision', 'forearm.stl')
    vertices, triangles = world.read_mesh(mesh, faces=True)
    capsules = world.fit_capsules(vertices, triangles)
    whole = world.fit_capsule(vertices)
    assert len(capsules) > 1
    assert sum(world.capsule_volume(c[:3]) for c in capsules) \
        < 0.8 * world.capsule_volume(whole)
    # points spread over every triangle lie in at least one capsule
    w = np.random.default_rng(7).dirichlet(np.ones(3), size=(len(triangles), 20))
    points = np.einsum('tsk,tkd->tsd', w, vertices[triangles]).reshape(-1, 3)
    outside = np.full(len(points), np.inf)
    for a, b, r, _ in capsules:
        _, _, p, q = world.closest_points(points, points, np.broadcast_to(a, points.shape),
                                          np.broadcast_to(b, points.shape))
        outside = np.minimum(outside, np.linalg.norm(p - q, axis=1) - r)
    assert outside.max() <= 1e-12


def test_obj_faces_read_as_triangles(tmp_path):
    path = tmp_path / 'quad.obj'
    path.write_text('v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1/1 2/2 3/3 4/4\n')
    vertices, triangles = world.read_mesh(str(path), faces=True)
    assert len(vertices) == 4 and triangles.shape == (2, 3)
    path.write_text('v 0 0 0\nf 1 2 3\n')
    with pytest.raises(world.MeshError, match='not a readable OBJ'):
        world.read_mesh(str(path))


DAE = """<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="0.001"/><up_axis>Y_UP</up_axis></asset>
  <library_geometries><geometry id="g"><mesh>
    <source id="p"><float_array id="pa" count="9">0 0 0 100 0 0 0 100 0</float_array></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s">
    <node><translate>0 0 500</translate><instance_geometry url="#g"/></node>
  </visual_scene></library_visual_scenes>
</COLLADA>
"""


def test_collada_vertices_placed_by_their_scene(tmp_path):
    path = tmp_path / 'part.dae'
    path.write_text(DAE)
    got = world.read_mesh(str(path))
    # millimetres, moved 500 mm along the document's z, then Y up turned to Z up
    expected = np.array([[0, 0, 500], [100, 0, 500], [0, 100, 500]]) * 1e-3
    expected = expected @ np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]]).T
    np.testing.assert_allclose(got, np.unique(expected, axis=0), atol=1e-12)


def test_keep_out_regions_leave_links_fixed_to_the_root_alone(tmp_path):
    text = open(demo_urdf_path()).read()
    model = rbd.Model.from_urdf(text, compiled=False)
    keep = tmp_path / 'keep.yaml'
    keep.write_text('planes: [{point: [0, 0, 0.02], normal: [0, 0, 1]}]\n')
    collisions = world.Collisions(model, text, keep_out=world.read_keep_out(str(keep)),
                                  floor=False)
    planes = [name for name in collisions.names() if name.endswith('keep-out plane 0')]
    assert 'link2 and keep-out plane 0' in planes
    assert not any(name.startswith('base_link ') for name in planes)
