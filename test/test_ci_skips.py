"""
The CI rule of conftest.py, checked on a generated test directory.

The CI rule of conftest.py: a skip for a dependency CI installs fails the run under CI=true,
other skips stay skips. Checked on a generated test directory run by a separate pytest.
"""

import os
import re
import shutil
import subprocess
import sys

import pytest
from support.ci import missing_ci_module

HERE = os.path.dirname(os.path.abspath(__file__))

GENERATED = """
import sys

import pytest


def test_numba_missing():
    pytest.skip('numba is not installed')


def test_example_robot_data_missing():
    pytest.skip('example-robot-data is not installed')


def test_mujoco_missing():
    sys.modules['mujoco'] = None  # as if it were not installed
    pytest.importorskip('mujoco')


def test_launch_testing_missing():
    sys.modules['launch_testing'] = None
    pytest.importorskip('launch_testing')


def test_another_reason():
    pytest.skip('Pinocchio before 4.0 gives other torques')
"""

GENERATED_MODULE = """
import sys

import pytest

sys.modules['rclpy'] = None
rclpy = pytest.importorskip('rclpy')


def test_never_runs():
    pass
"""


@pytest.mark.parametrize('reason, module', [
    ('numba is not installed', 'numba'),
    ('example-robot-data is not installed', 'example_robot_data'),
    ("could not import 'pinocchio': No module named 'pinocchio'", 'pinocchio'),
    ("could not import 'sensor_msgs.msg': No module named 'sensor_msgs'", 'sensor_msgs'),
    ("could not import 'launch_testing': No module named 'launch_testing'", None),
    ('Pinocchio before 4.0: its native mimic joints differ', None),
    ('not shipped by this example-robot-data version', None),
    ('numbat is not installed', None),
])
def test_reasons(reason, module, monkeypatch):
    monkeypatch.delenv('RBD_ALLOWED_MISSING', raising=False)
    assert missing_ci_module(reason) == module


def test_a_run_may_allow_some_missing_modules(monkeypatch):
    monkeypatch.setenv('RBD_ALLOWED_MISSING', 'rclpy, pinocchio')
    assert missing_ci_module("could not import 'rclpy': No module named 'rclpy'") is None
    assert missing_ci_module("could not import 'pinocchio': No module named 'x'") is None
    assert missing_ci_module('numba is not installed') == 'numba'


def _run(tmp_path, ci, text):
    """
    Run ``text`` as a test file beside a copy of conftest.py and its helpers.

    Return the exit code, the outcome by test and the output.
    """
    shutil.copy(os.path.join(HERE, 'conftest.py'), tmp_path / 'conftest.py')
    shutil.copytree(os.path.join(HERE, 'support'), tmp_path / 'support')
    (tmp_path / 'test_generated.py').write_text(text)
    env = {k: v for k, v in os.environ.items() if k not in ('CI', 'RBD_ALLOWED_MISSING')}
    if ci:
        env['CI'] = 'true'
    done = subprocess.run([sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-rA',
                           str(tmp_path)], cwd=str(tmp_path), env=env, capture_output=True,
                          text=True, timeout=600)
    outcomes = {}
    for line in done.stdout.splitlines():
        found = re.match(r'(PASSED|FAILED|SKIPPED|ERROR) (?:\[\d+\] )?(\S+)', line)
        if found:
            outcomes[found.group(2).split('::')[-1].rstrip(':')] = found.group(1)
    return done.returncode, outcomes, done.stdout


def test_under_ci_a_missing_dependency_fails(tmp_path):
    code, outcomes, out = _run(tmp_path, True, GENERATED)
    assert code == 1, out
    assert outcomes['test_numba_missing'] == 'FAILED', out
    assert outcomes['test_example_robot_data_missing'] == 'FAILED', out
    assert outcomes['test_mujoco_missing'] == 'FAILED', out
    assert 'missing dependency that CI installs (mujoco)' in out
    assert re.search(r'\b3 failed, 2 skipped\b', out), out  # launch_testing, the other reason


def test_under_ci_a_module_skipped_for_a_missing_dependency_is_an_error(tmp_path):
    code, _, out = _run(tmp_path, True, GENERATED_MODULE)
    assert code not in (0, 5) and 'ERROR test_generated.py' in out, out
    assert 'missing dependency that CI installs (rclpy)' in out


def test_outside_ci_they_are_skips(tmp_path):
    (tmp_path / 'tests').mkdir()
    (tmp_path / 'module').mkdir()
    code, _, out = _run(tmp_path / 'tests', False, GENERATED)
    assert code == 0 and re.search(r'\b5 skipped\b', out) and 'failed' not in out, out
    code, _, out = _run(tmp_path / 'module', False, GENERATED_MODULE)
    assert code == 5 and re.search(r'\b1 skipped\b', out), out  # 5: no test ran
