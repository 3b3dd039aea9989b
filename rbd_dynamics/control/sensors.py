"""A force/torque sensor of the torque law: its configuration, latest reading and tare bias."""

from typing import NamedTuple

import numpy as np


class Reading(NamedTuple):
    """A sensor's reading: when it arrived [ns], the link it acts on, the wrench on the robot."""

    arrival_ns: int
    link: str
    wrench: np.ndarray  # (6,), force first, in the link frame, applied on the robot


class Bias(NamedTuple):
    """A sensor's tare bias: the link it was taken on and the wrench removed from readings."""

    link: str
    wrench: np.ndarray  # (6,)


class Sensor:
    """
    A force/torque sensor: its configuration, latest reading and tare bias.

    Attributes
    ----------
    name
        the sensor's name.
    frame
        link override ('' = the reading's own frame).
    timeout_ns
        older readings are dropped; 0: never.
    compensate
        add the modelled wrench of the bodies beyond the frame.
    reading
        ``None`` or the latest :class:`Reading` (:meth:`receive`), the bias not removed.
    bias
        ``None`` or the :class:`Bias` that :meth:`Controller.tare` found; removed from every
        reading on that link.

    """

    def __init__(self, name, frame='', timeout=0.1, compensate=False):
        self.name = name
        self.frame = frame
        self.timeout_ns = int(timeout * 1e9)
        self.compensate = compensate
        self.reading = None
        self.bias = None

    def receive(self, arrival_ns, link, wrench):
        """Keep a reading: the wrench ``(6,)`` applied on the robot at ``link``."""
        self.reading = Reading(arrival_ns, link, wrench)

    def fresh(self, now_ns):
        """Return the reading if it is not older than the timeout, else ``None``."""
        reading = self.reading
        if reading is None or (self.timeout_ns and now_ns - reading.arrival_ns > self.timeout_ns):
            return None
        return reading
