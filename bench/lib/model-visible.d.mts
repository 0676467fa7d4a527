export function modelVisibleBytes(
  tools: ReadonlyArray<{ name: string; description?: string; inputSchema: unknown }>,
): number;
export const MODEL_VISIBLE_TARGET: number;
