"""
Print a model summary and the inverse dynamics of a URDF at one state.

    python -m rbd_dynamics [robot.urdf | robot.urdf.xacro [name:=value ...]] [--q ...]
        [--qd ...] [--qdd ...] [--wrench LINK fx fy fz tx ty tz]

Without a file it uses the bundled demo arm. Missing state vectors are zero. ``name:=value``
arguments go to xacro.

    python -m rbd_dynamics bag ROBOT BAG ...          torques along a recorded rosbag2
    python -m rbd_dynamics trajectory ROBOT FILE ...  torques along a planned trajectory
    python -m rbd_dynamics identify ROBOT BAG ...     inertias and drive from recorded efforts
    python -m rbd_dynamics excite ROBOT ...           an excitation for identification
    python -m rbd_dynamics payload ROBOT BAG --link L a payload from recorded efforts
    python -m rbd_dynamics contact ROBOT BAG ...      contact thresholds from free motions
    python -m rbd_dynamics record OUT [TOPIC ...]     record topics into a rosbag2 (rclpy)
    python -m rbd_dynamics description ROBOT ...      a parameters file with the description
    python -m rbd_dynamics precompile                 compile the kernels ahead of time

(see ``python -m rbd_dynamics bag --help``; :mod:`rbd_dynamics.cli`)
"""

import argparse
import os
import sys

import numpy as np

from . import gravity_torques, Model, rnea, UrdfError
from .parsers.files import split_xacro_args
from .resources import demo_urdf_path


def _vector(values, size, name):
    if values is None:
        return np.zeros(size)
    if len(values) != size:
        raise SystemExit('--%s needs %d numbers, got %d' % (name, size, len(values)))
    return np.array(values, dtype=float)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in ('bag', 'trajectory'):
        from .cli.bag import main as analysis_main
        return analysis_main(argv)
    if argv and argv[0] == 'excite':
        from .cli.excite import main as excite_main
        return excite_main(argv[1:])
    if argv and argv[0] == 'payload':
        from .cli.payload import main as payload_main
        return payload_main(argv[1:])
    if argv and argv[0] == 'identify':
        from .cli.identify import main as identify_main
        return identify_main(argv[1:])
    if argv and argv[0] == 'description':
        from .cli.description import main as description_main
        return description_main(argv[1:])
    if argv and argv[0] == 'record':
        from .ros.record import main as record_main
        return record_main(['rbd_dynamics record'] + argv[1:])
    if argv and argv[0] == 'contact':
        from .cli.contact import main as contact_main
        return contact_main(argv[1:])
    if argv and argv[0] == 'precompile':
        from .precompile import main as precompile_main
        return precompile_main(argv[1:])
    parser = argparse.ArgumentParser(prog='python -m rbd_dynamics', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('urdf', nargs='?', help='URDF or xacro file (default: the bundled demo '
                        'arm)')
    parser.add_argument('--root-link', default=None)
    parser.add_argument('--q', nargs='+', type=float)
    parser.add_argument('--qd', nargs='+', type=float)
    parser.add_argument('--qdd', nargs='+', type=float)
    parser.add_argument('--wrench', nargs=7, action='append',
                        metavar=('LINK', 'FX', 'FY', 'FZ', 'TX', 'TY', 'TZ'),
                        help='external wrench on LINK: fx fy fz tx ty tz (link frame)')
    try:
        argv, xacro_args = split_xacro_args(argv)
    except UrdfError as err:
        print(str(err), file=sys.stderr)
        return 1
    args = parser.parse_args(argv)
    path = args.urdf or demo_urdf_path()
    try:
        # one state: the NumPy path answers at once, compiling the kernels would take seconds
        model = Model.from_urdf_file(path, root_link=args.root_link, xacro_args=xacro_args,
                                     compiled=False)
    except (OSError, UrdfError) as err:
        print('cannot load %s: %s' % (path, err), file=sys.stderr)
        return 1
    q = _vector(args.q, model.nq, 'q')
    qd = _vector(args.qd, model.nv, 'qd')
    qdd = _vector(args.qdd, model.nv, 'qdd')
    f_ext = {w[0]: np.array(w[1:], dtype=float) for w in args.wrench or []}
    try:
        tau = rnea(model, q, qd, qdd, f_ext)
        tau_g = gravity_torques(model, q, f_ext)
    except (KeyError, ValueError) as err:
        print(str(err), file=sys.stderr)
        return 1
    print('%s: %s' % (path, model))
    for note in model.warnings:
        print('warning: %s' % note)
    if model.mimic:
        print('mimic joints: %s' % ', '.join('%s = %g * %s + %g' % (m, k, master, o)
                                             for m, (master, k, o) in model.mimic.items()))
    width = max(len(n) for n in model.joint_names) if model.joint_names else 5
    print('%-*s %12s %12s %12s' % (width, 'joint', 'q', 'tau', 'tau_gravity'))
    for i, name in enumerate(model.joint_names):
        print('%-*s %12.5f %12.5f %12.5f' % (width, name, q[i] if model.nq == model.nv else
                                             float('nan'), tau[i], tau_g[i]))
    return 0


if __name__ == '__main__':
    code = main()
    if sys.argv[1:2] == ['precompile']:
        # After a compilation the interpreter's teardown of the compiler's objects takes about
        # a second, and numba has written every kernel to its cache as it compiled it: leave
        # at once (atexit handlers do not run: a profiler's or coverage's report, numba's
        # NUMBA_CHROME_TRACE file).
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):  # no stream, or a closed pipe
                pass
        os._exit(code)
    sys.exit(code)
