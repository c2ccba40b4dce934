import type { Principal } from "../auth/service";
import { forbidden } from "../shared/app-error";

/**
 * Who may manage API keys and developer tokens: a person, not a program. An API key (or a
 * web app session made from one) cannot mint or revoke keys, so a leaked key cannot make
 * itself a successor; a session from a sign-in link (`mnemo open`), a developer, ID or mock token can.
 */
export function requireKeyManager(principal: Principal): void {
  if (principal.method === "api_key" || principal.via === "api_key") {
    throw forbidden(
      "managing API keys needs a session from a sign-in link (`mnemo open --user <id>`) or a developer token; an API key, or a session made from one, cannot",
    );
  }
}
