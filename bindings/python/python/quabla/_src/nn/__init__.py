"""The implementation of ``quabla.nn``."""
