/**
 * Pure: what a Pix, as the PSP's own API describes it (never a callback body alone), tells the
 * gateway (CONTRACT §11.1, §14): it was received, and what became of each of its devoluções: our
 * refunds settled, our returns done, a MED that took the money back, or one nobody here asked for.
 */
import type { ProviderFact } from '../../domain/provider-facts.ts';
import { centsFromValor, type Devolucao, type Pix } from './client/api-pix-client.ts';
import { isOurReturn, refundIdOf } from './keys.ts';

const med_naturezas = new Set(['MED_OPERACIONAL', 'MED_FRAUDE', 'MED_PIX_AUTOMATICO']);
// A status the file does not list yet (an open enum) is one still under way.
const return_status: Record<string, 'SENT' | 'DONE' | 'REFUSED'> = { EM_PROCESSAMENTO: 'SENT', DEVOLVIDO: 'DONE', NAO_REALIZADO: 'REFUSED' };

/**
 * `chargeLocation`: where the charge the Pix paid lives, read from the PSP when its txid is not one
 * this installation makes (a boleto's Pix, made by its issuer); null otherwise.
 */
export function factsOfPix(pix: Pix, installationId: string, chargeLocation: string | null = null, account?: string): ProviderFact[] {
  const e2e = pix.endToEndId;
  const received: ProviderFact = {
    provider: 'api-pix',
    identity: e2e,
    externalReference: e2e,
    fact: {
      kind: 'PIX_RECEIVED',
      // The charge's txid is the PIX sale's id at the PSP; a boleto's Pix is found by its charge's location.
      sale: { ids: pix.txid ? [pix.txid] : [], saleId: null, referenceSuffices: false, chargeLocation },
      endToEndId: e2e,
      txid: pix.txid ?? null,
      amount: centsFromValor(pix.valor),
      paidAt: new Date(pix.horario).toISOString(),
      ...(account ? { account } : {}),
    },
  };
  const devolucoes = (pix.devolucoes ?? []).map((d) => devolucaoFact(e2e, d, installationId));
  return [received, ...devolucoes.filter((f): f is ProviderFact => f !== null)];
}

/** What one devolução of the Pix `e2e` says, once it is a fact (null while it is as the gateway left it). */
export function devolucaoFact(e2e: string, d: Devolucao, installationId: string): ProviderFact | null {
  const amount = centsFromValor(d.valor);
  const base = { provider: 'api-pix' as const, externalReference: e2e, source: { devolucaoId: d.id, rtrId: d.rtrId, natureza: d.natureza ?? null } };
  if (med_naturezas.has(d.natureza ?? '')) {
    // The payer's bank took the money back: a MED lost. Until then it is the PSP's business, not yet a fact.
    if (d.status !== 'DEVOLVIDO') return null;
    return {
      ...base,
      identity: `${e2e}/${d.id}`,
      fact: { kind: 'MED', sale: { ids: [e2e], saleId: null, referenceSuffices: false }, devolucaoId: d.id, returnId: d.rtrId, amount },
    };
  }
  const identity = `${e2e}/${d.id}:${d.status}`;
  if (isOurReturn(installationId, e2e, d.id))
    return {
      ...base,
      identity,
      fact: { kind: 'PIX_RETURN', endToEndId: e2e, status: return_status[d.status] ?? 'SENT', detail: d.motivo ?? null, returnId: d.rtrId },
    };
  // A refund still EM_PROCESSAMENTO is as we left it: only its end is a fact.
  if (d.status === 'EM_PROCESSAMENTO') return null;
  const succeeded = d.status === 'DEVOLVIDO';
  const refundId = refundIdOf(installationId, d.id);
  // Someone else's devolução that did not happen moved no money.
  if (refundId === null && !succeeded) return null;
  const reason = succeeded ? null : `NAO_REALIZADO${d.motivo ? `: ${d.motivo}` : ''}`;
  return { ...base, identity, fact: { kind: 'REFUND', refundId, paymentId: e2e, amount, succeeded, reason } };
}
