/**
 * Bodies of at least this many bytes are large: their parsing, validation and writing
 * (the JSON pass, JSON.parse, markdown splitting, the store's write) hold the event loop
 * for hundreds of milliseconds each.
 */
export const LARGE_BODY_BYTES = 1024 * 1024;

/** Large bodies handled at once by one server: the rest wait their turn, in arrival order. */
export const LARGE_BODIES_AT_ONCE = 1;

/**
 * A counting semaphore, first come first served. Six 9 MB PATCHes handled together queue
 * their synchronous steps back to back, and every other request (`/health` included)
 * waits behind all of them; one at a time, a small request waits for one step at most.
 *
 * @example
 * const gate = createGate(1);
 * const release = await gate.acquire();
 * try { await work(); } finally { release(); }
 */
export function createGate(capacity: number) {
  if (!Number.isInteger(capacity) || capacity < 1) throw new Error("a gate lets at least one through");
  let active = 0;
  const waiting: Array<() => void> = [];
  const handOn = () => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  return {
    /** Resolves once it is this caller's turn, with the release (calling it twice releases once). */
    async acquire(): Promise<() => void> {
      if (active < capacity) active++;
      // A release hands its place straight to the next waiter: `active` stays as it is.
      else await new Promise<void>((resolve) => waiting.push(resolve));
      let released = false;
      return () => {
        if (released) return;
        released = true;
        handOn();
      };
    },
    /** How many hold the gate, and how many wait (for tests and diagnostics). */
    state: () => ({ active, waiting: waiting.length }),
  };
}
export type Gate = ReturnType<typeof createGate>;
