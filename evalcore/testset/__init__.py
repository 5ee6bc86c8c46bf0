"""Building, checking and growing a test set: coverage and its gaps, statistical power per slice,
how much synthetic questions borrow from their source chunk, versions and what changed between
two, labels carried to a new chunking, and new versions written beside the old file, never over it.

Reading a test set is :mod:`evalcore.runs.testset`'s job; this package only works on one read.
"""
