/**
 * The values of an Adyen report's cells, read exactly: amounts are decimal text ("349.99", "7.5")
 * turned into integer cents without passing through a float, and times are wall-clock text in the
 * account's time zone ("2013-06-03 11:26:49" with TimeZone "CET") turned into an instant.
 */

/** A report the gateway cannot read as Adyen documents it; the message names the line and column. */
export class SettlementReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettlementReportError';
  }
}

/** Integer cents of a decimal amount; an empty cell is 0. More than two decimals must be zeros: cents are never rounded. */
export function centsOf(text: string, column: string): number {
  const t = text.trim();
  if (t === '') return 0;
  // 13 integer digits keep cents within a safe integer (2^53 ≈ 9·10^15).
  const m = /^([+-])?(\d{1,13})(?:\.(\d{1,12}))?$/.exec(t);
  if (!m) throw new SettlementReportError(`${column} "${t}" is not a decimal amount`);
  const fraction = (m[3] ?? '').padEnd(2, '0');
  if (/[^0]/.test(fraction.slice(2))) throw new SettlementReportError(`${column} "${t}" is not a whole number of cents`);
  const cents = Number(m[2]) * 100 + Number(fraction.slice(0, 2));
  return m[1] === '-' && cents !== 0 ? -cents : cents;
}

// The abbreviations Adyen's Customer Area writes in TimeZone (its account setting), as offsets from UTC in
// minutes. Ambiguous ones (CST, IST, AMT…) are left out on purpose: guessing would shift a day's movements.
// biome-ignore format: a table
const zone_offsets: Record<string, number> = {
  UTC: 0, GMT: 0, Z: 0, WET: 0, WEST: 60, BST: 60, CET: 60, CEST: 120, EET: 120, EEST: 180, MSK: 180,
  BRT: -180, BRST: -120, ART: -180, CLT: -240, CLST: -180, EST: -300, EDT: -240, CDT: -300, MST: -420, MDT: -360,
  PST: -480, PDT: -420, HKT: 480, SGT: 480, AWST: 480, JST: 540, KST: 540, AEST: 600, AEDT: 660, NZST: 720, NZDT: 780,
};

const wall_time = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/;

/** The instant of a wall-clock time in `zone` (an abbreviation, an IANA name, or an offset such as -03:00 or GMT-3). */
export function instantOf(local: string, zone: string): Date {
  const m = wall_time.exec(local.trim());
  if (!m) throw new SettlementReportError(`Creation Date "${local}" is not YYYY-MM-DD HH:MM:SS`);
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map((x) => Number(x ?? 0)) as [number, number, number, number, number, number];
  const wall = Date.UTC(y, mo - 1, d, h, mi, s, Number((m[7] ?? '').padEnd(3, '0')));
  const check = new Date(wall);
  // Date.UTC rolls 2023-02-30 over to March: a date that is not one is refused, not moved.
  if (check.getUTCDate() !== d || check.getUTCMonth() !== mo - 1 || h > 23 || mi > 59 || s > 59)
    throw new SettlementReportError(`Creation Date "${local}" is not a valid date and time`);
  return new Date(wall - offsetMinutes(zone.trim(), wall) * 60_000);
}

function offsetMinutes(zone: string, wall: number): number {
  const fixed = zone_offsets[zone.toUpperCase()];
  if (fixed !== undefined) return fixed;
  const numeric = /^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$/i.exec(zone);
  if (numeric) {
    const minutes = Number(numeric[2]) * 60 + Number(numeric[3] ?? 0);
    return numeric[1] === '-' ? -minutes : minutes;
  }
  if (zone.includes('/')) return ianaOffset(zone, wall);
  throw new SettlementReportError(`TimeZone "${zone}" is not a time zone the gateway can read unambiguously`);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset at the instant `instant`, in minutes. */
function offsetAt(zone: string, instant: number): number {
  let f = formatters.get(zone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      });
    } catch {
      throw new SettlementReportError(`TimeZone "${zone}" is not a time zone`);
    }
    formatters.set(zone, f);
  }
  const part = (parts: Intl.DateTimeFormatPart[], type: string) => Number(parts.find((p) => p.type === type)?.value);
  const p = f.formatToParts(new Date(instant));
  const asUtc = Date.UTC(part(p, 'year'), part(p, 'month') - 1, part(p, 'day'), part(p, 'hour'), part(p, 'minute'), part(p, 'second'));
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000);
}

/** The offset of a wall time in an IANA zone: the offset at the wall time read as UTC, then at the instant that gives. */
function ianaOffset(zone: string, wall: number): number {
  const first = offsetAt(zone, wall);
  return offsetAt(zone, wall - first * 60_000);
}
