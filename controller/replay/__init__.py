"""Replay: an events file through the engine (stream), its command (cli), split by table (jobs).
"""
