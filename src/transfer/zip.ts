import { open } from "node:fs/promises";
import { inflateRawSync } from "node:zlib";

/**
 * Reads one named member of a zip archive (the `conversations.json` of a ChatGPT or Claude data
 * export) without loading the archive: the end record, the central directory, then that
 * member's bytes. Exports carry images beside the JSON, so archives run to gigabytes while the
 * member wanted is a fraction of that. A zip is input like any other, so every size is bounded:
 * entries, the directory, the member's declared and actual size, and its compression ratio.
 */

export interface ZipLimits {
  /** Entries the central directory may list. */
  maxEntries: number;
  /** Uncompressed bytes of the member read. */
  maxBytes: number;
  /** Uncompressed bytes per compressed byte: beyond it the member is a zip bomb, not a JSON export. */
  maxRatio: number;
}

/** The archive is not one this reader takes, or breaks a limit: one line saying which. */
export class ZipError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ZipError";
  }
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** The end record is 22 bytes plus a comment of at most 65,535. */
const EOCD_SEARCH = 22 + 0xffff;
/** A central directory beyond this (about 300 bytes per entry at the entry limit) is not an export's. */
const MAX_DIRECTORY_BYTES = 64 * 1024 * 1024;

/** Whether the bytes start like a zip archive (a local file header). */
export const looksLikeZip = (head: Uint8Array) =>
  head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;

interface Member {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

/** Members of the archive at `path` whose name `wanted` picks, the shortest path first; null when none. */
export async function readZipMember(
  path: string,
  wanted: (name: string) => boolean,
  limits: ZipLimits,
): Promise<{ name: string; data: Buffer } | null> {
  const file = await open(path, "r");
  try {
    const { size: fileSize } = await file.stat();
    const read = async (position: number, length: number) => {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await file.read(buffer, 0, length, position);
      if (bytesRead < length) throw new ZipError("the archive is truncated");
      return buffer;
    };
    const tailLength = Math.min(fileSize, EOCD_SEARCH);
    const tail = await read(fileSize - tailLength, tailLength);
    let at = -1;
    for (let i = tail.length - 22; i >= 0 && at < 0; i--) if (tail.readUInt32LE(i) === EOCD) at = i;
    if (at < 0) throw new ZipError("not a zip archive (no end of central directory)");
    const entries = tail.readUInt16LE(at + 10);
    const directorySize = tail.readUInt32LE(at + 12);
    const directoryOffset = tail.readUInt32LE(at + 16);
    if (entries === 0xffff || directoryOffset === 0xffffffff)
      throw new ZipError("a ZIP64 archive; extract conversations.json from it and import that file");
    if (entries > limits.maxEntries)
      throw new ZipError(`the archive lists ${entries} entries; the limit is ${limits.maxEntries}`);
    if (directorySize > MAX_DIRECTORY_BYTES)
      throw new ZipError(
        `the archive's central directory is ${directorySize} bytes; the limit is ${MAX_DIRECTORY_BYTES}`,
      );
    if (directoryOffset + directorySize > fileSize) throw new ZipError("the archive's central directory is damaged");
    const directory = await read(directoryOffset, directorySize);
    const members: Member[] = [];
    for (let p = 0, n = 0; n < entries; n++) {
      if (p + 46 > directory.length || directory.readUInt32LE(p) !== CENTRAL)
        throw new ZipError("the archive's central directory is damaged");
      const nameLength = directory.readUInt16LE(p + 28);
      const name = directory.toString("utf8", p + 46, p + 46 + nameLength);
      if (wanted(name)) {
        members.push({
          name,
          method: directory.readUInt16LE(p + 10),
          compressedSize: directory.readUInt32LE(p + 20),
          size: directory.readUInt32LE(p + 24),
          localOffset: directory.readUInt32LE(p + 42),
        });
      }
      p += 46 + nameLength + directory.readUInt16LE(p + 30) + directory.readUInt16LE(p + 32);
    }
    const member = members.sort((a, b) => a.name.split("/").length - b.name.split("/").length)[0];
    if (!member) return null;
    // Deflate never grows data by more than a few bytes per 16 KB: a larger compressed size is past the limit too.
    if (member.size > limits.maxBytes || member.compressedSize > limits.maxBytes + limits.maxBytes / 1000) {
      throw new ZipError(
        `${member.name} is ${Math.max(member.size, member.compressedSize)} bytes; the limit is ${limits.maxBytes}`,
      );
    }
    if (member.size > Math.max(1, member.compressedSize) * limits.maxRatio)
      throw new ZipError(
        `${member.name} expands ${Math.round(member.size / Math.max(1, member.compressedSize))}-fold; the limit is ${limits.maxRatio}`,
      );
    const local = await read(member.localOffset, 30);
    if (local.readUInt32LE(0) !== LOCAL) throw new ZipError("the archive's local header is damaged");
    const dataOffset = member.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    if (dataOffset + member.compressedSize > fileSize) throw new ZipError("the archive is truncated");
    const compressed = await read(dataOffset, member.compressedSize);
    let data: Buffer;
    if (member.method === 0) data = compressed;
    else if (member.method === 8) {
      try {
        // The declared size bounds the output: a member that lies about it stops there.
        data = inflateRawSync(compressed, { maxOutputLength: Math.max(1, member.size) });
      } catch {
        throw new ZipError(`${member.name} does not decompress to its declared ${member.size} bytes`);
      }
    } else
      throw new ZipError(
        `${member.name} is compressed with method ${member.method}; only stored and deflated members are read`,
      );
    if (data.length !== member.size)
      throw new ZipError(`${member.name} does not decompress to its declared ${member.size} bytes`);
    return { name: member.name, data };
  } finally {
    await file.close();
  }
}
