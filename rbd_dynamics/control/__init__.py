"""
The node's law and its inputs, arrays in and arrays out: no ROS here.

- :mod:`.law`: the torque law (:class:`~.law.Config`, :class:`~.law.Setup`,
  :class:`~.law.Controller`): PD terms, drive, limits, rate limit, wrenches, tare, and the
  efforts of planned trajectories;
- :mod:`.desired`: the desired input (:class:`~.desired.Desired`);
- :mod:`.joint_states`: joint states merged by name (:class:`~.joint_states.JointStateMerger`);
- :mod:`.sensors`: force/torque sensors with their readings and tare bias;
- :mod:`.observer`: the momentum observer (external joint torques from the measured efforts),
  the latched contact and the wrench at a link.
"""
