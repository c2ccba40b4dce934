"""Mnemo's API grouped by what it works on; ``Mnemo.api`` has every operation of the OpenAPI document."""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from . import _generated as g
from ._groups import _Group, paginate
from ._transport import Transport


class Memories(_Group):
    def add(self, content: str, *, timestamp: str | float | None = None, **fields: Any) -> g.PostV1MemoriesResponse:
        """Stores a memory; ``timestamp`` (ISO 8601 or Unix seconds) says when it happened. Other fields: metadata, workspaceId, session_id, id."""
        body: dict[str, Any] = {"content": content, **fields}
        if timestamp is not None:
            body["timestamp"] = timestamp
        return self._api.post_v1_memories(body=body)  # type: ignore[arg-type]

    def list(self, *, page_size: int | None = None, **filters: Any) -> Iterator[g.PostV1MemoriesResponse]:
        """Every memory matching the filters (workspaceId, session_id, from, to), newest first, page by page."""
        return self._pages("get_v1_memories", {}, filters, page_size, "data")

    def get(self, memory_id: str) -> g.PostV1MemoriesResponse:
        return self._api.get_v1_memories_by_id(memory_id)

    def update(self, memory_id: str, changes: g.PatchV1MemoriesByIdBody) -> g.PostV1MemoriesResponse:
        return self._api.patch_v1_memories_by_id(memory_id, body=changes)

    def delete(self, memory_id: str) -> g.DeleteV1MemoriesByIdResponse:
        return self._api.delete_v1_memories_by_id(memory_id)

    def history(self, memory_id: str) -> list[g.GetV1MemoriesByIdHistoryResponseDataItem]:
        """The memory's versions, oldest first, each with where it came from."""
        return self._api.get_v1_memories_by_id_history(memory_id)["data"]

    def search(self, query: str, **options: Any) -> g.PostV1MemoriesSearchResponse:
        """Options: limit, filters, minScore, signals."""
        return self._api.post_v1_memories_search(body={"query": query, **options})  # type: ignore[typeddict-item]

    def extract(self, body: g.PostV1MemoriesExtractBody, *, dry_run: bool = False) -> g.PostV1MemoriesExtractResponse:
        """Extracts memories from a conversation; ``dry_run`` says what would change without writing."""
        return self._api.post_v1_memories_extract(body=body, query={"dry_run": "true"} if dry_run else None)  # type: ignore[typeddict-item]

    def extraction_jobs(self) -> list[g.GetV1MemoriesExtractJobsResponseDataItem]:
        """The extraction jobs of captured conversations."""
        return self._api.get_v1_memories_extract_jobs()["data"]

    def retry_extraction_job(self, job_id: str) -> g.GetV1MemoriesExtractJobsResponseDataItem:
        """A failed (or retrying) extraction job, queued again now."""
        return self._api.post_v1_memories_extract_jobs_by_id_retry(job_id)

    def proposals(self, *, page_size: int | None = None) -> Iterator[g.GetV1MemoriesProposalsResponseDataItem]:
        """What capture proposed to change in memories the person wrote, oldest first, page by page."""
        return self._pages("get_v1_memories_proposals", {}, {}, page_size, "data")

    def accept_proposal(self, proposal_id: str) -> g.GetV1MemoriesProposalsResponseDataItem:
        return self._api.post_v1_memories_proposals_by_id_accept(proposal_id)

    def reject_proposal(self, proposal_id: str) -> g.GetV1MemoriesProposalsResponseDataItem:
        return self._api.post_v1_memories_proposals_by_id_reject(proposal_id)


class Context(_Group):
    def build(self, query: str, **options: Any) -> g.PostV1ContextBuildResponse:
        """The memories (and documents) that fit a query, ranked and joined into ``contextText``."""
        return self._api.post_v1_context_build(body={"query": query, **options})  # type: ignore[typeddict-item]


class Workspaces(_Group):
    def create(self, name: str) -> g.GetV1WorkspacesResponseItem:
        return self._api.post_v1_workspaces(body={"name": name})

    def list(self, *, page_size: int | None = None) -> Iterator[g.GetV1WorkspacesResponseItem]:
        return self._pages("get_v1_workspaces", {}, {}, page_size)

    def get(self, workspace_id: str) -> g.GetV1WorkspacesResponseItem:
        return self._api.get_v1_workspaces_by_workspace_id(workspace_id)["workspace"]

    def rename(self, workspace_id: str, name: str) -> g.GetV1WorkspacesResponseItem:
        return self._api.patch_v1_workspaces_by_workspace_id(workspace_id, body={"name": name})["workspace"]

    def delete(self, workspace_id: str) -> g.DeleteV1WorkspacesByWorkspaceIdResponse:
        """Deletes the workspace and everything in it, for good."""
        return self._api.delete_v1_workspaces_by_workspace_id(workspace_id)


class Keys(_Group):
    def list(self) -> list[Any]:
        return list(self._api.get_v1_keys()["data"])

    def create(self, name: str, scopes: list[str] | None = None) -> g.PostV1KeysResponse:
        """A new API key; its secret (``key``) is in this answer only."""
        return self._api.post_v1_keys(body={"name": name, **({"scopes": scopes} if scopes else {})})  # type: ignore[typeddict-item]

    def revoke(self, key_id: str) -> Any:
        return self._api.delete_v1_keys_by_id(key_id)


class Usage(_Group):
    def month(self) -> g.GetV1UsageResponse:
        return self._api.get_v1_usage()

    def daily(self) -> Any:
        return self._api.get_v1_usage_daily()

    def credits(self) -> Any:
        return self._api.get_v1_credits()


class Mnemo:
    """A client of one Mnemo server.

    Example::

        mnemo = Mnemo("http://127.0.0.1:8787", api_key=os.environ["MNEMO_API_KEY"])
        mnemo.memories.add("Ana prefers window seats", timestamp="2024-03-02")
        hits = mnemo.memories.search("where does Ana sit?")["results"]
    """

    def __init__(self, base_url: str, api_key: str | None = None, *, headers: Mapping[str, str] | None = None, timeout: float = 60.0) -> None:
        self._transport = Transport(base_url, api_key, headers, timeout)
        self.api = g.MnemoApi(self._transport)
        self.memories = Memories(self.api, self._transport)
        self.context = Context(self.api, self._transport)
        self.workspaces = Workspaces(self.api, self._transport)
        self.keys = Keys(self.api, self._transport)
        self.usage = Usage(self.api, self._transport)

    def workspace(self, workspace_id: str) -> WorkspaceClient:
        """What lives in one workspace: documents, notes, chats and files."""
        return WorkspaceClient(self.api, self._transport, workspace_id)


from .workspace import WorkspaceClient  # noqa: E402  (it builds on _Group above)
