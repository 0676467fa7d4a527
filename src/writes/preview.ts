import type { Preview } from "./intent.js";

/**
 * The preview as a person reads it, for the confirmation form: the action and its target by
 * name, whom it acts for, then every field as it will be sent, texts in full.
 */
export function previewText(preview: Preview): string {
  const lines = [`${preview.action}: ${preview.target}`];
  if (preview.acting_for) lines.push(`On behalf of: ${preview.acting_for}`);
  for (const [name, value] of Object.entries(preview.fields)) {
    lines.push(`${name}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
  }
  if (preview.billable) lines.push("This call is billable: the provider charges each resolution.");
  lines.push("Nothing is written unless you accept.");
  return lines.join("\n");
}
