/**
 * Pure: what a sent Pix, as Efí's own API describes it, tells the gateway about a cashout (CONTRACT
 * §11.3, §14): how it stands, and each devolução the receiver's bank made of it.
 */
import type { ProviderFact } from '../../domain/provider-facts.ts';
import { centsFromValor } from '../api-pix/client/valor.ts';
import { efiKey, idOfEfiKey } from './keys.ts';
import type { SentPix } from './pix-send-client.ts';

/** The id a cashout's Pix is sent with: the installation's id and the cashout's ([a-zA-Z0-9]{1,35}). */
export const payoutIdEnvio = efiKey;

/** The cashout an idEnvio of this installation names; null for anyone else's. */
export const cashoutIdOf = (installationId: string, idEnvio: string): number | null => idOfEfiKey(installationId, idEnvio);

export function factsOfSent(sent: SentPix, cashoutId: number): ProviderFact[] {
  const outcome: ProviderFact = {
    provider: 'efi',
    identity: `${sent.idEnvio}:${sent.status}`,
    externalReference: sent.idEnvio,
    fact: {
      kind: 'PAYOUT_OUTCOME',
      cashoutId,
      idEnvio: sent.idEnvio,
      status: sent.status,
      endToEndId: sent.endToEndId,
      amount: centsFromValor(sent.valor),
      reason: sent.status === 'NAO_REALIZADO' ? (sent.reason ?? 'NAO_REALIZADO') : null,
    },
  };
  const returns = sent.returns.map(
    (r): ProviderFact => ({
      provider: 'efi',
      identity: `${sent.idEnvio}/${r.id}`,
      externalReference: sent.idEnvio,
      fact: { kind: 'PAYOUT_RETURNED', cashoutId, idEnvio: sent.idEnvio, returnId: r.id, amount: centsFromValor(r.valor) },
    }),
  );
  return [outcome, ...returns];
}

/** A send Efí refused in the request itself, confirmed absent at Efí: not made, for that reason. */
export function refusalFact(idEnvio: string, cashoutId: number, amount: number, reason: string): ProviderFact {
  return {
    provider: 'efi',
    identity: `${idEnvio}:NAO_REALIZADO`,
    externalReference: idEnvio,
    fact: { kind: 'PAYOUT_OUTCOME', cashoutId, idEnvio, status: 'NAO_REALIZADO', endToEndId: null, amount, reason },
  };
}
