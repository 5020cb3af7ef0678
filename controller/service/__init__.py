"""The live service around the engine: daemon, journal, snapshots, GC, partitions, intake, MQTT.
"""
