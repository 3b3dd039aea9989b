"""
A small recorder: the joint states a node receives, written as a rosbag2 (``ros2 bag record``).

The messages are kept serialized as they arrive (``raw=True``) and written with ``rosbags``'
writer, with the time of receipt as the bag's timestamp, like ``ros2 bag record /joint_states``.
"""

import time

from sensor_msgs.msg import JointState

MSGTYPE = 'sensor_msgs/msg/JointState'


class JointStateRecorder:
    """
    Record ``topic`` on ``node`` until :meth:`write`.

    The subscription's history is deep enough for a free-running simulation at 1 kHz; the
    executor that spins ``node`` delivers the messages.
    """

    def __init__(self, node, topic='joint_states', depth=5000):
        self.messages = []  # (receipt time [ns], serialized message)
        self.topic = node.resolve_topic_name(topic)
        self.subscription = node.create_subscription(JointState, topic, self._on_message, depth,
                                                     raw=True)

    def _on_message(self, data):
        self.messages.append((time.time_ns(), bytes(data)))

    def write(self, path, storage='mcap'):
        """Write the messages so far to a new bag directory ``path``; their count."""
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import get_typestore, Stores
        store = get_typestore(Stores.ROS2_JAZZY)
        plugin = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}[storage]
        with Writer(path, version=9, storage_plugin=plugin) as writer:
            connection = writer.add_connection(self.topic, MSGTYPE, typestore=store)
            for stamp, data in self.messages:
                writer.write(connection, stamp, data)
        return len(self.messages)
