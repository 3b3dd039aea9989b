"""ROS 2 side of rbd_dynamics: the node and the message conversions (needs rclpy)."""
