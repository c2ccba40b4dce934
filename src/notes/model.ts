import { t } from "elysia";
import { MB, type BodyLimit } from "../lib/body-limits";
import { BlocksPayload, DocumentPayload, IndexableBlock } from "../documents/model";
import { FreeObject, WorkspaceId } from "../shared/schemas";

const NoteId = t.String({
  minLength: 1,
  maxLength: 128,
  pattern: "^[A-Za-z0-9][A-Za-z0-9_.:-]*$",
  description: "letters, digits, _ . : -",
});
const NotebookId = t.String({ minLength: 1, maxLength: 256 });

export const CreateNoteBody = t.Object({
  documentPayload: DocumentPayload,
  blocksPayload: BlocksPayload,
  markdown: t.Optional(t.String()),
  indexableBlocks: t.Optional(t.Array(IndexableBlock)),
  notebookId: t.Optional(NotebookId),
  documentId: t.Optional(NoteId),
});

export const PatchNoteBody = t.Object({
  documentPayload: t.Optional(DocumentPayload),
  blocksPayload: t.Optional(BlocksPayload),
  markdown: t.Optional(t.String()),
  indexableBlocks: t.Optional(t.Array(IndexableBlock)),
  notebookId: t.Optional(t.Union([NotebookId, t.Null()], { description: "null detaches" })),
});

/** A legacy note entry (docs/api.md#legacy-notes-and-notebooks): `format`/`ciphertext` of an encrypted note; plaintext notes carry `document`. */
export const LegacyNoteEntry = t.Object({
  id: t.String(),
  format: t.String({ description: "svc.om.encrypted for envelopes and iv:tag:ct strings; json or text for plaintext" }),
  ciphertext: t.Union([t.String(), t.Null()]),
  document: t.Optional(t.Unknown({ description: "the plaintext payload, when the note is not encrypted" })),
  _meta: FreeObject,
});
export type LegacyNoteEntry = typeof LegacyNoteEntry.static;

export const LegacyNote = t.Object({ document: DocumentPayload, blocks: BlocksPayload, markdown: t.String() });
export const NoteWritten = t.Object({ success: t.Literal(true), id: t.String() });
export const Success = t.Object({ success: t.Literal(true) });

export const NoteParams = t.Object({ workspaceId: WorkspaceId, noteId: t.String({ minLength: 1, maxLength: 256 }) });
export const NotebookParams = t.Object({ workspaceId: WorkspaceId, notebookId: NotebookId });

export const NotebookRegistry = t.Object({ ciphertext: t.Union([t.String(), t.Null()]) });
/** A notebook registry's body: 5 MB, escaped. */
export const NOTEBOOKS_BODY_LIMIT: BodyLimit = { bytes: 12 * MB, nodes: 1_000_000 };
export const SaveNotebooksBody = t.Object({
  ciphertext: t.String({ description: "the (encrypted) notebook registry; at most 5 MB" }),
});
export const NotebookRecord = t.Object({ notebook: FreeObject });
