"""
``rbd_dynamics_record``: record topics into a rosbag2, without the ``ros2`` command.

    rbd_dynamics_record OUT [TOPIC ...] [--duration S] [--storage mcap|sqlite3]
        [--timeout S] [--ros-args ...]
    python -m rbd_dynamics record OUT [TOPIC ...] ...

A ROS 2 environment from the Python registry has rclpy but no ``ros2 bag``: this records what
the tools of the package read (``bag``, ``identify``, ``payload``, ``contact``), the joint
states (default ``/joint_states``) and any other topic of a type the package knows (a
``geometry_msgs/WrenchStamped`` for ``payload --wrench``), into a rosbag2 directory ``OUT``
(MCAP by default, as ``ros2 bag record`` writes on Jazzy; ``--storage sqlite3`` as on Humble).
Each message is written as it arrived (serialized, untouched), with its time of arrival; the
tools read the header stamps.

It waits (at most ``--timeout`` seconds, default 10) until every topic has a publisher and takes
the type from it; the subscription is reliable where every publisher is, else best effort
(which receives from both). It records until Ctrl-C (SIGINT or SIGTERM) or, with ``--duration``,
that many seconds after the first message, and then moves the bag into place: ``OUT`` appears
whole, or not at all. Exit codes: 0 written, 1 ``OUT`` exists or a topic's type is not one the
package reads, 2 a command line that does not parse, 3 a topic without a publisher in time, 4
no message arrived (nothing written).
"""

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time

EXIT_INPUT = 1
EXIT_NO_PUBLISHER = 3
EXIT_NOTHING = 4
STORAGES = ('mcap', 'sqlite3')


def _parser():
    parser = argparse.ArgumentParser(prog='rbd_dynamics_record',
                                     description=__doc__.split('\n\n')[2].strip())
    parser.add_argument('out', metavar='OUT', help='the rosbag2 directory to write (new)')
    parser.add_argument('topics', nargs='*', metavar='TOPIC', default=['/joint_states'],
                        help='topics to record (default: /joint_states)')
    parser.add_argument('--duration', type=float, default=None, metavar='S',
                        help='stop this long after the first message [s] (default: Ctrl-C)')
    parser.add_argument('--storage', choices=STORAGES, default='mcap',
                        help='storage of the bag (default: %(default)s)')
    parser.add_argument('--timeout', type=float, default=10.0, metavar='S',
                        help='wait this long for the topics to have publishers [s] '
                             '(default: %(default)s)')
    return parser


def topic_types(node, topics, timeout):
    """Return ``{topic: type}`` (``'pkg/msg/Name'``) once each has a publisher, else ``None``."""
    import rclpy
    end = time.monotonic() + timeout
    while True:
        known = dict(node.get_topic_names_and_types())
        found = {t: known[t][0] for t in topics if known.get(t) and node.count_publishers(t)}
        if len(found) == len(topics):
            return found
        if time.monotonic() > end:
            return None
        rclpy.spin_once(node, timeout_sec=0.1)


def subscription_qos(node, topic):
    """Return a QoS that receives from every publisher of ``topic`` (reliable where all are)."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    reliable = all(info.qos_profile.reliability == ReliabilityPolicy.RELIABLE
                   for info in node.get_publishers_info_by_topic(topic))
    return QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE if reliable
                      else ReliabilityPolicy.BEST_EFFORT)


class Recorder:
    """Messages of several topics written into a rosbag2 as they arrive."""

    def __init__(self, path, types, storage):
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import get_typestore, Stores
        store = get_typestore(Stores.ROS2_JAZZY)
        unknown = sorted(t for t in types.values() if t not in store.types)
        if unknown:
            raise ValueError('cannot record messages of type %s (the package records the '
                             'types its tools read, e.g. sensor_msgs/msg/JointState)'
                             % ', '.join(unknown))
        plugin = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}[storage]
        self.writer = Writer(path, version=9, storage_plugin=plugin)
        self.writer.open()
        self.connections = {topic: self.writer.add_connection(topic, msgtype, typestore=store)
                            for topic, msgtype in types.items()}
        self.counts = dict.fromkeys(types, 0)
        self.first = None

    def write(self, topic, data, received_ns):
        """Write one serialized message of ``topic``."""
        self.writer.write(self.connections[topic], received_ns, bytes(data))
        self.counts[topic] += 1
        if self.first is None:
            self.first = time.monotonic()

    def close(self):
        self.writer.close()


def record(node, recorder, types, duration, log):
    """Subscribe to every topic and record until stopped (SIGINT, SIGTERM, ``duration``)."""
    import importlib

    import rclpy
    stop = []

    def stopped(*_):
        stop.append(True)

    previous = {s: signal.signal(s, stopped) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for topic, msgtype in types.items():
            package, kind, name = msgtype.split('/')
            node.create_subscription(
                getattr(importlib.import_module('%s.%s' % (package, kind)), name), topic,
                lambda data, topic=topic: recorder.write(
                    topic, data, node.get_clock().now().nanoseconds),
                subscription_qos(node, topic), raw=True)
        log('recording %s; Ctrl-C stops' % ', '.join('%s (%s)' % item for item in types.items()))
        while not stop and rclpy.ok():
            rclpy.spin_once(node, timeout_sec=0.05)
            if duration is not None and recorder.first is not None \
                    and time.monotonic() - recorder.first >= duration:
                break
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def main(args=None):
    import rclpy

    from .executor import init, program_arguments
    argv = program_arguments(args)
    if argv is None:
        return EXIT_INPUT
    options = _parser().parse_args(argv)
    out = options.out.rstrip('/') or options.out
    if os.path.exists(out):
        print('error: %s exists: record into a new directory' % out, file=sys.stderr)
        return EXIT_INPUT
    if options.duration is not None and not options.duration > 0:
        print('error: --duration must be positive', file=sys.stderr)
        return EXIT_INPUT
    if not init(args):
        return EXIT_INPUT
    node = rclpy.create_node('rbd_dynamics_record')
    partial = None
    recorder = None
    try:
        types = topic_types(node, options.topics, options.timeout)
        if types is None:
            missing = [t for t in options.topics if not node.count_publishers(t)]
            print('error: no publisher of %s in %g s' % (', '.join(missing), options.timeout),
                  file=sys.stderr)
            return EXIT_NO_PUBLISHER
        # the bag is written in a new directory beside OUT, its files named as OUT's, and moved
        partial = tempfile.mkdtemp(prefix='.%s.' % os.path.basename(out),
                                   dir=os.path.dirname(os.path.abspath(out)))
        bag = os.path.join(partial, os.path.basename(out))
        recorder = Recorder(bag, types, options.storage)
        record(node, recorder, types, options.duration, lambda text: print(text, flush=True))
        counts = recorder.counts
        recorder.close()
        recorder = None
        if not any(counts.values()):
            print('error: no message arrived: nothing written', file=sys.stderr)
            return EXIT_NOTHING
        os.replace(bag, out)
        print('wrote %s: %s' % (out, ', '.join('%d messages on %s' % (n, topic)
                                               for topic, n in counts.items())), flush=True)
        return 0
    except ValueError as err:  # a type the tools do not read
        print('error: %s' % err, file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:  # before the recording started: nothing to keep
        print('interrupted: nothing written', file=sys.stderr)
        return 130
    except Exception as err:  # the bag's directory or writer (rosbags): one line
        print('error: %s: %s' % (type(err).__name__, err), file=sys.stderr)
        return EXIT_INPUT
    finally:
        if recorder is not None:
            try:
                recorder.close()
            except Exception:  # (already failing: its own error was said)
                pass
        if partial is not None:
            shutil.rmtree(partial, ignore_errors=True)
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    sys.exit(main())
