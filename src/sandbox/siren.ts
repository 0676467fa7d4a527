/**
 * SIREN: the 9-digit French company identifier; its last digit is a Luhn check digit. (La
 * Poste's digit-sum exception concerns its SIRET numbers, not its SIREN, which passes Luhn.)
 */

export interface SirenCheck {
  siren: string;
  format_valid: boolean;
  checksum_valid: boolean;
  valid: boolean;
  reason: string | null;
}

export function luhnSum(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum;
}

export function checkSiren(input: string): SirenCheck {
  const siren = input.replace(/\s+/g, "");
  if (!/^\d{9}$/.test(siren)) {
    return {
      siren,
      format_valid: false,
      checksum_valid: false,
      valid: false,
      reason: "a SIREN is exactly 9 digits",
    };
  }
  const checksumValid = luhnSum(siren) % 10 === 0;
  return {
    siren,
    format_valid: true,
    checksum_valid: checksumValid,
    valid: checksumValid,
    reason: checksumValid ? null : "the check digit does not match (Luhn)",
  };
}

/** Completes 8 digits with the Luhn check digit that makes a valid SIREN. */
export function withCheckDigit(eightDigits: string): string {
  for (let d = 0; d <= 9; d++) {
    const candidate = `${eightDigits}${d}`;
    if (luhnSum(candidate) % 10 === 0) return candidate;
  }
  throw new Error("unreachable: one check digit always fits");
}
