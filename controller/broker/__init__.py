"""The broker: the private test mosquitto, the venue configuration, identities, broker settings.
"""
