"""
``python -m rbd_dynamics payload ROBOT BAG [BAG ...] --link LINK [--params-file FILE] ...``.

(``[--wrench TOPIC] [--out DIR] [name:=value ...]`` and the options of ``--help``.)
Estimates the payload held by a link (:mod:`.payload`) from a recording of the arm moving, or
resting in several poses, with it, and writes ``DIR/payload.yaml`` (node parameters). Exit
codes: 0 written, 1 unusable input (the message names it), 2 a command line that does not
parse, 3 the recording does not determine the payload's mass and centre of mass, or shows
no payload (a mass within :data:`NO_PAYLOAD` standard deviations of zero, or efforts below
:data:`NO_PAYLOAD_EFFECT` of the residual). A centre of mass
farther than :data:`COM_FAR` from the link is written with a warning.
"""

import json
import os
import sys

import numpy as np

from .common import add_recording_options, holds, recordings_parser, robot_and_bags
from ..analysis import AnalysisError, exit_code, require
from ..analysis.parameters_file import parameters_text
from ..analysis.robot import load_description
from ..identification import hold
from ..identification.payload import estimate, joint_columns, NotDeterminedError, \
    sensor_columns
from ..identification.recordings import held_model, read_states, recording
from ..identification.units import read_drive
from ..parsers.urdf import joint_limits

FILE_NAME = 'payload.yaml'
#: A mass within this many standard deviations of zero is no payload: refused (exit 3).
NO_PAYLOAD = 2.0
#: Nor is a payload whose efforts (or wrench) are less than this share of what the model
#: leaves unexplained with it (RMS over the channels): an arm's model error, fitted as a
#: payload, is a few grams far from the link.
NO_PAYLOAD_EFFECT = 0.5
#: A joint's friction change is estimated where it moves faster than this many times its
#: Coulomb width in this share of the samples (else its friction is kept as the file says).
FRICTION_SPEED, FRICTION_SHARE = 2.0, 0.1
#: A centre of mass farther than this from the link's origin [m] is flagged: beyond what a
#: gripper or a tool on a flange holds, it more likely tells a model or recording problem.
COM_FAR = 0.3
WRENCH_TYPE = 'geometry_msgs/msg/WrenchStamped'
#: States per regressor batch.
CHUNK = 20000

_HELP = """Estimate the payload a link holds (a gripped tool or object): mass, centre of mass
and, where the motion determines it, rotational inertia (otherwise a point mass), physically
consistent, with a standard deviation per value. From the joint efforts of a recording of the
arm moving (or resting in several poses) with it, on top of ROBOT (ideally identify's
identified.urdf) and the drive of --params-file (drive.yaml: friction, armature,
drive.effort_scale); or, with --wrench TOPIC, from a wrist force/torque sensor's
geometry_msgs/WrenchStamped (its frame_id a link rigidly joined to --link). Writes DIR/%s (node
parameters payload.*, for --params-file) and prints the equivalent ~/payload message.""" % (
    FILE_NAME)


def _parser():
    parser = recordings_parser(
        'payload', _HELP, 'ROBOT BAG [BAG ...] --link LINK [--params-file FILE] '
        '[--wrench TOPIC] [--out DIR] [options] [name:=value ...]', 'the rosbag2 recordings')
    parser.add_argument('--link', required=True, help='the link holding the payload')
    parser.add_argument('--params-file', metavar='FILE',
                        help="the arm's drive: a node parameters file (identify's drive.yaml) "
                             'with drive.viscous, coulomb, armature, coulomb_velocity, '
                             "effort_scale (default: the description's damping and friction)")
    parser.add_argument('--wrench', metavar='TOPIC',
                        help='estimate from this geometry_msgs/WrenchStamped topic of a '
                             'force/torque sensor instead of the joint efforts')
    add_recording_options(parser)
    parser.add_argument('--hold', action='append', metavar='JOINT=VALUE',
                        help='hold a joint fixed at this position [rad or m] (repeatable); '
                             'joints not recorded, or standing still, are held without it')
    parser.add_argument('--no-offset', action='store_true',
                        help='do not estimate a constant offset per joint effort (sensor axis)')
    parser.add_argument('--keep-friction', action='store_true',
                        help="take the drive's viscous and Coulomb friction as --params-file "
                             'gives them (default: estimate how much each changed since, on this '
                             'recording: warmer or loaded gears)')
    parser.add_argument('--out', default='.', metavar='DIR',
                        help='directory for %s (default: the current one)' % FILE_NAME)
    parser.add_argument('--root-link', default=None, help='root of the model')
    return parser


def run(args, out=None):
    """Run the command for parsed arguments; the exit code."""
    out = sys.stdout if out is None else out
    require('payload', 'scipy', 'cvxpy')
    from ..analysis import write_all
    robot, bags, xacro_args = robot_and_bags('payload', args.inputs)
    text, model = load_description(robot, xacro_args, args.root_link)
    from ..analysis.pipeline import check_model
    check_model(model)
    if args.link not in model.link_body:
        raise AnalysisError('--link %r is not a link of the description (links: %s)'
                            % (args.link, ', '.join(sorted(model.link_body))))
    nuisance = None
    if args.wrench:
        A, b, channels, names, unit = _from_wrench(args, model, bags)
    else:
        A, b, channels, names, unit, nuisance = _from_efforts(args, model, text, bags)
    result = estimate(A, b, channels, offsets=not args.no_offset, nuisance=nuisance)
    result.link = args.link
    effect = float(np.sqrt((result.effect ** 2).sum() / max((result.rms ** 2).sum(), 1e-300)))
    if not (result.mass > NO_PAYLOAD * result.std['mass'] and effect >= NO_PAYLOAD_EFFECT):
        raise NotDeterminedError(
            'no payload on %s: the best fit is %.4g kg +- %.2g with its centre of mass %.3g m '
            'away, and it explains %.2g times what the model leaves unexplained (a payload: '
            'more than %g standard deviations of mass, and %g times). Nothing written; record '
            'with the payload held, or check the link and the drive file'
            % (args.link, result.mass, result.std['mass'], np.linalg.norm(result.com),
               effect, NO_PAYLOAD, NO_PAYLOAD_EFFECT))
    if args.wrench:  # the sensor's bias, as it reads: b is the negative of the reading
        result.offsets = -result.offsets
    used = [n for n, c in zip(names, channels) if c]
    units = [u for u, c in zip(unit, channels) if c]
    text_out = payload_yaml(result, bags)
    written = write_all(args.out, {FILE_NAME: text_out})
    out.write(summary(result, used, units, args.wrench))
    out.write('wrote %s\n' % ', '.join(written))
    distance = float(np.linalg.norm(result.com))
    if distance > COM_FAR:
        sys.stderr.write('payload: warning: the centre of mass is %.3g m from the origin of %s '
                         '(more than %g m): check that the payload is held by that link and '
                         "that the arm's model and drive are this arm's before using it\n"
                         % (distance, args.link, COM_FAR))
    return 0


def _from_efforts(args, model, text, bags):
    """
    Return the payload's rows from the joint efforts.

    ``(A, b, channels, names, units, nuisance)``: ``nuisance`` ``(n, nv, 2)`` each joint's
    velocity and smooth sign (its friction's change, estimated alongside), or ``None`` with
    ``--keep-friction``.
    """
    from ..drive import drive_columns, drive_torques
    from ..dynamics import rnea
    states = [read_states(b, args.topic, model) for b in bags]
    held = hold.choose(model, joint_limits(text), states, holds(args.hold))
    described = model
    if held:
        model = held_model(text, held, args.root_link)
    fixed = (set(described.joint_names) | set(described.mimic)) \
        - set(model.joint_names) - set(model.mimic)
    drive = read_drive(args.params_file, model, '--params-file')
    if args.link not in model.link_body or model.link_body[args.link] < 0:
        raise AnalysisError('no recorded joint moves --link %s (held: %s)'
                            % (args.link, '; '.join(held.summary()) or 'none'))
    A, b, friction = [], [], []
    for path, s in zip(bags, states):
        r = recording(path, s, model, args.window, args.max_gap, None, fixed)
        for first in range(0, len(r), CHUNK):
            part = slice(first, first + CHUNK)
            q, qd, qdd = r.q[part], r.qd[part], r.qdd[part]
            arm = rnea(model, q, qd, qdd) + drive_torques(
                qd, qdd, drive['viscous'], drive['coulomb'], drive['armature'],
                drive['coulomb_velocity'])
            b.append(r.effort[part] * drive['effort_scale'] - drive['effort_offset'] - arm)
            A.append(joint_columns(model, args.link, q, qd, qdd))
            # the friction's change since the drive was identified: viscous and Coulomb
            friction.append(drive_columns(qd, None, drive['coulomb_velocity'],
                                          ('viscous', 'coulomb')))
    A, b = np.concatenate(A), np.concatenate(b)
    nuisance = None
    if not args.keep_friction:
        nuisance = np.concatenate(friction)
        # only where the joint moves: a joint at rest (static poses) shows its friction not at
        # all, and the columns would fit velocity noise
        speed = np.abs(nuisance[:, :, 0])
        moving = (speed > FRICTION_SPEED * drive['coulomb_velocity']).mean(axis=0) \
            >= FRICTION_SHARE
        nuisance[:, ~moving, :] = 0.0
    # the joints whose torques the payload moves
    channels = np.abs(A).max(axis=(0, 2)) > 0
    units = ['N' if t == 'prismatic' else 'N m' for t in model.joint_types]
    return A, b, channels, list(model.joint_names), units, nuisance


def _from_wrench(args, model, bags):
    """Return the payload's rows from a wrench topic: ``(A, b, channels, names, units)``."""
    from ..dynamics import payload_wrench
    A, b, frames = [], [], set()
    for path in bags:
        q, qd, qdd, wrench, frame = _wrench_rows(path, args, model)
        frames.add(frame)
        if len(frames) > 1:
            raise AnalysisError('the wrenches come in several frames: %s'
                                % ', '.join(sorted(frames)))
        # what the sensor reads of the payload alone: the modelled bodies beyond it taken off,
        # and the sign turned (the reading is the wrench on the robot)
        b.append(-(wrench + payload_wrench(model, frame, q, qd, qdd)))
        A.append(sensor_columns(model, args.link, frame, q, qd, qdd))
    names = ['force x', 'force y', 'force z', 'torque x', 'torque y', 'torque z']
    return (np.concatenate(A), np.concatenate(b), np.ones(6, dtype=bool), names,
            ['N'] * 3 + ['N m'] * 3)


def _wrench_rows(path, args, model):
    """Return the joint states at the wrench stamps of one bag: ``(q, qd, qdd, wrench, frame)``."""
    from ..analysis.bag import open_bag, read_joint_states
    from ..analysis.merge import merge_joint_states
    from ..analysis.pipeline import state_derivatives
    states = read_joint_states(path, args.topic)
    if not states.groups:
        raise AnalysisError('%s has no joint states on %s' % (path, args.topic))
    try:
        merged = merge_joint_states(states.groups, model, args.max_gap)
    except AnalysisError as err:
        raise AnalysisError('%s: %s' % (path, err)) from None
    qd, qdd = state_derivatives(merged, args.window)
    reader = open_bag(path)
    try:
        conns = [c for c in reader.connections if c.topic == args.wrench]
        if not conns:
            raise AnalysisError('%s has no topic %s' % (path, args.wrench))
        if any(c.msgtype != WRENCH_TYPE for c in conns):
            raise AnalysisError('topic %s is not %s' % (args.wrench, WRENCH_TYPE))
        stamps, values, frames = [], [], set()
        for conn, _, raw in reader.messages(connections=conns):
            msg = reader.deserialize(raw, conn.msgtype)
            stamps.append(msg.header.stamp.sec * 10 ** 9 + msg.header.stamp.nanosec)
            f, t = msg.wrench.force, msg.wrench.torque
            values.append([f.x, f.y, f.z, t.x, t.y, t.z])
            frames.add(msg.header.frame_id)
    finally:
        reader.close()
    if len(frames) != 1 or not next(iter(frames)):
        raise AnalysisError('%s: the wrenches on %s name %s: one frame, a link of the model, '
                            'is needed' % (path, args.wrench, ', '.join(sorted(frames)) or
                                           'no frame'))
    frame = frames.pop()
    if frame not in model.link_body:
        raise AnalysisError('%s: the wrench frame %r is not a link of the model'
                            % (path, frame))
    time = (np.array(stamps, dtype=np.int64) - merged.origin_ns) * 1e-9
    values = np.array(values, dtype=float)
    # within a segment of joint states only (no interpolation across a gap)
    keep = np.zeros(len(time), dtype=bool)
    for s in np.unique(merged.segment):
        span = merged.time[merged.segment == s]
        keep |= (time >= span[0]) & (time <= span[-1])
    keep &= np.isfinite(values).all(axis=1)
    if not keep.any():
        raise AnalysisError('%s: no wrench falls within the joint states' % path)
    time, values = time[keep], values[keep]

    def at(x):
        return np.column_stack([np.interp(time, merged.time, x[:, j])
                                for j in range(x.shape[1])])
    return at(merged.q), at(qd), at(qdd), values, frame


def payload_yaml(result, bags):
    """Return ``payload.yaml``: the node's ``payload.*`` parameters under ``/**``."""
    inertia = result.inertia[(0, 0, 0, 1, 1, 2), (0, 1, 2, 1, 2, 2)]
    note = ('The payload of %s estimated by python -m rbd_dynamics payload from %s%s.'
            % (result.link, ', '.join(os.path.basename(b.rstrip('/')) for b in bags),
               ' (a point mass: the motion did not determine its inertia)'
               if result.point_mass else ''))
    return parameters_text({'payload': {
        'link': str(result.link), 'mass': float(result.mass),
        'com': [float(v) for v in result.com], 'inertia': [float(v) for v in inertia]}},
        [note])


def message_yaml(result):
    """Return the ``~/payload`` message (``geometry_msgs/InertiaStamped``) as YAML."""
    i = result.inertia
    return ('{header: {frame_id: %s}, inertia: {m: %.6g, com: {x: %.6g, y: %.6g, z: %.6g}, '
            'ixx: %.6g, ixy: %.6g, ixz: %.6g, iyy: %.6g, iyz: %.6g, izz: %.6g}}'
            % ((json.dumps(result.link), result.mass) + tuple(result.com)
               + (i[0, 0], i[0, 1], i[0, 2], i[1, 1], i[1, 2], i[2, 2])))


def summary(result, names, units, wrench):
    """Return the printed report."""
    std = result.std
    lines = ['payload of %s from %d samples (%s)' % (
        result.link, result.rows, 'the wrenches on %s' % wrench if wrench else
        'the joint efforts of %s' % ', '.join(names))]
    lines.append('mass           %.6g kg  +- %.2g' % (result.mass, std['mass']))
    lines.append('centre of mass [%s] m  +- [%s]  (link frame)' % (
        ', '.join('%.5g' % v for v in result.com), ', '.join('%.2g' % v for v in std['com'])))
    if result.point_mass:
        lines.append('inertia        0 about the centre of mass: a point mass (the motion does '
                     'not determine the rotational inertia: condition number %.3g; move the '
                     'link through more rotation to estimate it)' % result.condition)
    else:
        i = result.inertia
        lines.append('inertia        ixx %.4g ixy %.4g ixz %.4g iyy %.4g iyz %.4g izz %.4g kg m^2'
                     ' about the centre of mass, link axes' % (
                         i[0, 0], i[0, 1], i[0, 2], i[1, 1], i[1, 2], i[2, 2]))
        lines.append('               +- %s' % ' '.join('%.2g' % v for v in std['inertia']))
        if result.consistent_binds:
            lines.append('physically consistent: the least-squares estimate was not a body; '
                         'the written one is the best fit that is')
    lines.append('residual RMS per %s, without the payload -> with it:' % (
        'axis' if wrench else 'joint'))
    refitted = result.nuisance.shape[1] == 2
    for j, (name, unit, before, after, offset) in enumerate(zip(
            names, units, result.rms_before, result.rms, result.offsets)):
        friction = ''
        if refitted:
            friction = ('; friction changed by viscous %+.3g, Coulomb %+.3g'
                        % tuple(result.nuisance[j]) if result.nuisance[j].any()
                        else '; friction kept: the joint hardly moves')
        lines.append('  %-20s %10.4g -> %10.4g %s   (offset %.4g%s)'
                     % (name, before, after, unit, offset, friction))
    lines.append('as the ~/payload message: ros2 topic pub --once /rbd_dynamics/payload '
                 "geometry_msgs/msg/InertiaStamped '%s'" % message_yaml(result))
    return '\n'.join(lines) + '\n'


def main(argv):
    """Entry point; ``argv`` are the arguments after ``payload``."""
    args = _parser().parse_intermixed_args(argv)
    return exit_code(lambda: run(args))
