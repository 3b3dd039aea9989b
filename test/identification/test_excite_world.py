"""
``excite`` keeps the robot clear of itself, the floor and keep-out regions, and moves every joint.

The written motion is checked here with an independent computation: Pinocchio's geometry model
of the URDF's collision shapes (the meshes themselves, not capsules) and coal's distances, at
every written point, between every pair of links ``excite`` says it keeps apart, and from the
floor and the keep-out box.
"""

import os
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics import excitation as excite, world as collision
from rbd_dynamics.resources import demo_urdf_path

from support.robots import robots_directory, ur10_path

pytest.importorskip('scipy')
pytest.importorskip('yaml')
pin = pytest.importorskip('pinocchio')
coal = pytest.importorskip('coal')

from rbd_dynamics.analysis.planned import read_trajectory  # noqa: E402, I100
from rbd_dynamics.cli import excite as excite_cli  # noqa: E402

BOX = {'center': [0.45, 0.0, 0.45], 'size': [0.2, 0.6, 0.3]}


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
