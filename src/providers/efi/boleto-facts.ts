/**
 * Pure: what Efí says of a boleto charge (a notification's history, or the charge read back) as
 * provider facts (CONTRACT §11.4, §14). Each status change is one fact, identified by the charge and
 * the status, so the history read again, or the charge read after its notification, repeats nothing.
 */
import type { ProviderFact } from '../../domain/provider-facts.ts';
import type { ChargeChange } from './charges-client.ts';
import { efiKey, idOfEfiKey } from './keys.ts';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const reference_numbers = 900_000_000_000_000n;
const reference_numbers_from = 100_000_000_000_000;

/**
 * A key's reference as a 15-digit number from 10^14 up, far above any sale id this installation will
 * draw: a keyed sale's custom_id then has the form every release of the gateway reads as its own.
 */
function referenceNumber(reference: string): number {
  let n = 0n;
  for (const c of reference) n = n * 62n + BigInt(base62.indexOf(c));
  return Number(n % reference_numbers) + reference_numbers_from;
}

/**
 * The custom_id a sale's charge carries: the installation's id, then the key's reference when the
 * sale has one (a retry finds the boleto by it), or else the sale's id.
 */
export const boletoCustomId = (installationId: string, saleId: number, reference: string | null) =>
  efiKey(installationId, reference === null ? saleId : referenceNumber(reference));

/** Whether a custom_id is one this installation gives (another installation may share the Efí account). */
export const isOurCustomId = (installationId: string, customId: string | null) => idOfEfiKey(installationId, customId) !== null;

const meaning: Record<string, 'paid' | 'canceled' | 'unpaid'> = {
  paid: 'paid',
  settled: 'paid',
  canceled: 'canceled',
  unpaid: 'unpaid',
  expired: 'unpaid',
};

/** One change of a charge; a status the gateway does not act on (new, waiting, link…) is a notice. */
export function factOfChange(change: ChargeChange, installationId: string): ProviderFact {
  const chargeId = String(change.chargeId);
  const status = meaning[change.status];
  const base = { provider: 'efi' as const, identity: `charge:${chargeId}:${change.status}`, externalReference: chargeId, source: { ...change } };
  if (!status) return { ...base, fact: { kind: 'NOTICE', what: `boleto charge ${chargeId} ${change.status}` } };
  // An Efí account may serve several installations: another's charge is not ours to act on.
  if (!isOurCustomId(installationId, change.customId))
    return { ...base, fact: { kind: 'NOTICE', what: `boleto charge ${chargeId} of another installation ${change.status}` } };
  return {
    ...base,
    fact: {
      kind: 'BOLETO_STATUS',
      // The charge id alone finds the sale: a charge whose sale was never written is the operator's.
      sale: { ids: [chargeId], saleId: null, referenceSuffices: false },
      chargeId,
      status,
      amount: status === 'paid' ? change.value : null,
    },
  };
}
