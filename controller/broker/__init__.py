"""The broker, as every program reaches it: the one broker-settings parser, who is who on the
venue's broker (identities), and the private mosquitto the demo, tests and benches start.

Standard library only (plus ``controller.commandline`` and ``controller.tomlfile``): the
firmware bridge, the service and the apps all import it. The venue's broker configuration
(``bridge-table broker-config``) lives with the apps, in ``controller.venue``.
"""
