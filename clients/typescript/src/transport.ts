import { MnemoError } from "./errors.js";

export interface ClientOptions {
  /** Where Mnemo answers, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** An API key (`mnemo keys create`) or any bearer token the server accepts. */
  apiKey?: string;
  /** Headers sent with every request (e.g. `X-Client-Key`). */
  headers?: Record<string, string>;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
}

/** An operation as `operations` in generated.ts lists it. */
export interface OperationRef {
  method: string;
  path: string;
  binary: boolean;
}

export interface CallArgs {
  path?: Record<string, string>;
  query?: object;
  body?: unknown;
  headers?: Record<string, string>;
}

/** An answer with what pagination needs from its headers. */
export interface Sent<T> {
  body: T;
  response: Response;
}

/** Sends requests: path parameters encoded, the query without unset fields, JSON bodies, errors thrown as MnemoError. */
export class Transport {
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** The answer's body: parsed JSON, or the `Response` itself for an operation that answers bytes. */
  async request(operation: OperationRef, args: CallArgs): Promise<unknown> {
    return (await this.send(operation, args)).body;
  }

  async send<T = unknown>(operation: OperationRef, args: CallArgs): Promise<Sent<T>> {
    const response = await this.fetchRaw(operation.method, this.url(operation.path, args), args.body, args.headers);
    if (operation.binary) return { body: response as T, response };
    const text = await response.text();
    return { body: (text ? JSON.parse(text) : null) as T, response };
  }

  /** A request to any URL of this server (e.g. a presigned upload URL): no bearer unless `authorize`. */
  async fetchRaw(
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
    authorize = true,
  ): Promise<Response> {
    const raw = body instanceof Uint8Array || body instanceof Blob || body instanceof ArrayBuffer;
    let response: Response;
    try {
      response = await this.fetch(url, {
        method,
        headers: {
          ...(authorize && this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
          ...(body !== undefined && !raw ? { "content-type": "application/json" } : {}),
          ...(authorize ? this.options.headers : {}),
          ...headers,
        },
        body: body === undefined ? undefined : raw ? (body as NonNullable<RequestInit["body"]>) : JSON.stringify(body),
      });
    } catch (error) {
      throw new MnemoError(0, "network_error", `${method} ${url}: ${(error as Error).message}`);
    }
    if (!response.ok) throw await MnemoError.fromResponse(response);
    return response;
  }

  url(template: string, args: Pick<CallArgs, "path" | "query">): string {
    const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = args.path?.[name];
      if (value === undefined) throw new TypeError(`missing path parameter ${name} for ${template}`);
      return encodeURIComponent(value);
    });
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(args.query ?? {})) {
      if (value !== undefined && value !== null) query.set(name, String(value));
    }
    const search = query.toString();
    return `${this.baseUrl}${path}${search ? `?${search}` : ""}`;
  }

  /** An absolute URL for a path the server answered (an upload URL is already absolute). */
  resolve(url: string): string {
    return /^https?:\/\//.test(url) ? url : `${this.baseUrl}${url}`;
  }
}
