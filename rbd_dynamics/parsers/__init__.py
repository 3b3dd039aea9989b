"""
Robot descriptions in: the :class:`Description` the model is built from, and its readers.

- :mod:`.description`: links and joints with checked values (what a URDF says, or what code
  builds);
- :mod:`.urdf`: the hardened URDF reader (text from the ROS graph is untrusted);
- :mod:`.files`: ``.urdf`` and ``.xacro`` files (xacro arguments);
- :mod:`.urdf_parser_py`: a robot parsed by urdf_parser_py (``urdfdom_py``).
"""
