from glob import glob
import os

from setuptools import find_packages, setup

package_name = 'rbd_dynamics'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(include=['rbd_dynamics', 'rbd_dynamics.*']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        (os.path.join('share', package_name, 'launch'), glob('launch/*.launch.py')),
        (os.path.join('share', package_name, 'config'), glob('config/*.yaml')),
        (os.path.join('share', package_name, 'urdf'), glob('urdf/*.urdf')),
    ],
    python_requires='>=3.10',
    # rclpy and the message packages come from the ROS 2 installation (or the ros-<distro>-*
    # wheels); they are not pip requirements so that `colcon build` on a ROS install works.
    # numba is the compiled path; without it (colcon on a machine without python3-numba) the
    # NumPy path still works.
    install_requires=['setuptools', 'numpy>=1.21', 'numba>=0.55'],
    extras_require={
        'fast': [],  # numba, now a requirement; kept so that `pip install .[fast]` still works
        'xacro': ['xacro'],
        'sim': ['mujoco>=3.0'],
        # python -m rbd_dynamics bag / trajectory / identify / excite: bags without ROS, YAML,
        # the PNG plot, SciPy for identify (pivoted QR) and excite (SLSQP), cvxpy (with its
        # conic solver Clarabel) for identify's physically consistent solve
        'analysis': ['rosbags>=0.10', 'pyyaml', 'matplotlib', 'scipy', 'cvxpy>=1.4'],
        'test': ['pytest', 'pytest-xdist', 'hypothesis', 'pin', 'example-robot-data', 'xacro',
                 'urdfdom-py', 'rosbags>=0.10', 'pyyaml', 'matplotlib', 'scipy', 'cvxpy>=1.4'],
    },
    zip_safe=True,
    maintainer='rbd_dynamics maintainers',
    maintainer_email='rbd-dynamics@example.com',
    description='Recursive Newton-Euler inverse dynamics from a URDF, with a ROS 2 node for '
                'feedforward and gravity-compensation torques.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'rbd_dynamics_node = rbd_dynamics.ros.node:main',
            'rbd_dynamics_sim = rbd_dynamics.ros.sim_driver:main',
            'rbd_dynamics_trajectory = rbd_dynamics.ros.swings:main',
            'rbd_dynamics_send = rbd_dynamics.ros.send:main',
            'rbd_dynamics_record = rbd_dynamics.ros.record:main',
        ],
    },
)
