"""One workspace's documents, notes, chats and files (``mnemo.workspace(id)``)."""

from __future__ import annotations

from typing import Any, Iterator

from . import _generated as g
from ._transport import Transport
from ._groups import _Group


class _InWorkspace(_Group):
    def __init__(self, api: g.MnemoApi, transport: Transport, workspace_id: str) -> None:
        super().__init__(api, transport)
        self.workspace_id = workspace_id


class Documents(_InWorkspace):
    def create(self, body: g.PostV1DocumentsBody) -> Any:
        return self._api.post_v1_workspaces_by_workspace_id_documents(self.workspace_id, body=body)  # type: ignore[arg-type]

    def list(self, *, page_size: int | None = None, **filters: Any) -> Iterator[Any]:
        return self._pages("get_v1_workspaces_by_workspace_id_documents", {"workspaceId": self.workspace_id}, filters, page_size, "documents")

    def get(self, document_id: str) -> Any:
        return self._api.get_v1_workspaces_by_workspace_id_documents_by_document_id(self.workspace_id, document_id)

    def update(self, document_id: str, body: Any) -> Any:
        return self._api.put_v1_workspaces_by_workspace_id_documents_by_document_id(self.workspace_id, document_id, body=body)

    def delete(self, document_id: str) -> Any:
        return self._api.delete_v1_workspaces_by_workspace_id_documents_by_document_id(self.workspace_id, document_id)


class Notes(_InWorkspace):
    def create(self, body: g.PostV1WorkspacesByWorkspaceIdNotesBody) -> Any:
        return self._api.post_v1_workspaces_by_workspace_id_notes(self.workspace_id, body=body)

    def list(self, *, page_size: int | None = None) -> Iterator[Any]:
        return self._pages("get_v1_workspaces_by_workspace_id_notes", {"workspaceId": self.workspace_id}, {}, page_size)

    def get(self, note_id: str) -> Any:
        return self._api.get_v1_workspaces_by_workspace_id_notes_by_note_id(self.workspace_id, note_id)

    def update(self, note_id: str, body: Any) -> Any:
        return self._api.patch_v1_workspaces_by_workspace_id_notes_by_note_id(self.workspace_id, note_id, body=body)

    def delete(self, note_id: str) -> Any:
        return self._api.delete_v1_workspaces_by_workspace_id_notes_by_note_id(self.workspace_id, note_id)


class Chats(_InWorkspace):
    def create(self, title: str | None = None, **fields: Any) -> Any:
        return self._api.post_v1_workspaces_by_workspace_id_chats(self.workspace_id, body={**({"title": title} if title else {}), **fields})  # type: ignore[typeddict-item]

    def list(self, *, page_size: int | None = None) -> Iterator[Any]:
        return self._pages("get_v1_workspaces_by_workspace_id_chats", {"workspaceId": self.workspace_id}, {}, page_size)

    def update(self, thread_id: str, body: Any) -> Any:
        return self._api.patch_v1_workspaces_by_workspace_id_chats_by_thread_id(self.workspace_id, thread_id, body=body)

    def messages(self, thread_id: str, *, page_size: int | None = None) -> Iterator[Any]:
        """A thread's messages in creation order."""
        path = {"workspaceId": self.workspace_id, "threadId": thread_id}
        return self._pages("get_v1_workspaces_by_workspace_id_chats_by_thread_id_messages", path, {}, page_size)

    def add_message(self, thread_id: str, role: str, content: str, **fields: Any) -> Any:
        body = {"role": role, "content": content, **fields}
        return self._api.post_v1_workspaces_by_workspace_id_chats_by_thread_id_messages(self.workspace_id, thread_id, body=body)  # type: ignore[arg-type]

    def delete(self, thread_id: str) -> Any:
        """Deletes a thread with its messages."""
        return self._api.delete_v1_workspaces_by_workspace_id_chats_by_thread_id(self.workspace_id, thread_id)


class Files(_InWorkspace):
    def upload(self, filename: str, data: bytes | str, content_type: str) -> g.PutV1WorkspacesByWorkspaceIdFilesByKeyResponse:
        """Uploads through a presigned URL: asks for the URL, then PUTs the bytes there (no bearer: the URL is signed)."""
        target = self._api.post_v1_workspaces_by_workspace_id_files_upload_url(self.workspace_id, body={"filename": filename, "contentType": content_type})
        raw = data.encode() if isinstance(data, str) else data
        body, _ = self._transport.fetch(target["method"], self._transport.resolve(target["url"]), raw, {"Content-Type": content_type}, authorize=False)
        import json

        return json.loads(body)  # type: ignore[no-any-return]

    def list(self, *, page_size: int | None = None) -> Iterator[g.PutV1WorkspacesByWorkspaceIdFilesByKeyResponse]:
        return self._pages("get_v1_workspaces_by_workspace_id_files", {"workspaceId": self.workspace_id}, {}, page_size, "files")

    def download(self, key: str, *, headers: dict[str, str] | None = None) -> bytes:
        """The file's bytes (``headers`` may carry ``Range: bytes=a-b``)."""
        return self._api.get_v1_workspaces_by_workspace_id_files_by_key(self.workspace_id, key, headers=headers)

    def delete(self, key: str) -> Any:
        return self._api.delete_v1_workspaces_by_workspace_id_files_by_key(self.workspace_id, key)


class WorkspaceClient:
    def __init__(self, api: g.MnemoApi, transport: Transport, workspace_id: str) -> None:
        self.workspace_id = workspace_id
        self.documents = Documents(api, transport, workspace_id)
        self.notes = Notes(api, transport, workspace_id)
        self.chats = Chats(api, transport, workspace_id)
        self.files = Files(api, transport, workspace_id)
