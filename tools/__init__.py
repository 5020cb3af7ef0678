"""The clone's build tools (not part of the installed package): tools/compiled_build.py
builds the compiled wheel."""
