"""A differential fuzzer: ember against torch on drawn inputs (issue 25).

Every entry of the OpInfo table (tests/ops/op_db*.py, nn functionals included) is a template: a case takes
one of its samples and perturbs it (shapes, layouts, dtypes, values, arguments), then `tests/compare.py`'s
`check` runs it in ember and torch and requires the same values, dtype, shape, strides and gradients, or the
same exception class and message; a NumPy warning or error reaching the user is a mismatch too.

    python -m tests.fuzz --cases 20000 --seed 1      # from the repository root

prints each mismatch's class and a minimal reproducer. `core.py` draws and runs cases, `known.py` lists the
mismatches left with their reasons, `test_fuzz.py` is the bounded run of the default suite.
"""
