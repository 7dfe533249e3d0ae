/** The dynamic BR Code of a charge: it carries the location, and the payer's app fetches the rest. */
import { brCode, merchantText } from './encoders.ts';

const GUI = 'br.gov.bcb.pix';
// Field 26 holds 99 characters: 18 for the GUI and 4 for sub-field 25's header leave 77 (BRAZIL.md).
export const LOCATION_MAX = 77;

export interface Merchant {
  name: string;
  city: string;
}

/** Fields 59 and 60 as a BR Code writes them; a name or city with nothing left is a configuration error. */
export function merchantOf(name: string, city: string): Merchant {
  const n = merchantText(name, 25);
  if (n === null) throw new Error('sandbox PSP: merchantName has no letter or digit');
  const c = merchantText(city, 15);
  if (c === null) throw new Error('sandbox PSP: merchantCity has no letter or digit');
  return { name: n, city: c };
}

/**
 * 01 = 12 (single use), 26 = GUI + 25 (location without scheme), no amount (the payload has it),
 * 62-05 = `***` as the BCB requires of dynamic codes, CRC last.
 */
export function dynamicBrCode(location: string, merchant: Merchant): string {
  if (location.length > LOCATION_MAX || /^[a-z]+:\/\//i.test(location)) throw new Error(`sandbox PSP: bad location ${location}`);
  return brCode([
    ['00', '01'],
    ['01', '12'],
    [
      '26',
      [
        ['00', GUI],
        ['25', location],
      ],
    ],
    ['52', '0000'],
    ['53', '986'],
    ['58', 'BR'],
    ['59', merchant.name],
    ['60', merchant.city],
    ['62', [['05', '***']]],
  ]);
}
