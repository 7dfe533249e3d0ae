/** The dynamic BR Code of a charge: it carries the location, and the payer's app fetches the rest. */
import { assembleBrCode, merchantField, tlv } from '../../../domain/pix-brcode.ts';

const GUI = 'br.gov.bcb.pix';
// Field 26 holds 99 characters: 18 for the GUI and 4 for sub-field 25's header leave 77 (BRAZIL.md).
export const LOCATION_MAX = 77;

export interface Merchant {
  name: string;
  city: string;
}

/** Fields 59 and 60 as a BR Code writes them; a name or city with nothing left is a configuration error. */
export function merchantOf(name: string, city: string): Merchant {
  const n = merchantField('merchantName', name, { cut: true });
  if (!n.ok) throw new Error(`sandbox PSP: merchantName ${n.refusal.message}`);
  const c = merchantField('merchantCity', city, { cut: true });
  if (!c.ok) throw new Error(`sandbox PSP: merchantCity ${c.refusal.message}`);
  return { name: n.value, city: c.value };
}

/**
 * 01 = 12 (single use), 26 = GUI + 25 (location without scheme), no amount (the payload has it),
 * 62-05 = `***` as the BCB requires of dynamic codes, CRC last.
 */
export function dynamicBrCode(location: string, merchant: Merchant): string {
  if (location.length > LOCATION_MAX || /^[a-z]+:\/\//i.test(location)) throw new Error(`sandbox PSP: bad location ${location}`);
  return assembleBrCode([
    ['00', '01'],
    ['01', '12'],
    ['26', tlv('00', GUI) + tlv('25', location)],
    ['52', '0000'],
    ['53', '986'],
    ['58', 'BR'],
    ['59', merchant.name],
    ['60', merchant.city],
    ['62', tlv('05', '***')],
  ]);
}
