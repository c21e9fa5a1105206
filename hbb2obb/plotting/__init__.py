"""Pictures of a run: functions that take data and return a matplotlib Figure or a PIL image.

Every module here uses matplotlib's object API on an Agg canvas (never ``pyplot``), so nothing
depends on a display and no figure outlives the call that made it.
"""

OVERLAY_SIZE = 1600
"""Default long side of a frame overlay, in pixels (``--overlay_size``)."""
