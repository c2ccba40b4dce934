/** A workspace's files: upload with progress, download, delete. */
import { deleteFile, downloadFile, listFiles, uploadFile } from "../api";
import type { FileInfo } from "../api-types";
import { confirmDialog } from "../dialog";
import { empty, h, loading, replace } from "../dom";
import { bytes, time } from "../format";
import { toast, toastError } from "../toast";
import { saveBlob } from "./memories-export";
import type { TabContext } from "./tab-context";

export async function filesTab({ workspace, container, signal }: TabContext): Promise<void> {
  const picker = h("input", { type: "file", multiple: true, class: "visually-hidden", id: "file-picker" });
  const uploads = h("ul", { class: "uploads", "aria-label": "Uploads", "aria-live": "polite" });
  const body = h("div", null, loading("Loading files"));
  replace(
    container,
    h(
      "div",
      { class: "tab-toolbar" },
      h("label", { for: "file-picker", class: "button button-primary file-button" }, "Upload files"),
      picker,
    ),
    uploads,
    body,
  );
  // The label is the visible control; Enter/Space on it opens the picker like a button.
  const label = container.querySelector<HTMLLabelElement>(".file-button")!;
  label.tabIndex = 0;
  label.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      picker.click();
    }
  });

  let files: FileInfo[] = [];
  function draw(): void {
    if (!files.length) {
      replace(
        body,
        empty(
          "No files yet.",
          h("p", { class: "muted" }, "Uploaded files are stored on this server and their text becomes searchable."),
        ),
      );
      return;
    }
    replace(
      body,
      h(
        "ul",
        { class: "entity-list", "aria-label": "Files" },
        files.map((file) =>
          h(
            "li",
            { class: "entity-row" },
            h(
              "div",
              { class: "entity-main entity-stack" },
              h("span", { class: "entity-title" }, file.name),
              h("span", { class: "entity-meta" }, `${file.type} · ${bytes(file.size)} · added `, time(file.createdAt)),
            ),
            h(
              "div",
              { class: "row-actions" },
              h(
                "button",
                {
                  type: "button",
                  class: "button button-small button-quiet",
                  "aria-label": `Download ${file.name}`,
                  onClick: async () => {
                    try {
                      saveBlob(await downloadFile(workspace.id, file.key), file.name);
                    } catch (error) {
                      toastError(error);
                    }
                  },
                },
                "Download",
              ),
              h(
                "button",
                {
                  type: "button",
                  class: "button button-small button-quiet",
                  "aria-label": `Delete ${file.name}`,
                  onClick: async () => {
                    if (
                      !(await confirmDialog(
                        "Delete file",
                        `Delete “${file.name}” and its search entries? This cannot be undone.`,
                        "Delete",
                        true,
                      ))
                    )
                      return;
                    try {
                      await deleteFile(workspace.id, file.key);
                      files = files.filter((f) => f.key !== file.key);
                      draw();
                      toast(`Deleted ${file.name}.`);
                    } catch (error) {
                      toastError(error);
                    }
                  },
                },
                "Delete",
              ),
            ),
          ),
        ),
      ),
    );
  }

  async function load(): Promise<void> {
    try {
      const all: FileInfo[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 50; pages++) {
        const page = await listFiles(workspace.id, cursor, signal);
        all.push(...page.files);
        if (!page.hasMore || !page.nextCursor) break;
        cursor = page.nextCursor;
      }
      files = all;
      draw();
    } catch (error) {
      if (!signal.aborted)
        replace(body, h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message));
    }
  }

  picker.addEventListener("change", async () => {
    const chosen = Array.from(picker.files ?? []);
    picker.value = "";
    await Promise.all(
      chosen.map(async (file) => {
        const progress = h("progress", { max: 100, value: 0, "aria-label": `Uploading ${file.name}` });
        const state = h("span", { class: "muted" }, "0%");
        const item = h("li", { class: "upload" }, h("span", { class: "cell-name" }, file.name), progress, state);
        uploads.append(item);
        try {
          const stored = await uploadFile(workspace.id, file, (fraction) => {
            progress.value = Math.round(fraction * 100);
            state.textContent = `${Math.round(fraction * 100)}%`;
          });
          item.remove();
          files = [...files.filter((f) => f.key !== stored.key), stored];
          draw();
          toast(`Uploaded ${file.name} (${bytes(stored.size)}).`, { tone: "success" });
        } catch (error) {
          state.textContent = `Failed: ${(error as Error).message}`;
          item.classList.add("upload-failed");
        }
      }),
    );
  });
  await load();
}
