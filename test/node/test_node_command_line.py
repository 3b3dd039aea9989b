"""
The bundled descriptions survive ``--ros-args -p robot_description:="$(cat file)"``.

rcl reads a ``-p`` value as YAML, so a description whose text YAML takes for a mapping (a
``": "`` anywhere, in a comment too) stops the node with "Couldn't parse parameter override
rule". The node is started exactly that way for every description in urdf/.
"""

import glob
import os
import time

import pytest

pytest.importorskip('rclpy')

import rbd_dynamics as rbd  # noqa: E402
from rbd_dynamics.resources import demo_urdf_path  # noqa: E402
from support.ros import NodeProcess  # noqa: E402

BUNDLED = sorted(glob.glob(os.path.join(os.path.dirname(demo_urdf_path()), '*.urdf')))


@pytest.mark.parametrize('path', BUNDLED, ids=[os.path.basename(p) for p in BUNDLED])
def test_description_given_with_dash_p_builds_the_model(path):
    with open(path) as stream:
        text = stream.read()
    name = rbd.Model.from_urdf(text, compiled=False).name
    with NodeProcess(namespace='/cli_%d' % os.getpid(),
                     extra_args=['-p', 'robot_description:=' + text]) as node:
        deadline = time.monotonic() + 120.0
        while time.monotonic() < deadline and node.alive():
            if 'model %r from' % name in node.log():
                break
            time.sleep(0.2)
        log = node.log()
        assert 'model %r from' % name in log, log[-2000:]
        assert node.stop() == 0


def test_a_colon_space_in_the_text_is_what_breaks_dash_p(tmp_path):
    """The failure the bundled descriptions avoid, shown so that the README's caveat holds."""
    text = ('<?xml version="1.0"?>\n<!-- note: a comment -->\n'
            '<robot name="r"><link name="a"/></robot>')
    with NodeProcess(extra_args=['-p', 'robot_description:=' + text]) as node:
        node.proc.wait(30)
        assert node.proc.returncode != 0
        assert "Couldn't parse parameter override rule" in node.log()


@pytest.mark.parametrize('content', [None, 'rbd_dynamics:\n  ros__parameters: [\n'],
                         ids=['missing', 'malformed'])
def test_a_bad_params_file_stops_the_node_with_one_line_and_no_traceback(tmp_path, content):
    path = tmp_path / 'params.yaml'
    if content is not None:
        path.write_text(content)
    with NodeProcess(params_files=[str(path)]) as node:
        node.proc.wait(30)
        log = node.log()
        assert node.proc.returncode == 1, log
        assert 'Traceback' not in log, log
        lines = [line for line in log.splitlines() if 'cannot start' in line]
        assert len(lines) == 1, log
        assert "Couldn't parse params file" in lines[0] and str(path) in lines[0], log
        assert '.c:' not in lines[0], log  # (no C source places)


def test_description_command_gives_the_node_a_text_dash_p_cannot(tmp_path):
    """``python -m rbd_dynamics description``: a params file the node takes, ": " and all."""
    import subprocess
    import sys
    with open(demo_urdf_path()) as stream:
        text = stream.read()
    # a comment holding ": ", which makes -p robot_description:=... a YAML mapping
    text = text.replace('<robot ', '<!-- Author: someone, note: this breaks -p -->\n<robot ', 1)
    path = tmp_path / 'arm.urdf'
    path.write_text(text)
    out = tmp_path / 'description.yaml'
    done = subprocess.run([sys.executable, '-m', 'rbd_dynamics', 'description', str(path),
                           '--out', str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with NodeProcess(namespace='/describe_%d' % os.getpid(), params_files=[str(out)]) as node:
        deadline = time.monotonic() + 120.0
        while time.monotonic() < deadline and node.alive() and 'model ' not in node.log():
            time.sleep(0.2)
        log = node.log()
        assert "model 'demo_arm' from the robot_description parameter" in log, log[-2000:]
        assert node.stop() == 0
    # a file the node would refuse is refused here, and nothing is written
    (tmp_path / 'broken.urdf').write_text('<robot name="r"><link name="a"/><joint/></robot>')
    done = subprocess.run([sys.executable, '-m', 'rbd_dynamics', 'description',
                           str(tmp_path / 'broken.urdf'), '--out', str(tmp_path / 'b.yaml')],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and 'Traceback' not in done.stderr, done.stderr
    assert not (tmp_path / 'b.yaml').exists()


def test_description_command_refuses_what_the_node_refuses_and_writes_root_link(tmp_path):
    import subprocess
    import sys
    floating = ('<robot name="r"><link name="world"/><link name="base"><inertial><mass '
                'value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
                '</inertial></link><joint name="free" type="floating"><parent link="world"/>'
                '<child link="base"/></joint></robot>')
    (tmp_path / 'floating.urdf').write_text(floating)
    done = subprocess.run([sys.executable, '-m', 'rbd_dynamics', 'description',
                           str(tmp_path / 'floating.urdf'), '--out', str(tmp_path / 'f.yaml')],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and 'Traceback' not in done.stderr, done.stderr
    assert not (tmp_path / 'f.yaml').exists()
    done = subprocess.run([sys.executable, '-m', 'rbd_dynamics', 'description',
                           demo_urdf_path(), '--root-link', 'link3'], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '    root_link: "link3"\n' in done.stdout
