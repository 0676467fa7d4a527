import { ArgumentsRefused } from "../errors.js";

/** Checks prompts make on their arguments before anything is fetched. */

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const isUuid = (value: string) => UUID.test(value);

/** A prompt that cannot be rendered from these arguments: one sentence naming the argument. */
export function promptRefusal(message: string): ArgumentsRefused {
  return new ArgumentsRefused(message);
}
