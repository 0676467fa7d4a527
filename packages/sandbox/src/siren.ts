import { createHash } from "node:crypto";
import { CITIES } from "./data/names.js";
import type { SirenRecord } from "./models/siren.js";
import { type FieldError, invalid } from "./problem.js";

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

/**
 * 422 `siren_invalid` naming each field whose SIREN fails its format or check digit: spec
 * part 2, Operator, "checksum verified where the route provides it". Absent and null pass.
 */
export function assertSirens(fields: Record<string, string | null | undefined>): void {
  const errors: FieldError[] = [];
  for (const [field, value] of Object.entries(fields)) {
    if (value === null || value === undefined) continue;
    const check = checkSiren(value);
    if (!check.valid)
      errors.push({ field, rule: "Luhn checksum", message: check.reason ?? "invalid" });
  }
  if (errors.length > 0) throw invalid(errors, "siren_invalid");
}

/** The simulated registry: a stable, plausible company for any valid SIREN. */
export function registryLookup(siren: string, fetchedAt: string): SirenRecord {
  const digest = createHash("sha256").update(siren).digest();
  const [city, postcode] = CITIES[digest[0]! % CITIES.length] ?? ["Paris", "75001"];
  const words = ["Horizon", "Patrimoine", "Bâtir", "Urba", "Rives", "Essor", "Cité", "Terra"];
  return {
    siren,
    denomination: `${words[digest[1]! % words.length]?.toUpperCase()} ${words[digest[2]! % words.length]?.toUpperCase()} ${siren.slice(0, 3)}`,
    forme_juridique: ["SAS", "SARL", "SCI", "SA"][digest[3]! % 4] ?? "SAS",
    code_naf: ["41.10A", "41.20A", "68.10Z", "68.20B"][digest[4]! % 4] ?? "41.10A",
    adresse: `${(digest[5]! % 150) + 1} avenue de la République, ${postcode} ${city}`,
    date_creation: `${1985 + (digest[6]! % 38)}-${String((digest[7]! % 12) + 1).padStart(2, "0")}-15`,
    etat_administratif: digest[8]! % 10 === 0 ? "cesse" : "actif",
    source: "provider",
    fetched_at: fetchedAt,
  };
}
