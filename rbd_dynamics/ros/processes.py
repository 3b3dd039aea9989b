"""
Start the package's executables as their own processes, the way a launch file does.

A parameters file is written (:mod:`rbd_dynamics.analysis.parameters_file`), the console
script found (or ``python -m module`` where the scripts are not installed), and the process
started with ``--ros-args --params-file``; it is stopped with SIGINT, as ``ros2 launch`` stops
it on Ctrl-C. The demo, the tests and the node benchmark all start processes through
:class:`RosProcess`. Nothing here imports rclpy.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

from ..analysis.parameters_file import write_parameters


def command(script, module):
    """
    Return the command line that runs an executable of the package.

    The installed console script ``script`` (beside the interpreter, as a virtual environment
    installs it, or on ``PATH``), else ``python -m module``.
    """
    here = os.path.dirname(sys.executable)
    for path in (os.path.join(here, script), shutil.which(script)):
        if path and os.path.exists(path):
            return [path]
    return [sys.executable, '-m', module]


NODE = ('rbd_dynamics_node', 'rbd_dynamics.ros.node')
SIM = ('rbd_dynamics_sim', 'rbd_dynamics.ros.sim_driver')
TRAJECTORY = ('rbd_dynamics_trajectory', 'rbd_dynamics.ros.swings')
SEND = ('rbd_dynamics_send', 'rbd_dynamics.ros.send')
RECORD = ('rbd_dynamics_record', 'rbd_dynamics.ros.record')


class RosProcess:
    """
    One executable in its own process, configured by a parameters file.

    Parameters
    ----------
    cmd
        the command line (see :func:`command`).
    params
        name -> value, written to a parameters file for every node of the process.
    namespace
        pushed as ``__ns`` (as a launch file's ``namespace``); ``''``: none.
    params_files
        further parameters files, given before ``params`` (later files win, as in launch).
    ros_args
        further ROS arguments, e.g. ``['-r', 'from:=to', '-p', 'name:=value']``.
    stdout
        where the output goes: ``None`` (inherited), a file object or ``subprocess.DEVNULL``;
        stderr follows it.
    env
        variables added to this process's environment.

    """

    def __init__(self, cmd, params=None, namespace='', params_files=(), ros_args=(),
                 stdout=None, env=None):
        self.dir = tempfile.mkdtemp(prefix='rbd_process_')
        self.params_file = os.path.join(self.dir, 'params.yaml')
        write_parameters(self.params_file, params or {})
        args = list(cmd) + ['--ros-args']
        if namespace:
            args += ['-r', '__ns:=' + namespace]
        for path in list(params_files) + [self.params_file]:
            args += ['--params-file', path]
        args += list(ros_args)
        self.proc = subprocess.Popen(args, stdout=stdout, stderr=subprocess.STDOUT,
                                     env=dict(os.environ, PYTHONUNBUFFERED='1', **(env or {})))

    @property
    def pid(self):
        """Return the process id."""
        return self.proc.pid

    def alive(self):
        """Return whether the process still runs."""
        return self.proc.poll() is None

    def stop(self, timeout=10.0):
        """Interrupt the process (SIGINT), kill it after ``timeout`` [s]; its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode
