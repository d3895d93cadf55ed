"""``quabla.numpy``, family by family (each file holds one family of numpy functions)."""
