"""Spinning that survives a failing callback: the executables of this package use it."""

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor


def run(node_factory, args=None):
    """Init rclpy, build the node, spin until shutdown, clean up (Humble/Jazzy/Kilted style).

    An exception escaping one callback (including rclpy failing to deserialize a message that
    arrived) is logged and counted on the node's ``callback_failures`` attribute; the node
    keeps running. Ctrl-C and an external shutdown end it cleanly.
    """
    rclpy.init(args=args)
    node = None
    try:
        node = node_factory()
        node.callback_failures = 0
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while rclpy.ok():
            try:
                executor.spin_once(timeout_sec=0.1)
            except (KeyboardInterrupt, ExternalShutdownException):
                break
            except Exception as exc:  # a callback must never take the process down
                node.callback_failures += 1
                node.get_logger().error('a callback failed and was skipped: %s: %s'
                                        % (type(exc).__name__, exc),
                                        throttle_duration_sec=2.0)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
