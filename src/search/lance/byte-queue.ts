/**
 * Bytes arriving in chunks from a pipe, taken off the front by length: a frame is joined
 * once, when all of it is there, rather than the buffer being copied at every chunk.
 */
export class ByteQueue {
  private chunks: Uint8Array[] = [];
  /** Bytes of the first chunk already taken. */
  private offset = 0;
  length = 0;

  push(chunk: Uint8Array): void {
    if (!chunk.length) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The little-endian u32 at `at` bytes from the front (the caller checked the length). */
  uint32(at: number): number {
    const bytes = this.peek(at + 4);
    return new DataView(bytes.buffer, bytes.byteOffset + at, 4).getUint32(0, true);
  }

  /** Takes `n` bytes off the front. */
  take(n: number): Uint8Array {
    if (n === 0) return new Uint8Array(0);
    const out = this.peek(n).slice(0, n);
    let left = n;
    while (left > 0) {
      const first = this.chunks[0]!;
      const available = first.length - this.offset;
      if (available > left) {
        this.offset += left;
        left = 0;
      } else {
        left -= available;
        this.chunks.shift();
        this.offset = 0;
      }
    }
    this.length -= n;
    return out;
  }

  /** At least `n` bytes from the front, as one array (the first chunk itself when it holds them). */
  private peek(n: number): Uint8Array {
    const first = this.chunks[0]!;
    if (first.length - this.offset >= n) return first.subarray(this.offset);
    const joined = new Uint8Array(n);
    let filled = 0;
    for (let i = 0; filled < n; i++) {
      const chunk = i === 0 ? first.subarray(this.offset) : this.chunks[i]!;
      const part = chunk.subarray(0, n - filled);
      joined.set(part, filled);
      filled += part.length;
    }
    return joined;
  }
}
