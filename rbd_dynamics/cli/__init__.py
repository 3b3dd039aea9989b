"""
The command-line programs of ``python -m rbd_dynamics``, one module each.

``bag`` and ``trajectory`` (:mod:`.bag`), ``identify``, ``excite``, ``payload``, ``contact`` and
``description``: each parses its command line, calls the library and turns its errors into a
message and an exit code. What they share is in :mod:`.common`.
"""
