"""
The node's law and its inputs, arrays in and arrays out: no ROS here.

- :mod:`.config`: every parameter of the node with its default and check, and
  :class:`~.config.Config`, the configuration by parameter names;
- :mod:`.setup`: :class:`~.setup.Setup`, what one model and one configuration give (gains,
  drive, limits, the observer's and the task law's settings), replaced whole;
- :mod:`.law`: the torque law (:class:`~.law.Controller`): PD terms, drive, limits, rate limit,
  wrenches, tare, and the efforts of planned trajectories;
- :mod:`.task`: the task-space laws of one link;
- :mod:`.desired`: the desired input (:class:`~.desired.Desired`);
- :mod:`.joint_states`: joint states merged by name (:class:`~.joint_states.JointStateMerger`);
- :mod:`.sensors`: force/torque sensors with their readings and tare bias;
- :mod:`.observer`: the momentum observer (external joint torques from the measured efforts),
  the latched contact and the wrench at a link.
"""
