"""What every group of the client shares: the generated API, the transport and paged lists."""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

from . import _generated as g
from ._transport import Transport


def paginate(fetch_page: Callable[[str | None], tuple[Any, Mapping[str, str]]], field: str | None = None) -> Iterator[Any]:
    """Every item of a cursor-paged list, fetching the next page when the loop asks for it.

    An object page carries ``nextCursor`` (its items under ``field``); an array page carries
    the next cursor in its ``X-Next-Cursor`` header.
    """
    cursor: str | None = None
    while True:
        body, headers = fetch_page(cursor)
        if isinstance(body, list):
            yield from body
            cursor = headers.get("x-next-cursor")
        else:
            yield from body[field or "data"]
            cursor = body.get("nextCursor")
        if not cursor:
            return


def _page_query(filters: Mapping[str, Any], page_size: int | None, cursor: str | None) -> dict[str, Any]:
    query = {k: v for k, v in filters.items() if v is not None}
    if page_size:
        query["limit"] = str(page_size)
    if cursor:
        query["cursor"] = cursor
    return query


class _Group:
    def __init__(self, api: g.MnemoApi, transport: Transport) -> None:
        self._api = api
        self._transport = transport

    def _pages(self, operation: str, path: Mapping[str, str], filters: Mapping[str, Any], page_size: int | None, field: str | None = None) -> Iterator[Any]:
        method, template, _ = g.OPERATIONS[operation]
        return paginate(lambda cursor: self._transport.send(method, template, path, _page_query(filters, page_size, cursor), None, None), field)
