"""
The simulator's support, used by the simulated driver (:mod:`rbd_dynamics.ros.sim_driver`).

- :mod:`.mujoco_model`: the MuJoCo model of a description (rigid bodies, drive, limits, payload
  body, F/T site; a floating base's free joint);
- :mod:`.standing`: a floating-base robot on a floor: soles, joint PD, an IMU and force/torque
  sensors;
- :mod:`.joint_trajectory_controller`: a stand-in for ros2_control's JointTrajectoryController
  (its trajectory sampling and PID), no ROS in it.
"""
