"""The compiled kernels' fixtures."""

import pytest
from support.compiled import code_built


@pytest.fixture(scope='module')
def code_model():
    """Return a code-built tree with every joint type, mimic joints and fixed children."""
    return code_built()
