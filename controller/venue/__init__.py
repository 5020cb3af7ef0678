"""The venue's tools: ``bridge-table broker-config`` writes a locked-down mosquitto for a venue
from its session (users, ACL, certificates, who is who).

It sits with the apps, above the session it reads; the broker client settings, the identities
it writes and the private test broker live below, in ``controller.broker``.
"""
