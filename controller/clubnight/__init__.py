"""A club night on one laptop: the venue's broker, the services and a simulated table for
every table of a session's movement, each its own process, playing the movement round by
round (``bridge-table club-night``, docs/club-night.md)."""
