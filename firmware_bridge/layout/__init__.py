"""The table's geometry: where its antennas, rows, areas, devices and cables lie, checked.

The field model says which antenna reads a tag where (``field``), the design rules hold a
geometry to it (``rules``), and the drawing is made from it (``draw``):
docs/hardware/layout.md and docs/hardware/field-model.md.
"""
