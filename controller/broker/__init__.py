"""The broker as every program reaches it: broker settings, who is who, the test mosquitto.

``settings`` is the one broker-settings parser of every command; ``login`` tells a refused
or shared login from an outage; ``identity`` reads who is
who on the venue's broker (the ``identities.toml`` broker-config writes); ``mosquitto``
starts the private mosquitto of the demo, the tests and the benches. Standard library only
(plus ``controller.commandline`` and ``controller.tomlfile``): a foundation the firmware
bridge, the service and the apps all import. The venue's broker configuration
(``bridge-table broker-config``) reads the session, so it lives with the apps, in
``controller.venue``.
"""
