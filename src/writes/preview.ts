import { showValue } from "./display.js";
import type { Preview } from "./intent.js";

/**
 * The preview as a person reads it, for the confirmation form: the action and its target by
 * name, whom the API will record as the author, then every field as it will be sent. Values
 * come neutralised from the gate and are quoted here: data cannot fake a line of this text.
 */
export function previewText(preview: Preview): string {
  const lines = [`${preview.action}: ${preview.target}`];
  lines.push(`Recorded by the API as written by: ${preview.recorded_as}`);
  for (const [name, value] of Object.entries(preview.fields)) {
    lines.push(`${name}: ${showValue(value)}`);
  }
  if (preview.billable) lines.push("This call is billable: the provider charges each resolution.");
  for (const warning of preview.warnings ?? []) lines.push(`Warning: ${warning}`);
  lines.push("Nothing is written unless you accept.");
  return lines.join("\n");
}
