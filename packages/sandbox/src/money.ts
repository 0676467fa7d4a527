/** Decimal amounts travel as strings (spec part 2); sums are done in integer cents, never floats. */
export function toCents(amount: unknown): bigint {
  if (typeof amount !== "string" || !/^-?\d+(\.\d{1,2})?$/.test(amount)) return 0n;
  const [units = "0", fraction = ""] = amount.split(".");
  const sign = units.startsWith("-") ? -1n : 1n;
  return sign * (BigInt(units.replace("-", "")) * 100n + BigInt(fraction.padEnd(2, "0")));
}

export function fromCents(cents: bigint): string {
  const sign = cents < 0n ? "-" : "";
  const abs = cents < 0n ? -cents : cents;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`;
}
