"""Every plot test ends with no pyplot figure open.

Tests build figures with the plot modules' *_figure functions and read them back without
rendering (the product's render path closes each figure it saves; a test holds the Figure to
inspect it). pyplot keeps every such figure until it is closed, so without this matplotlib
warns after 20 and the figures pile up in memory for the whole session.
"""
import sys

import pytest


@pytest.fixture(autouse=True)
def close_figures():
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")  # only if the test imported it
    if pyplot is not None:
        pyplot.close("all")
