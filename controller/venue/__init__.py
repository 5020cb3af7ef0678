"""The venue's tools: ``bridge-table broker-config``, a locked-down mosquitto for a venue.

It writes the broker's configuration from the session (users, ACL, certificates, who is who),
so it sits with the apps, above the session it reads; the broker settings, the identities it
writes and the private test broker live below, in ``controller.broker``.
"""
