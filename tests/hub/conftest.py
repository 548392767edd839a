"""The machine the hub tests share in a test file: accounts and permissions, undone afterwards."""
import pytest

from hub_machine import HubMachine, require_root


@pytest.fixture(scope="module")
def machine():
    require_root()
    with HubMachine() as machine:
        yield machine
