"""The simulated table: virtual reader firmware on pseudo-terminals, driven by event lists."""
