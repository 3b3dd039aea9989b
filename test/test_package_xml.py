"""
package.xml declares what the code imports, and nothing that nothing imports.

Every import of a third-party module (an ``import`` statement or ``pytest.importorskip``) in
the package and the launch files must map to an ``exec_depend``, one in the tests to an
``exec_depend`` or ``test_depend``; every declared key must be imported somewhere, except the
build and test tooling listed below. Test references with no rosdep key at all (checked
against ros/rosdistro's rosdep files and distribution files) are listed apart: the tests that
need them skip where they are missing, and the README says how to install them.
"""

import ast
import glob
import os
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Top-level module -> rosdep key.
ROSDEP_KEY = {
    'ament_copyright': 'ament_copyright',
    'ament_flake8': 'ament_flake8',
    'ament_index_python': 'ament_index_python',
    'ament_pep257': 'ament_pep257',
    'coal': 'coal',
    'cvxpy': 'python3-cvxpy-pip',
    'diagnostic_msgs': 'diagnostic_msgs',
    'geometry_msgs': 'geometry_msgs',
    'hypothesis': 'python3-hypothesis',
    'launch': 'launch',
    'launch_ros': 'launch_ros',
    'launch_testing': 'launch_testing',
    'launch_testing_ros': 'launch_testing_ros',
    'matplotlib': 'python3-matplotlib',
    'mujoco': 'python3-mujoco-pip',
    'numba': 'python3-numba',
    'numpy': 'python3-numpy',
    'pinocchio': 'pinocchio',
    'pytest': 'python3-pytest',
    'rcl_interfaces': 'rcl_interfaces',
    'rclpy': 'rclpy',
    'rosbags': 'python3-rosbags-pip',
    'rosgraph_msgs': 'rosgraph_msgs',
    'scipy': 'python3-scipy',
    'sensor_msgs': 'sensor_msgs',
    'std_msgs': 'std_msgs',
    'std_srvs': 'std_srvs',
    'nav_msgs': 'nav_msgs',
    'trajectory_msgs': 'trajectory_msgs',
    'urdf_parser_py': 'urdfdom_py',
    'xacro': 'xacro',
    'yaml': 'python3-yaml',
}

# Imported by the tests only, and known to rosdep under no key: installed with pip
# (``pip install example-robot-data``), never declared in package.xml.
PIP_ONLY_TEST_REFERENCES = {'example_robot_data'}

# Declared without an import: the build type and the launch-file test runner.
TOOLING = {'ament_python', 'launch_testing_ros'}


def _imports(paths):
    found = {}
    for path in paths:
        with open(path) as stream:
            tree = ast.parse(stream.read(), path)
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module]
            elif (isinstance(node, ast.Call) and getattr(node.func, 'attr', '') == 'importorskip'
                  and node.args and isinstance(node.args[0], ast.Constant)):
                names = [node.args[0].value]
            for name in names:
                found.setdefault(name.split('.')[0], set()).add(os.path.relpath(path, ROOT))
    return found


def _third_party(found, local):
    return {name: where for name, where in found.items()
            if name not in sys.stdlib_module_names and name not in local}


def _declared():
    root = ET.parse(os.path.join(ROOT, 'package.xml')).getroot()
    tags = ('exec_depend', 'depend', 'test_depend', 'build_depend', 'buildtool_depend')
    return {tag: {el.text.strip() for el in root.iter(tag)} for tag in tags}


def _sources():
    package = glob.glob(os.path.join(ROOT, 'rbd_dynamics', '**', '*.py'), recursive=True)
    return package + glob.glob(os.path.join(ROOT, 'launch', '*.py'))


def _tests():
    return glob.glob(os.path.join(ROOT, 'test', '**', '*.py'), recursive=True)


def _local_test_modules():
    # test modules, and the helper package (imported as support.<module>)
    return {os.path.splitext(os.path.basename(p))[0] for p in _tests()} | {'support'}


def test_every_import_of_the_package_is_an_exec_depend():
    declared = _declared()
    runtime = declared['exec_depend'] | declared['depend']
    used = _third_party(_imports(_sources()), {'rbd_dynamics'})
    unknown = sorted(name for name in used if name not in ROSDEP_KEY)
    assert not unknown, 'no rosdep key known for %s (imported in %s)' % (
        unknown, [sorted(used[n]) for n in unknown])
    missing = {name: sorted(where) for name, where in used.items()
               if ROSDEP_KEY[name] not in runtime}
    assert not missing, 'imported but not an exec_depend in package.xml: %s' % missing


def test_every_import_of_the_tests_is_declared():
    declared = _declared()
    allowed = declared['exec_depend'] | declared['depend'] | declared['test_depend']
    used = _third_party(_imports(_tests()), {'rbd_dynamics'} | _local_test_modules())
    for name in PIP_ONLY_TEST_REFERENCES:
        used.pop(name, None)
    unknown = sorted(name for name in used if name not in ROSDEP_KEY)
    assert not unknown, 'no rosdep key known for %s' % unknown
    missing = {name: sorted(where) for name, where in used.items()
               if ROSDEP_KEY[name] not in allowed}
    assert not missing, 'imported by the tests but not declared in package.xml: %s' % missing


def test_nothing_declared_that_nothing_imports():
    declared = _declared()
    used = _third_party(_imports(_sources() + _tests()),
                        {'rbd_dynamics'} | _local_test_modules())
    used_keys = {ROSDEP_KEY[name] for name in used if name in ROSDEP_KEY}
    everything = set().union(*declared.values())
    unused = sorted(everything - used_keys - TOOLING)
    assert not unused, 'declared in package.xml but imported nowhere: %s' % unused


def test_pip_only_references_stay_out_of_package_xml():
    # rosdep install stops at a key it cannot resolve: the whole workspace would fail
    declared = set().union(*_declared().values())
    spelled = {name.replace('_', '-') for name in PIP_ONLY_TEST_REFERENCES}
    assert not declared & (PIP_ONLY_TEST_REFERENCES | spelled)
    used = _third_party(_imports(_tests()), set())
    assert PIP_ONLY_TEST_REFERENCES <= set(used), 'no longer imported: drop it from the list'
