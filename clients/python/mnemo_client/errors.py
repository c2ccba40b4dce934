"""What every failed call raises."""

from __future__ import annotations

import json


class MnemoError(Exception):
    """A failed call: the HTTP status and the contract's error code and message.

    ``code`` is the machine-readable code of ``{"error": {"code", "message"}}``, e.g.
    ``not_found``, ``invalid_request`` or ``unauthorized``; ``network_error`` when no answer came.

    Example::

        try:
            mnemo.memories.get("mem_missing")
        except MnemoError as error:
            if error.code == "not_found":
                ...
    """

    def __init__(self, status: int, code: str, message: str, request_id: str | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id

    @classmethod
    def from_body(cls, status: int, text: str, request_id: str | None) -> MnemoError:
        """The error an answer carries, or one made from its status when its body is not the contract's."""
        code, message = f"http_{status}", text[:500]
        try:
            error = json.loads(text).get("error", {})
            if isinstance(error.get("code"), str):
                code = error["code"]
            if isinstance(error.get("message"), str):
                message = error["message"]
        except (ValueError, AttributeError):
            pass  # Not JSON (a proxy's page): the status and text say what there is.
        return cls(status, code, message, request_id)
