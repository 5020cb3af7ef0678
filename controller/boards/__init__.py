"""Boards before play: deals files loaded by board, and random legal boards generated.
"""
