"""A typed client for Mnemo's HTTP API, standard library only.

Example::

    from mnemo_client import Mnemo, MnemoError

    mnemo = Mnemo("http://127.0.0.1:8787", api_key="mnemo_…")
    mnemo.memories.add("Ana prefers window seats", timestamp="2024-03-02")
    for memory in mnemo.memories.list():
        print(memory["content"])
"""

from ._generated import MnemoApi
from .client import Mnemo, paginate
from .errors import MnemoError
from .workspace import WorkspaceClient

__all__ = ["Mnemo", "MnemoApi", "MnemoError", "WorkspaceClient", "paginate"]
__version__ = "0.1.0"
