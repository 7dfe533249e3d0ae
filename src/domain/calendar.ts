/**
 * Business dates (CONTRACT §1): calendar dates as `YYYY-MM-DD`, taken in America/Sao_Paulo. UTC
 * is used only as a neutral zone for arithmetic on dates that have no time.
 */

const day_ms = 86_400_000;

// Built once: constructing an Intl formatter is far costlier than using one.
const sao_paulo_day = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/Sao_Paulo',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/** The calendar date (YYYY-MM-DD) in America/Sao_Paulo at `now`. */
export function saoPauloDate(now: Date): string {
  const parts = sao_paulo_day.formatToParts(now);
  const part = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year').padStart(4, '0')}-${part('month')}-${part('day')}`;
}

/** `isoDate` plus `days`; setUTCFullYear because Date.UTC maps years 0–99 to 1900–1999. */
export function addDays(isoDate: string, days: number): string {
  const d = new Date(0);
  d.setUTCFullYear(Number(isoDate.slice(0, 4)), Number(isoDate.slice(5, 7)) - 1, Number(isoDate.slice(8, 10)) + days);
  return d.toISOString().slice(0, 10);
}

/** Days since 1970-01-01 of a strict `YYYY-MM-DD` calendar date, or null (2025-02-30 is null). */
export function epochDay(date: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  // Date.UTC rolls 02-30 over to 03-02; a round trip catches it.
  if (new Date(ms).toISOString().slice(0, 10) !== date) return null;
  return ms / day_ms;
}

/** The date of an epoch day. */
export function dateOfEpochDay(day: number): string {
  return new Date(day * day_ms).toISOString().slice(0, 10);
}

/**
 * The instant a São Paulo calendar date begins. São Paulo has kept UTC−3 all year since 2019; for
 * a date in an older daylight-saving summer this is an hour late, which a date filter can bear.
 */
export function saoPauloMidnight(date: string): Date | null {
  const day = epochDay(date);
  return day === null ? null : new Date(day * day_ms + 3 * 3_600_000);
}
