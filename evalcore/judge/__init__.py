"""The LLM judge: faithfulness claims, answer correctness and answer relevance from the Anthropic API.

``anthropic`` is imported only here, and only when a judgment is requested (it costs about a second).
Verdicts go to the store (:mod:`evalcore.store`), never into run files; a score is computed in code
from a verdict (the faithfulness rule and the quote check live in :mod:`evalcore.metrics`).
"""
