"""Implementation modules of the public `quabla` namespaces."""
