/**
 * A reconciliation day (CONTRACT §15): a calendar date of America/Sao_Paulo, which has kept UTC−3
 * all year since 2019 (no daylight saving time), read with an hour's overlap on each side so that a
 * movement booked near midnight by one side and just after it by the other is still one movement.
 */
import { addDays, epochDay, saoPauloDate } from '../domain/calendar.ts';
import type { RecordWindow } from '../providers/record.ts';

export const overlap_ms = 60 * 60_000;
const day_ms = 24 * 60 * 60_000;
const sao_paulo_offset_ms = 3 * 60 * 60_000;

/** Whether `day` is a strict YYYY-MM-DD calendar date. */
export const isDay = (day: string): boolean => epochDay(day) !== null;

/** The day's own interval, [00:00, 24:00) in São Paulo. */
export function dayWindow(day: string): RecordWindow {
  const from = new Date(Date.parse(`${day}T00:00:00Z`) + sao_paulo_offset_ms);
  return { from, to: new Date(from.getTime() + day_ms) };
}

/**
 * Where each side's counterpart of the day's movements may be: the day widened by the overlap and,
 * for a provider that books later than the journal (a card processor's settlement), by that delay
 * after the day on the provider's side and before it on the journal's.
 */
export function sideWindows(day: string, lateByMs: number): { provider: RecordWindow; ledger: RecordWindow } {
  const own = dayWindow(day);
  const at = (base: Date, ms: number) => new Date(base.getTime() + ms);
  return {
    provider: { from: at(own.from, -overlap_ms), to: at(own.to, overlap_ms + lateByMs) },
    ledger: { from: at(own.from, -overlap_ms - lateByMs), to: at(own.to, overlap_ms) },
  };
}

/** The São Paulo day before the one `now` is in. */
export const yesterday = (now: Date): string => addDays(saoPauloDate(now), -1);

/** The São Paulo hour of the day at `now` (0–23). */
export const saoPauloHour = (now: Date): number => new Date(now.getTime() - sao_paulo_offset_ms).getUTCHours();
