/**
 * Whether a listening address reaches only this machine: `localhost`, `127.0.0.0/8`, `::1`.
 * `0.0.0.0` and `::` listen on every interface; anything else is a network address.
 *
 * @example isLoopbackHost("127.0.0.1") // true; isLoopbackHost("0.0.0.0") // false
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  return (
    bare === "localhost" ||
    bare === "::1" ||
    /^127(\.\d{1,3}){3}$/.test(bare) ||
    /^::ffff:127(\.\d{1,3}){3}$/.test(bare)
  );
}

/**
 * Whether a browser `Origin` is a page served from this machine: `http(s)://localhost`,
 * `127.0.0.1` or `[::1]`, any port. `null` (sandboxed frames, files) and every other host are not.
 *
 * @example isLoopbackOrigin("http://localhost:5173") // true; isLoopbackOrigin("https://evil.example") // false
 */
export function isLoopbackOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (url.protocol === "http:" || url.protocol === "https:") && isLoopbackHost(url.hostname);
}
