"""The dashboard's own helpers: cached wrappers around evalcore. No metric arithmetic here."""

import gc

# Once streamlit, plotly, polars, numba and pydantic are imported, the dashboard's process holds
# ~300,000 long-lived objects, and Python's default thresholds ran five full collections over them
# during a first view of a folder (0.5 s, the interpreter lock held, for cycles such a process
# rarely makes). What exists when a page first imports the dashboard is frozen (never scanned
# again), and a young collection runs every 50,000 allocations instead of every 700: no full
# collection in a first view (tests/dashboard/test_pages.py), a few young ones of ~10 ms.
gc.freeze()
gc.set_threshold(50_000, 20, 10)
