/** Lower case, accents removed: "Rhône" and "rhone" compare equal (names typed by people). */
export function folded(text: string): string {
  return text.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
}
