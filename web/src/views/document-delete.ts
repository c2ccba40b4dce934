/** The delete of a document or note, asked first: shared by the documents and notes views. */
import { deleteDocument } from "../api-documents";
import { confirmDialog } from "../dialog";
import { toast, toastError } from "../toast";

/** Asks, then deletes the document and its search entries; whether it was deleted. */
export async function confirmDeleteDocument(
  workspaceId: string,
  document: { id: string; title: string },
  kind = "document",
): Promise<boolean> {
  if (
    !(await confirmDialog(
      `Delete ${kind}`,
      `Delete ${kind} “${document.title}”? It is deleted for good, with its search entries.`,
      `Delete ${kind}`,
      true,
    ))
  )
    return false;
  try {
    await deleteDocument(workspaceId, document.id);
    toast(`Deleted ${document.title}.`);
    return true;
  } catch (error) {
    toastError(error);
    return false;
  }
}
