import { Elysia } from "elysia";
import { isLoopbackHost } from "../lib/loopback";
import { forbidden } from "../shared/app-error";

export interface HostCheckOptions {
  /** Host names (or addresses) besides the loopback ones that name this server: MNEMO_PUBLIC_URL's, a non-wildcard listening address. */
  alsoAllowed: string[];
}

/** A Host header's shape: a name or IPv4 address, or a bracketed IPv6 address, and a port. Nothing else (no userinfo, no path). */
const HOST_SHAPE = /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/** The host name of a Host header, normalised as a browser would (lowercase, IPv4 forms, IPv6 brackets); null when malformed. */
export function hostNameOf(header: string | null): string | null {
  if (!header || !HOST_SHAPE.test(header)) return null;
  try {
    return new URL(`http://${header}`).hostname;
  } catch {
    return null;
  }
}

/**
 * For a server that accepts mock tokens: refuses, before anything else, a request whose
 * `Host` does not name this machine. A page on a name the attacker controls can
 * make that name resolve to 127.0.0.1 (DNS rebinding): its requests are then same-origin,
 * carry no `Origin` on a GET, and pass CORS, so only the `Host` they carry (the attacker's
 * name) tells them apart. Loopback names and addresses, and the hosts in `alsoAllowed`, pass;
 * everything else is a 403, like a refused origin (cors.ts).
 */
export function hostCheck(options: HostCheckOptions) {
  const allowed = new Set(
    options.alsoAllowed.map((host) => hostNameOf(host)).filter((host): host is string => host !== null),
  );
  return new Elysia({ name: "host-check" }).onRequest(({ request }) => {
    const header = request.headers.get("host");
    const name = hostNameOf(header);
    if (name !== null && (isLoopbackHost(name) || allowed.has(name))) return;
    throw forbidden(
      `host: '${(header ?? "").slice(0, 100)}' does not name this server: it accepts mock tokens, so it answers only requests to a loopback address ` +
        "(localhost, 127.0.0.1, [::1]) or to MNEMO_PUBLIC_URL's host",
    );
  });
}

/**
 * What names this server besides loopback: MNEMO_PUBLIC_URL's host, and the listening
 * address when it is one address (`--allow-public-mock-tokens` on a LAN address), not a wildcard.
 */
export function namesOfThisServer(config: { publicUrl?: string; host: string }): string[] {
  const names = config.publicUrl ? [new URL(config.publicUrl).host] : [];
  const wildcard = /^(0\.0\.0\.0|::|\[::\])$/.test(config.host);
  if (!wildcard)
    names.push(config.host.includes(":") && !config.host.startsWith("[") ? `[${config.host}]` : config.host);
  return names;
}
