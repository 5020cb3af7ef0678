"""The live service around the engine: daemon, journal, snapshots, GC, partitions, intake, MQTT.

The commands over it: ``bridge-table controller`` (``cli_controller``, the Engine it runs:
``engines``), ``run`` (``cli_run``, ``run``) and ``results`` (``cli_results``, ``ranking``).
"""
