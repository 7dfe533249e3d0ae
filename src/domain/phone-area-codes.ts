/**
 * Brazilian telephone numbers under ANATEL's Plano Geral de Numeração: the 67 area codes (DDD) in use,
 * and which first digit a subscriber number may have. Pure.
 */

// ANATEL's list. Gaps such as 20, 23, 25, 26, 29, 30, 36, 39, 40, 50, 52, 56–60, 70, 72, 76, 78, 80
// and 90 are not allocated: no Brazilian number starts with them.
const AREA_CODES: ReadonlySet<string> = new Set(
  [
    [11, 12, 13, 14, 15, 16, 17, 18, 19], // SP
    [21, 22, 24, 27, 28], // RJ, ES
    [31, 32, 33, 34, 35, 37, 38], // MG
    [41, 42, 43, 44, 45, 46, 47, 48, 49], // PR, SC
    [51, 53, 54, 55], // RS
    [61, 62, 63, 64, 65, 66, 67, 68, 69], // DF, GO, TO, MT, MS, AC, RO
    [71, 73, 74, 75, 77, 79], // BA, SE
    [81, 82, 83, 84, 85, 86, 87, 88, 89], // PE, AL, PB, RN, CE, PI
    [91, 92, 93, 94, 95, 96, 97, 98, 99], // PA, AM, RR, AP, MA
  ]
    .flat()
    .map(String),
);

/** Every area code in use, as two-digit strings in ascending order. */
export const BRAZIL_AREA_CODES: readonly string[] = [...AREA_CODES];

/** True for a two-digit area code (DDD) that ANATEL has allocated. */
export function isBrazilianAreaCode(ddd: string): boolean {
  return AREA_CODES.has(ddd);
}

/**
 * Why the national number (DDD and subscriber number, digits only) cannot exist, or null when it can:
 * a known DDD, then 9 digits starting with 9 (mobile) or 8 digits starting with 2 to 5 (landline).
 */
export function brazilianPhoneProblem(national: string): string | null {
  if (!/^\d{10,11}$/.test(national)) return 'a Brazilian number is the area code (DDD, 2 digits) and 8 or 9 digits';
  const ddd = national.slice(0, 2);
  if (!isBrazilianAreaCode(ddd)) return `area code (DDD) ${ddd} does not exist in Brazil`;
  const first = national[2]!;
  if (national.length === 11 && first !== '9') return `a 9-digit (mobile) number starts with 9, this one with ${first}`;
  if (national.length === 10 && !'2345'.includes(first)) return `an 8-digit (landline) number starts with 2, 3, 4 or 5, this one with ${first}`;
  return null;
}
