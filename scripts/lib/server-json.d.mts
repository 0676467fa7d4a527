export const SCHEMA: string;
export const SERVER_NAME: string;
export const RELEASES: string;
export function serverJson(
  pkg: { version: string },
  // biome-ignore lint/suspicious/noExplicitAny: manifest.json as parsed
  manifest: any,
  sha256: string,
  variables: Array<{ name: string; description: string }>,
): Record<string, unknown>;
