"""String kernels (TF's string_ops): joining, splitting, case, regexes, hashing, conversions.

Every kernel here is host-only: string tensors are NumPy object arrays of ``bytes`` on every backend,
and numeric outputs (lengths, hash buckets, numbers) move to the session's device where a device node
reads them (``client/placement.py``).
"""
