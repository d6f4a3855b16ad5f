"""The detection runtime: per cluster, a loop that runs the pure detectors of :mod:`alerts` over fresh
observations and tail events and keeps the alert lifecycle in the store (:mod:`store.alerts`)."""

from service.detection.build import build_detection, snapshot_rate_limit
from service.detection.loop import DetectionLoop
from service.detection.tail_sink import DetectionTailSink, FanOutSink

__all__ = ["DetectionLoop", "DetectionTailSink", "FanOutSink", "build_detection", "snapshot_rate_limit"]
