"""The implementation of ``quabla.scipy``."""
