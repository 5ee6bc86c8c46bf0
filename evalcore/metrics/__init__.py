"""What is measured and how: the metric catalogue (names, directions, default sets), the retrieval
measures (trec_eval's conventions, compiled per-question loop), the generation measures computed from
stored judge output, and quote matching. Never imports :mod:`evalcore.runs`: it works on frames."""
