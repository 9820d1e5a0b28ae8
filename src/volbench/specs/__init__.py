"""Vendor catalogue: promised performance by product and size, and prices."""
