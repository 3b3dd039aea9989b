"""
``excite`` keeps the robot clear of itself, the floor and keep-out regions, and moves every joint.

The written motion is checked here with an independent computation: Pinocchio's geometry model
of the URDF's collision shapes (the meshes themselves, not capsules) and coal's distances, at
every written point, between every pair of links ``excite`` says it keeps apart, and from the
floor and the keep-out box.
"""

import os
import re
import struct
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics import world as collision
from rbd_dynamics.analysis import AnalysisError
from rbd_dynamics.identification import excite
from rbd_dynamics.resources import demo_urdf_path

from support.robots import robots_directory

pytest.importorskip('scipy')
pytest.importorskip('yaml')
pin = pytest.importorskip('pinocchio')
coal = pytest.importorskip('coal')

from rbd_dynamics.analysis.planned import read_trajectory  # noqa: E402, I100
from rbd_dynamics.cli import excite as excite_cli  # noqa: E402

BOX = {'center': [0.45, 0.0, 0.45], 'size': [0.2, 0.6, 0.3]}


def ur10_path():
    root = robots_directory()
    if root is None:
        pytest.skip('example-robot-data is not installed')
    return os.path.join(root, 'ur_description', 'urdf', 'ur10_robot.urdf')


def run(args, capsys):
    code = excite_cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def left_out(out):
    """Return the link pairs ``excite`` says it does not check."""
    line = re.search(r'not checked, capsules overlapping.*?: (.*)', out)
    if line is None:
        return set()
    # 'a and b', or 'a and b (1 of 3 capsule pairs)': the pair is left out of the check here
    return {frozenset(p.split(' (')[0].split(' and ')) for p in line.group(1).split(', ')}


def shape_distances(urdf_path, trajectory, skip, keep_out=None):
    """
    Least distance [m] between the collision shapes along ``trajectory``, by coal.

    Returns ``(pairs, floor, box)``: between the links of every pair of moving bodies that are
    not parent and child (less ``skip``), of every link whose height can change from the plane
    ``z = 0``, and of every link from the keep-out box ``keep_out`` (``None``: no box).
    """
    model = pin.buildModelFromUrdf(urdf_path)
    folder = os.path.dirname(urdf_path)
    root = robots_directory()
    dirs = [folder] + ([os.path.dirname(os.path.dirname(root))] if root else [])
    geom = pin.buildGeomFromUrdf(model, urdf_path, pin.GeometryType.COLLISION,
                                 package_dirs=dirs)
    data, gdata = model.createData(), pin.GeometryData(geom)
    objects = list(geom.geometryObjects)
    link = [o.name.rsplit('_', 1)[0] for o in objects]
    joint = [o.parentJoint for o in objects]
    pairs = []
    for i in range(len(objects)):
        for j in range(i + 1, len(objects)):
            a, b = joint[i], joint[j]
            if a == b or model.parents[a] == b or model.parents[b] == a:
                continue
            if frozenset((link[i], link[j])) in skip:
                continue
            pairs.append((i, j))
    floor = coal.Halfspace(np.array([0.0, 0.0, 1.0]), 0.0)
    box = None
    if keep_out is not None:
        box = coal.Box(*keep_out['size'])
        box_pose = coal.Transform3s(np.eye(3), np.array(keep_out['center'], dtype=float))
    index = [model.getJointId(n) for n in trajectory.joint_names]
    joints = ET.parse(urdf_path).getroot().iter('joint')
    mimic = [(j.get('name'), j.find('mimic')) for j in joints]
    mimic = [(name, m.get('joint'), float(m.get('multiplier', 1)), float(m.get('offset', 0)))
             for name, m in mimic if m is not None]
    least = {'pairs': np.inf, 'floor': np.inf, 'box': np.inf}
    request, result = coal.DistanceRequest(), coal.DistanceResult()

    def distance(i, shape, pose):
        result.clear()
        placement = gdata.oMg[i]
        own = coal.Transform3s(placement.rotation, placement.translation)
        return coal.distance(objects[i].geometry, own, shape, pose, request, result)

    identity = coal.Transform3s()
    for q_ours in trajectory.positions:
        q = pin.neutral(model)
        for name, value in zip(trajectory.joint_names, q_ours):
            q[model.joints[model.getJointId(name)].idx_q] = value
        for name, master, mult, off in mimic:
            value = q_ours[trajectory.joint_names.index(master)]
            q[model.joints[model.getJointId(name)].idx_q] = mult * value + off
        pin.updateGeometryPlacements(model, data, geom, gdata, q)
        for i, j in pairs:
            value = distance(i, objects[j].geometry, coal.Transform3s(
                gdata.oMg[j].rotation, gdata.oMg[j].translation))
            least['pairs'] = min(least['pairs'], value)
        for i in range(len(objects)):
            if joint[i] > min(index):  # beyond the first joint: its height can change
                least['floor'] = min(least['floor'], distance(i, floor, identity))
            if box is not None:
                least['box'] = min(least['box'], distance(i, box, box_pose))
    return least


@pytest.fixture(scope='module')
def keep_out_file(tmp_path_factory):
    path = tmp_path_factory.mktemp('world') / 'keep_out.yaml'
    path.write_text('boxes:\n  - center: %s\n    size: %s\n' % (BOX['center'], BOX['size']))
    return path


def test_demo_arm_clear_of_itself_the_floor_and_a_box(tmp_path, keep_out_file, capsys):
    out_dir = tmp_path / 'out'
    code, out, err = run([demo_urdf_path(), '--duration', '10', '--harmonics', '4',
                          '--iterations', '40', '--keep-out', keep_out_file,
                          '--out', out_dir], capsys)
    assert code == 0, err
    assert 'clearance: at least' in out and '1 keep-out regions' in out
    trajectory = read_trajectory(str(out_dir / 'excitation.yaml'))
    least = shape_distances(demo_urdf_path(), trajectory, left_out(out), BOX)
    # the shapes lie inside the capsules: at least the clearance, less the start slack
    kept = collision.DEFAULT_CLEARANCE - collision.START_SLACK
    assert least['pairs'] >= kept, least
    assert least['floor'] >= kept, least
    assert least['box'] >= kept, least
    # every joint covers its share: a quarter of its range or 1 rad (0.1 m)
    model = rbd.Model.from_urdf_file(demo_urdf_path(), compiled=False)
    text = open(demo_urdf_path()).read()
    need = excite.coverage_need(model, text, trajectory.positions[0])
    covered = np.ptp(trajectory.positions, axis=0)
    assert np.all(covered >= 0.95 * need), (covered / need)


def test_real_description_stays_above_its_table(tmp_path, capsys):
    path = ur10_path()
    start = ['0', '-1.57', '1.57', '-1.57', '-1.57', '0']  # upper arm up, forearm level
    out_dir = tmp_path / 'out'
    code, out, err = run([path, '--duration', '6', '--harmonics', '3', '--iterations', '30',
                          '--start'] + start + ['--out', out_dir], capsys)
    assert code == 0, err
    trajectory = read_trajectory(str(out_dir / 'excitation.yaml'))
    least = shape_distances(path, trajectory, left_out(out))
    kept = collision.DEFAULT_CLEARANCE - collision.START_SLACK
    assert least['pairs'] >= kept and least['floor'] >= kept, least
    # and it moves: every joint its share
    model = rbd.Model.from_urdf_file(path, compiled=False)
    need = excite.coverage_need(model, open(path).read(), trajectory.positions[0])
    assert np.all(np.ptp(trajectory.positions, axis=0) >= 0.95 * need)


def test_start_pose_in_collision_is_refused_and_nothing_written(tmp_path, capsys):
    # the middle of the UR10's ranges (all zero) holds the wrist below its base's plane
    out_dir = tmp_path / 'ur10'
    code, out, err = run([ur10_path(), '--out', out_dir], capsys)
    assert code == 1
    assert 'the start pose is not clear' in err and 'the floor' in err and '--start' in err
    assert not out_dir.exists() or not os.listdir(out_dir)
    # the pose it suggests is clear: a design from it is written
    suggested = re.search(r'a clear pose near it: --start ([-0-9. ]+)', err).group(1).split()
    code, out, err = run([ur10_path(), '--duration', '6', '--harmonics', '3', '--iterations',
                          '10', '--start'] + suggested + ['--out', out_dir], capsys)
    assert code == 0, err
    os.remove(out_dir / 'excitation.yaml')
    # a keep-out box around the demo arm's upright start pose
    box = tmp_path / 'box.yaml'
    box.write_text('boxes:\n  - {center: [0, 0, 0.8], size: [0.4, 0.4, 0.4]}\n')
    code, out, err = run([demo_urdf_path(), '--keep-out', box, '--out', out_dir], capsys)
    assert code == 1 and 'keep-out box 0' in err
    assert not out_dir.exists() or not os.listdir(out_dir)


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
        collision.read_keep_out(str(path))


def test_capsule_contains_its_points_and_is_tight_on_a_cylinder():
    rng = np.random.default_rng(3)
    for _ in range(20):
        points = rng.normal(size=(200, 3)) * rng.uniform(0.01, 0.5, size=3)
        a, b, r = collision.fit_capsule(points)
        _, _, p, q = collision.closest_points(points, points,
                                              np.broadcast_to(a, points.shape),
                                              np.broadcast_to(b, points.shape))
        assert np.linalg.norm(p - q, axis=1).max() <= r + 1e-12
    # a cylinder's capsule: its radius and its length, along its axis
    element = type('E', (), {'tag': 'cylinder', 'attrib': {'radius': '0.05', 'length': '0.3'},
                             'line': 1})()
    points, extra = collision.shape_points(element)
    a, b, r = collision.fit_capsule(points)
    assert abs(r - 0.05 / np.cos(np.pi / collision.RIM_POINTS)) < 1e-9
    assert abs(np.linalg.norm(b - a) - 0.3) < 1e-9 and abs(abs((b - a)[2]) - 0.3) < 1e-9


def test_segment_distance_against_sampling():
    rng = np.random.default_rng(4)
    a0, a1, b0, b1 = (rng.normal(size=(500, 3)) for _ in range(4))
    a1[:50] = a0[:50]                      # points
    b1[150:200] = b0[150:200]
    b1[50:100] = b0[50:100] + 2.0 * (a1[50:100] - a0[50:100])  # parallel segments
    s, t, p, q = collision.closest_points(a0, a1, b0, b1)
    got = np.linalg.norm(p - q, axis=1)
    u = np.linspace(0.0, 1.0, 401)
    P = a0[:, None] + u[None, :, None] * (a1 - a0)[:, None]
    Q = b0[:, None] + u[None, :, None] * (b1 - b0)[:, None]
    brute = np.linalg.norm(P[:, :, None] - Q[:, None, :], axis=-1).min(axis=(1, 2))
    assert np.all(got <= brute + 1e-12) and np.all(brute - got < 5e-3)


def test_clearance_gradient_matches_differences(keep_out_file):
    text = open(demo_urdf_path()).read()
    model = rbd.Model.from_urdf(text, compiled=False)
    world = collision.Collisions(model, text, keep_out=collision.read_keep_out(
        str(keep_out_file)))
    q = np.random.default_rng(5).uniform(-1.0, 1.0, model.nv)
    q[-1] = 0.02
    g, dg = world.clearances(q[None], gradient=True)
    h = 1e-7
    for k in range(model.nv):
        step = np.zeros(model.nv)
        step[k] = h
        numeric = (world.clearances((q + step)[None])
                   - world.clearances((q - step)[None])) / (2 * h)
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
    np.testing.assert_array_equal(collision.read_mesh(str(binary)), expected)
    np.testing.assert_array_equal(collision.read_mesh(str(ascii_path)), expected)
    with pytest.raises(collision.MeshError, match='format'):
        collision.read_mesh(str(tmp_path / 'mesh.ply'))


def test_split_capsules_hold_every_triangle_of_a_real_mesh():
    mesh = os.path.join(os.path.dirname(os.path.dirname(ur10_path())), 'meshes', 'ur10',
                        'collision', 'forearm.stl')
    vertices, triangles = collision.read_mesh(mesh, faces=True)
    capsules = collision.fit_capsules(vertices, triangles)
    whole = collision.fit_capsule(vertices)
    assert len(capsules) > 1
    assert sum(collision.capsule_volume(c[:3]) for c in capsules) \
        < 0.8 * collision.capsule_volume(whole)
    # points spread over every triangle lie in at least one capsule
    w = np.random.default_rng(7).dirichlet(np.ones(3), size=(len(triangles), 20))
    points = np.einsum('tsk,tkd->tsd', w, vertices[triangles]).reshape(-1, 3)
    outside = np.full(len(points), np.inf)
    for a, b, r, _ in capsules:
        _, _, p, q = collision.closest_points(points, points,
                                              np.broadcast_to(a, points.shape),
                                              np.broadcast_to(b, points.shape))
        outside = np.minimum(outside, np.linalg.norm(p - q, axis=1) - r)
    assert outside.max() <= 1e-12


def test_obj_faces_read_as_triangles(tmp_path):
    path = tmp_path / 'quad.obj'
    path.write_text('v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1/1 2/2 3/3 4/4\n')
    vertices, triangles = collision.read_mesh(str(path), faces=True)
    assert len(vertices) == 4 and triangles.shape == (2, 3)
    path.write_text('v 0 0 0\nf 1 2 3\n')
    with pytest.raises(collision.MeshError, match='not a readable OBJ'):
        collision.read_mesh(str(path))


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
    got = collision.read_mesh(str(path))
    # millimetres, moved 500 mm along the document's z, then Y up turned to Z up
    expected = np.array([[0, 0, 500], [100, 0, 500], [0, 100, 500]]) * 1e-3
    expected = expected @ np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]]).T
    np.testing.assert_allclose(got, np.unique(expected, axis=0), atol=1e-12)


def test_keep_out_regions_leave_links_fixed_to_the_root_alone(tmp_path):
    text = open(demo_urdf_path()).read()
    model = rbd.Model.from_urdf(text, compiled=False)
    keep = tmp_path / 'keep.yaml'
    keep.write_text('planes: [{point: [0, 0, 0.02], normal: [0, 0, 1]}]\n')
    world = collision.Collisions(model, text, keep_out=collision.read_keep_out(str(keep)),
                                 floor=False)
    planes = [name for name in world.names() if name.endswith('keep-out plane 0')]
    assert 'link2 and keep-out plane 0' in planes
    assert not any(name.startswith('base_link ') for name in planes)
