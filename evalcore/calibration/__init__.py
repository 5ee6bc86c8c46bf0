"""Judge calibration: labeling sessions (what people label, sampled how), agreement between people
and between the judge and people, with confidence intervals, and judge-corrected scores.

Labels live in the store (:mod:`evalcore.store.labels`), never in run files.
"""
