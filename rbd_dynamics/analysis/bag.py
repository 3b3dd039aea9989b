"""
``sensor_msgs/JointState`` messages of one topic of a rosbag2, read without ROS.

The bag is read with ``rosbags`` (MCAP or SQLite 3 storage, a bag directory or a single storage
file). Each message costs its deserialization and a few appends: the values are gathered in
byte buffers per *layout* (the list of names and which of velocity / effort the message fills),
and every later step works on the arrays of those groups.
"""

import array
import time

import numpy as np

from . import AnalysisError

JOINT_STATE_TYPE = 'sensor_msgs/msg/JointState'

_PROGRESS_EVERY = 4096  # messages between two progress callbacks


class JointStateGroup:
    """
    Messages of one layout.

    The messages that share one layout: the same names in the same order, and the same
    choice of filled velocity and effort arrays.

    Attributes
    ----------
    names
        the joint names of these messages, in message order.
    stamp
        ``(n,)`` int64 time of each message [ns]: its header stamp, or the time the bag
        received it where the stamp is zero.
    position
        ``(n, k)`` positions [rad or m], ``k = len(names)``.
    velocity
        ``(n, k)`` velocities [rad/s or m/s], or ``None`` (the messages had none).
    effort
        ``(n, k)`` efforts [N m or N], or ``None``.

    """

    def __init__(self, names, has_velocity, has_effort):
        self.names = tuple(names)
        self.has_velocity = has_velocity
        self.has_effort = has_effort
        self._stamps = array.array('q')
        self._buffers = [bytearray(), bytearray() if has_velocity else None,
                         bytearray() if has_effort else None]
        self.stamp = self.position = self.velocity = self.effort = None

    def add(self, stamp, position, velocity, effort):
        """Append one message's stamp [ns] and its float64 arrays."""
        self._stamps.append(stamp)
        buffers = self._buffers
        buffers[0] += position.data
        if buffers[1] is not None:
            buffers[1] += velocity.data
        if buffers[2] is not None:
            buffers[2] += effort.data

    def finish(self):
        """Turn the buffers into the arrays of the attributes (once, after the last add)."""
        k = len(self.names)
        self.stamp = np.frombuffer(self._stamps, dtype=np.int64)

        def table(buffer):
            return None if buffer is None else np.frombuffer(buffer, dtype=float).reshape(-1, k)

        self.position, self.velocity, self.effort = (table(b) for b in self._buffers)
        self._buffers = None
        return self

    def __len__(self):
        return len(self.stamp) if self.stamp is not None else len(self._stamps)


class BagJointStates:
    """
    What :func:`read_joint_states` found.

    Attributes
    ----------
    groups
        list of :class:`JointStateGroup`.
    messages
        number of messages read on the topic.
    skipped
        reason -> number of messages left out (arrays whose lengths do not match the
        names, no positions).

    """

    def __init__(self, groups, messages, skipped):
        self.groups = groups
        self.messages = messages
        self.skipped = skipped


def open_bag(path):
    """
    Open a ``rosbags`` reader of the rosbag2 at ``path``.

    Raises
    ------
    AnalysisError
        ``rosbags`` is missing, or ``path`` is not a readable rosbag2.

    """
    import pathlib
    try:
        from rosbags.highlevel import AnyReader
        from rosbags.typesys import get_typestore, Stores
    except ImportError:
        raise AnalysisError('reading bags needs the rosbags package: pip install rosbags '
                            '(or pip install rbd_dynamics[analysis])') from None
    bag = pathlib.Path(path)
    if not bag.exists():
        raise AnalysisError('%s does not exist' % path)
    if bag.is_dir() and not (bag / 'metadata.yaml').exists():
        bag = _storage_file(bag)
    try:
        # Bags from Iron on carry their message definitions; older ones are read with
        # the standard definitions (JointState has not changed since ROS 2 began).
        reader = AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_JAZZY))
        reader.open()
    except Exception as err:  # rosbags raises several types for unreadable input
        raise AnalysisError('%s is not a readable rosbag2 (MCAP or SQLite 3 storage): %s'
                            % (path, err or type(err).__name__)) from None
    if not reader.is2:
        reader.close()
        raise AnalysisError('%s is a ROS 1 bag; convert it first (rosbags-convert)' % path)
    return reader


def _storage_file(folder):
    """
    Return the one storage file of a rosbag2 folder without ``metadata.yaml``.

    A bag written with the metadata inside its SQLite 3 file (as rosbags writes them), or
    whose ``metadata.yaml`` went missing, is read from its ``.db3`` or ``.mcap`` file.

    Raises
    ------
    AnalysisError
        the folder holds no storage file, or several (their order is in the missing file).

    """
    files = sorted(p for p in folder.iterdir() if p.suffix in ('.db3', '.mcap'))
    if len(files) == 1:
        return files[0]
    if not files:
        raise AnalysisError('%s is not a rosbag2: it has no metadata.yaml and no .db3 or .mcap '
                            'file' % folder)
    raise AnalysisError('%s has no metadata.yaml and %d storage files (%s): give one file, or '
                        'restore metadata.yaml (ros2 bag reindex)'
                        % (folder, len(files), ', '.join(p.name for p in files)))


def topic_connections(reader, topic, path=''):
    """
    Return the reader's connections of ``topic``, checked to carry ``sensor_msgs/JointState``.

    Raises
    ------
    AnalysisError
        the topic is absent (the message lists the bag's JointState topics and
        its other topics) or has another type.

    """
    conns = [c for c in reader.connections if c.topic == topic]
    if not conns:
        listing = ', '.join('%s (%s)' % (c.topic, c.msgtype)
                            for c in sorted(reader.connections, key=lambda c: c.topic))
        raise AnalysisError('%s has no topic %s; its topics: %s'
                            % (path or 'the bag', topic, listing or 'none'))
    other = sorted({c.msgtype for c in conns if c.msgtype != JOINT_STATE_TYPE})
    if other:
        raise AnalysisError('topic %s has type %s, not %s'
                            % (topic, ', '.join(other), JOINT_STATE_TYPE))
    return conns


def read_joint_states(path, topic='/joint_states', progress=None):
    """
    Every ``sensor_msgs/JointState`` of ``topic`` in the rosbag2 at ``path``.

    Parameters
    ----------
    path
        a bag directory, or a single ``.mcap`` / ``.db3`` file.
    topic
        the joint state topic.
    progress
        ``None`` or a callable ``progress(done, total)`` (message counts), called
        every few thousand messages and once at the end.

    Returns
    -------
    :class:`BagJointStates`.

    Raises
    ------
    AnalysisError
        not a rosbag2, no such topic, a topic of another type, or a message
        that cannot be decoded.

    """
    reader = open_bag(path)
    try:
        conns = topic_connections(reader, topic, path)
        total = sum(c.msgcount for c in conns)
        deserialize = reader.typestore.deserialize_cdr
        groups = {}
        skipped = {}
        last_names = last_group = None
        count = 0
        try:
            for _, received, raw in reader.messages(connections=conns):
                msg = deserialize(raw, JOINT_STATE_TYPE)
                count += 1
                if not count % _PROGRESS_EVERY and progress is not None:
                    progress(count, total)
                names, position, velocity, effort = msg.name, msg.position, msg.velocity, \
                    msg.effort
                n = len(names)
                nvel, neff = len(velocity), len(effort)
                if len(position) != n or nvel not in (0, n) or neff not in (0, n) or not n:
                    reason = ('no names' if not n else 'no positions' if not len(position)
                              else 'array lengths differ from the number of names')
                    skipped[reason] = skipped.get(reason, 0) + 1
                    continue
                if names != last_names or last_group.has_velocity != (nvel > 0) \
                        or last_group.has_effort != (neff > 0):
                    key = (tuple(names), nvel > 0, neff > 0)
                    last_group = groups.get(key)
                    if last_group is None:
                        if len(set(names)) != n:
                            skipped['a name listed twice'] = \
                                skipped.get('a name listed twice', 0) + 1
                            last_names = None
                            continue
                        last_group = groups[key] = JointStateGroup(*key)
                    last_names = names
                stamp = msg.header.stamp
                ns = stamp.sec * 1000000000 + stamp.nanosec
                last_group.add(ns if ns else received, position, velocity, effort)
        except AnalysisError:
            raise
        except Exception as err:  # a truncated file or a message that does not decode
            raise AnalysisError('%s: cannot read message %d of %s: %s'
                                % (path, count, topic, err or type(err).__name__)) from None
        if progress is not None:
            progress(count, total)
    finally:
        reader.close()
    return BagJointStates([g.finish() for g in groups.values() if len(g)], count, skipped)


class ProgressPrinter:
    """
    Text progress bar for reading a bag.

    ``progress(done, total)`` that draws a text bar on a stream, at most every 0.5 s and
    only once reading has taken more than a second (short bags print nothing).
    """

    def __init__(self, stream, label='reading', delay=1.0, interval=0.5):
        self.stream = stream
        self.label = label
        self.start = time.monotonic()
        self.next = self.start + delay
        self.interval = interval
        self.shown = False

    def __call__(self, done, total):
        now = time.monotonic()
        final = done >= total
        if now < self.next and not (final and self.shown):
            return
        self.next = now + self.interval
        share = done / total if total else 1.0
        bar = '#' * int(30 * share)
        self.stream.write('\r%s [%-30s] %5.1f %% (%d of %d messages, %.0f s)'
                          % (self.label, bar, 100 * share, done, total, now - self.start))
        if final:
            self.stream.write('\n')
        self.stream.flush()
        self.shown = True
