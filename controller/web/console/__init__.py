"""The director's console (``bridge-table console``): see ``docs/console.md``."""
