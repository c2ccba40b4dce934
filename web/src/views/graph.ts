/**
 * The block graph of a workspace: documents as nodes, [[wiki links]] and ((block refs))
 * as edges, laid out by a small deterministic force simulation and drawn in SVG. The same
 * links are listed as text below the picture for keyboard and screen-reader users.
 */
import { blockEdges, listDocuments } from "../api-documents";
import type { BlockEdge, DocumentSummary } from "../api-types";
import { empty, h, loading, replace, svg } from "../dom";
import { plural } from "../format";
import { href } from "../router";
import type { TabContext } from "./tab-context";

/** The drawing's size in px: the frame's width (labels keep their size on a phone), a fixed height. */
let frameWidth = 800;
const HEIGHT = 420;
const MAX_NODES = 150;

interface GraphNode {
  id: string;
  label: string;
  documentId: string | null;
  x: number;
  y: number;
}

/** Positions nodes: a circle first, then repulsion between all and attraction along edges. */
function layout(nodes: GraphNode[], links: Array<[number, number]>): void {
  const n = nodes.length;
  nodes.forEach((node, i) => {
    const angle = (2 * Math.PI * i) / Math.max(n, 1);
    node.x = frameWidth / 2 + (frameWidth / 2.6) * Math.cos(angle);
    node.y = HEIGHT / 2 + (HEIGHT / 2.6) * Math.sin(angle);
  });
  if (n < 3) return;
  const ideal = Math.sqrt((frameWidth * HEIGHT) / n) * 0.6;
  for (let step = 0; step < 200; step++) {
    const temperature = 20 * (1 - step / 200);
    const force = nodes.map(() => ({ x: 0, y: 0 }));
    for (let i = 0; i < n; i++)
      for (let j = i + 1; j < n; j++) {
        const dx = nodes[i].x - nodes[j].x || 0.01;
        const dy = nodes[i].y - nodes[j].y || 0.01;
        const distance = Math.max(1, Math.hypot(dx, dy));
        const push = (ideal * ideal) / distance;
        force[i].x += (dx / distance) * push;
        force[i].y += (dy / distance) * push;
        force[j].x -= (dx / distance) * push;
        force[j].y -= (dy / distance) * push;
      }
    for (const [a, b] of links) {
      const dx = nodes[a].x - nodes[b].x;
      const dy = nodes[a].y - nodes[b].y;
      const distance = Math.max(1, Math.hypot(dx, dy));
      const pull = (distance * distance) / ideal;
      force[a].x -= (dx / distance) * pull;
      force[a].y -= (dy / distance) * pull;
      force[b].x += (dx / distance) * pull;
      force[b].y += (dy / distance) * pull;
    }
    nodes.forEach((node, i) => {
      const length = Math.max(1, Math.hypot(force[i].x, force[i].y));
      node.x = Math.min(frameWidth - 40, Math.max(40, node.x + (force[i].x / length) * Math.min(length, temperature)));
      node.y = Math.min(HEIGHT - 24, Math.max(24, node.y + (force[i].y / length) * Math.min(length, temperature)));
    });
  }
}

/** Scales and centres the drawing to fill the frame (never more than 2.5× the layout). */
function fit(nodes: GraphNode[]): void {
  if (!nodes.length) return;
  const xs = nodes.map((n) => n.x);
  const ys = nodes.map((n) => n.y);
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const margin = { x: Math.min(90, frameWidth / 6), top: 36, bottom: 24 };
  const scale = Math.min(
    2.5,
    (frameWidth - 2 * margin.x) / Math.max(maxX - minX, 1),
    (HEIGHT - margin.top - margin.bottom) / Math.max(maxY - minY, 1),
  );
  const offsetX = (frameWidth - (maxX - minX) * scale) / 2;
  const offsetY = margin.top + (HEIGHT - margin.top - margin.bottom - (maxY - minY) * scale) / 2;
  for (const node of nodes) {
    node.x = offsetX + (node.x - minX) * scale;
    node.y = offsetY + (node.y - minY) * scale;
  }
}

function build(
  edges: BlockEdge[],
  documents: DocumentSummary[],
): { nodes: GraphNode[]; links: Array<[number, number, BlockEdge]> } {
  const titles = new Map(documents.map((d) => [d.id, d.title]));
  const nodes: GraphNode[] = [];
  const index = new Map<string, number>();
  const nodeFor = (key: string, label: string, documentId: string | null) => {
    if (!index.has(key)) index.set(key, nodes.push({ id: key, label, documentId, x: 0, y: 0 }) - 1);
    return index.get(key)!;
  };
  const links: Array<[number, number, BlockEdge]> = [];
  for (const edge of edges) {
    if (nodes.length >= MAX_NODES) break;
    const from = nodeFor(
      `doc:${edge.from.documentId}`,
      titles.get(edge.from.documentId) ?? edge.from.documentId,
      edge.from.documentId,
    );
    const to = edge.to.documentId
      ? nodeFor(`doc:${edge.to.documentId}`, titles.get(edge.to.documentId) ?? edge.to.documentId, edge.to.documentId)
      : nodeFor(`missing:${edge.target}`, edge.target, null);
    if (from !== to) links.push([from, to, edge]);
  }
  return { nodes, links };
}

const shorten = (text: string) => (text.length > 22 ? `${text.slice(0, 21)}…` : text);

export async function graphTab({ workspace, container, signal }: TabContext): Promise<void> {
  replace(container, loading("Loading the graph"));
  try {
    const [{ edges: raw }, { documents }] = await Promise.all([
      blockEdges(workspace.id, signal),
      listDocuments(workspace.id, {}, signal),
    ]);
    const edges = Array.isArray(raw) ? (raw as BlockEdge[]).filter((e) => e?.from?.documentId && e.to) : [];
    if (!edges.length) {
      return replace(
        container,
        empty(
          "No links between documents yet.",
          h("p", { class: "muted" }, "Write [[Another title]] or ((block-id)) in a document to link it."),
        ),
      );
    }
    frameWidth = Math.max(320, Math.min(1200, container.clientWidth || 800));
    const { nodes, links } = build(edges, documents);
    layout(
      nodes,
      links.map(([a, b]) => [a, b]),
    );
    fit(nodes);
    // The frame is cropped to the drawing: a small graph does not sit in a tall empty box.
    const ys = nodes.map((n) => n.y);
    const top = Math.max(0, Math.min(...ys) - 40);
    const height = Math.max(200, Math.min(HEIGHT, Math.max(...ys) + 28) - top);
    const picture = svg(
      "svg",
      {
        class: "graph",
        viewBox: `0 ${top} ${frameWidth} ${height}`,
        role: "group",
        "aria-labelledby": "graph-caption",
      },
      svg(
        "defs",
        null,
        svg(
          "marker",
          {
            id: "arrow",
            viewBox: "0 0 10 10",
            refX: 18,
            refY: 5,
            markerWidth: 7,
            markerHeight: 7,
            orient: "auto-start-reverse",
          },
          svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "graph-arrow" }),
        ),
      ),
      links.map(([a, b, edge]) =>
        svg("line", {
          x1: nodes[a].x,
          y1: nodes[a].y,
          x2: nodes[b].x,
          y2: nodes[b].y,
          class: `graph-edge graph-edge-${edge.type}`,
          "marker-end": "url(#arrow)",
        }),
      ),
      nodes.map((node) => {
        const shape = [
          svg("circle", {
            cx: node.x,
            cy: node.y,
            r: 7,
            class: node.documentId ? "graph-node" : "graph-node graph-node-missing",
          }),
          svg(
            "text",
            { x: node.x, y: node.y - 12, class: "graph-label", "text-anchor": "middle" },
            shorten(node.label),
          ),
        ];
        return node.documentId
          ? svg(
              "a",
              { href: href("/workspaces", workspace.id, "documents", node.documentId), "aria-label": node.label },
              shape,
            )
          : svg("g", { "aria-label": `${node.label} (no such document)` }, shape);
      }),
    );
    const label = (i: number) => nodes[i].label;
    replace(
      container,
      h(
        "figure",
        { class: "graph-figure" },
        h("div", { class: "graph-frame" }, picture),
        h(
          "figcaption",
          { id: "graph-caption", class: "muted" },
          `${plural(nodes.length, "document")}, ${plural(links.length, "link")}. Dashed circles are links to titles with no document.`,
        ),
      ),
      h(
        "details",
        { class: "panel" },
        h("summary", null, "Links as a list"),
        h(
          "ul",
          { class: "edge-list" },
          links.map(([a, b, edge]) =>
            h(
              "li",
              null,
              label(a),
              edge.type === "block_ref" ? " → block " : " → ",
              edge.type === "block_ref" ? `${edge.target} in ${label(b)}` : label(b),
            ),
          ),
        ),
      ),
    );
  } catch (error) {
    if (!signal.aborted)
      replace(container, h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message));
  }
}
