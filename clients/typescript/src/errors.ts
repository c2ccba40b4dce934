/**
 * What every failed call throws: the HTTP status and the contract's error code and
 * message (`{error: {code, message}}`), e.g. `not_found`, `invalid_request`, `unauthorized`.
 *
 * @example
 * try { await mnemo.memories.get("mem_missing"); }
 * catch (error) { if (error instanceof MnemoError && error.code === "not_found") … }
 */
export class MnemoError extends Error {
  override readonly name = "MnemoError";

  constructor(
    /** The HTTP status (0 when the server could not be reached). */
    readonly status: number,
    /** The contract's machine-readable code; `network_error` when no answer came. */
    readonly code: string,
    message: string,
    /** The server's `X-Request-Id`, to find the request in its log. */
    readonly requestId: string | null = null,
  ) {
    super(message);
  }

  /** The error an answer carries, or one made from its status when its body is not the contract's. */
  static async fromResponse(response: Response): Promise<MnemoError> {
    const text = await response.text().catch(() => "");
    let code = `http_${response.status}`;
    let message = text.slice(0, 500) || response.statusText;
    try {
      const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
      if (typeof body.error?.code === "string") code = body.error.code;
      if (typeof body.error?.message === "string") message = body.error.message;
    } catch {
      // Not JSON (a proxy's page): the status and text say what there is.
    }
    return new MnemoError(response.status, code, message, response.headers.get("x-request-id"));
  }
}
