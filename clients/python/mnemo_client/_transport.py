"""Requests over urllib: path parameters encoded, unset query fields left out, JSON bodies, errors raised as MnemoError."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Mapping

from .errors import MnemoError


class Transport:
    def __init__(self, base_url: str, api_key: str | None = None, headers: Mapping[str, str] | None = None, timeout: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.headers = dict(headers or {})
        self.timeout = timeout

    def request(
        self,
        method: str,
        path: str,
        path_params: Mapping[str, str],
        query: Mapping[str, Any] | None,
        body: Any,
        headers: Mapping[str, str] | None,
        binary: bool = False,
    ) -> Any:
        """The answer's body: parsed JSON, or bytes for an operation that answers bytes."""
        return self.send(method, path, path_params, query, body, headers, binary)[0]

    def send(
        self,
        method: str,
        path: str,
        path_params: Mapping[str, str],
        query: Mapping[str, Any] | None,
        body: Any,
        headers: Mapping[str, str] | None,
        binary: bool = False,
    ) -> tuple[Any, Mapping[str, str]]:
        """The answer's body and headers (an array page carries its next cursor in X-Next-Cursor)."""
        data = None if body is None else json.dumps(body).encode()
        extra = {"Content-Type": "application/json"} if data is not None else {}
        raw, answer_headers = self.fetch(method, self.url(path, path_params, query), data, {**extra, **(headers or {})})
        if binary:
            return raw, answer_headers
        return (json.loads(raw) if raw else None), answer_headers

    def fetch(self, method: str, url: str, data: bytes | None, headers: Mapping[str, str], authorize: bool = True) -> tuple[bytes, Mapping[str, str]]:
        """A request to any URL (a presigned upload URL is sent with ``authorize=False``: its signature is the credential)."""
        sent = {**(self.headers if authorize else {}), **headers}
        if authorize and self.api_key:
            sent["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, data=data, method=method, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read(), {k.lower(): v for k, v in response.headers.items()}
        except urllib.error.HTTPError as error:
            text = error.read().decode("utf-8", "replace")
            raise MnemoError.from_body(error.code, text, error.headers.get("X-Request-Id")) from None
        except urllib.error.URLError as error:
            raise MnemoError(0, "network_error", f"{method} {url}: {error.reason}") from None

    def url(self, template: str, path_params: Mapping[str, str], query: Mapping[str, Any] | None) -> str:
        path = re.sub(r"\{([^}]+)\}", lambda m: urllib.parse.quote(str(path_params[m.group(1)]), safe=""), template)
        pairs = [(name, _query_value(value)) for name, value in (query or {}).items() if value is not None]
        return f"{self.base_url}{path}" + (f"?{urllib.parse.urlencode(pairs)}" if pairs else "")

    def resolve(self, url: str) -> str:
        """An absolute URL for one the server answered."""
        return url if re.match(r"^https?://", url) else f"{self.base_url}{url}"


def _query_value(value: Any) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)
