/**
 * Reading LoCoMo conversations (../shared/bench/locomo/README.md) for the recall bench:
 * turns in order, questions of categories 1–4, and evidence ids normalised.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { MONTHS } from "../../src/search/analysis/dates";

export interface Turn {
  diaId: string;
  session: number;
  speaker: string;
  /** The memory as the benchmark protocol writes it: "<speaker>: <text>" plus " [shares <caption>]". */
  content: string;
  /** The session's date and time (`session_N_date_time`) as ISO 8601 UTC; null when absent or unreadable. */
  timestamp: string | null;
}

export interface Question {
  question: string;
  category: number;
  evidence: string[];
}

export interface Conversation {
  name: string;
  turns: Turn[];
  questions: Question[];
  /** Evidence lists that needed rewriting, unknown ids dropped, questions left without evidence. */
  evidenceNotes: { rewritten: string[]; dropped: string[]; noEvidence: string[]; adversarialSkipped: number };
}

type RawTurn = { speaker: string; dia_id: string; text: string; blip_caption?: string };
type RawQa = { question: string; category: number; evidence?: string[] };
type RawConversation = Record<string, unknown> & {
  qa?: RawQa[];
  conversation?: Record<string, unknown>;
  sample_id?: string;
};

const ID = /^D?(\d+):(\d+)((?::\d+)*)$/i;

const SESSION_DATE = /^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})\s*$/i;

/**
 * A LoCoMo session date ("1:56 pm on 8 May, 2023") as ISO 8601, read as UTC (the data has
 * no time zone); null when it is not one.
 */
export function parseSessionDate(text: unknown): string | null {
  const match = typeof text === "string" ? SESSION_DATE.exec(text) : null;
  if (!match) return null;
  const [, h, mi, half, d, monthName, y] = match;
  const month = MONTHS.findIndex((m) => m.startsWith(monthName!.toLowerCase().slice(0, 3)));
  const hour = (Number(h) % 12) + (half!.toLowerCase() === "p" ? 12 : 0);
  if (month < 0 || Number(h) > 12 || Number(mi) > 59) return null;
  const date = new Date(Date.UTC(Number(y), month, Number(d), hour, Number(mi)));
  return date.getUTCDate() === Number(d) ? date.toISOString() : null;
}

/** "D01:3" → "D1:3"; null when the text is not a dialog id. */
export function canonicalId(text: string): string | null {
  const match = ID.exec(text.replace(/\s+/g, ""));
  return match ? `D${Number(match[1])}:${Number(match[2])}` : null;
}

/**
 * Normalises one question's evidence list against the conversation's turn ids:
 * entries are split on ";" and "," (e.g. "D8:6; D9:17"), whitespace is removed
 * ("D 1:3"), leading zeros dropped ("D30:05"), and "Dn:m:k" is read as its first
 * well-formed prefix "Dn:m" (the extra part is ambiguous: another turn or a typo).
 * Ids that name no turn of the conversation are dropped; duplicates are removed.
 */
export function normaliseEvidence(raw: string[], known: Set<string>) {
  const ids = new Set<string>();
  const rewritten: string[] = [];
  const dropped: string[] = [];
  for (const entry of raw) {
    const parts = entry
      .split(/[;,]/)
      .map((p) => p.trim())
      .filter(Boolean);
    for (const part of parts) {
      const id = canonicalId(part);
      if (id && known.has(id)) ids.add(id);
      else dropped.push(part);
    }
    if (parts.length !== 1 || canonicalId(parts[0]) !== parts[0]) rewritten.push(entry);
  }
  return { ids: [...ids], rewritten, dropped };
}

function parseConversation(name: string, raw: RawConversation): Conversation {
  const body = (raw.conversation ?? raw) as Record<string, unknown>;
  const sessions = Object.keys(body)
    .map((key) => /^session_(\d+)$/.exec(key))
    .filter((m): m is RegExpExecArray => m !== null && Array.isArray(body[m[0]]))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const turns: Turn[] = [];
  for (const session of sessions) {
    const timestamp = parseSessionDate(body[`session_${session}_date_time`]);
    for (const turn of body[`session_${session}`] as RawTurn[]) {
      const caption = turn.blip_caption ? ` [shares ${turn.blip_caption}]` : "";
      turns.push({
        diaId: canonicalId(turn.dia_id) ?? turn.dia_id,
        session,
        speaker: turn.speaker,
        content: `${turn.speaker}: ${turn.text}${caption}`,
        timestamp,
      });
    }
  }
  const known = new Set(turns.map((t) => t.diaId));
  const notes = {
    rewritten: [] as string[],
    dropped: [] as string[],
    noEvidence: [] as string[],
    adversarialSkipped: 0,
  };
  const questions: Question[] = [];
  for (const qa of raw.qa ?? []) {
    if (qa.category < 1 || qa.category > 4) {
      notes.adversarialSkipped++;
      continue;
    }
    const { ids, rewritten, dropped } = normaliseEvidence(qa.evidence ?? [], known);
    notes.rewritten.push(...rewritten);
    notes.dropped.push(...dropped);
    if (!ids.length) notes.noEvidence.push(qa.question);
    else questions.push({ question: qa.question, category: qa.category, evidence: ids });
  }
  return { name, turns, questions, evidenceNotes: notes };
}

/** Every conversation under `dir`: one per file, or the original locomo10.json array. */
export function loadConversations(dir: string): Conversation[] {
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`${dir} is not a directory`);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const conversations: Conversation[] = [];
  for (const file of files) {
    const raw = JSON.parse(readFileSync(join(dir, file), "utf8")) as RawConversation | RawConversation[];
    const list = Array.isArray(raw) ? raw : [raw];
    list.forEach((item, i) => {
      if (!item || typeof item !== "object" || !Array.isArray(item.qa)) return;
      const name = item.sample_id ?? (list.length > 1 ? `${basename(file, ".json")}#${i}` : basename(file, ".json"));
      conversations.push(parseConversation(name, item));
    });
  }
  return conversations;
}
