"""Every AppTest starts from empty Streamlit caches: one test's loaded runs or store never leak into
the next."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _clear_caches() -> None:
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
