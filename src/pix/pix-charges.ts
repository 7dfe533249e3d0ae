/** PIX charges and devoluções through the API Pix connector (CONTRACT §11.1). */
import type { Config } from '../config.ts';
import { ApiError } from '../domain/errors.ts';
import { buildBrCode, newTxid } from '../domain/pix-brcode.ts';
import type { ApiPixClient, Devolucao } from '../pix-rail/api-pix-client.ts';
import { ApiPixError, isRefusal, valorFromCents } from '../pix-rail/api-pix-client.ts';
import type { PixProvider, RefundOutcome, RefundProvider } from '../providers/ports.ts';

type Merchant = Pick<Config, 'pixReceiverKey' | 'pixMerchantName' | 'pixMerchantCity'>;

/** A charge's txid: 32 of [A-Za-z0-9] (the API Pix wants 26–35), ~190 bits. */
export const newCobTxid = () => newTxid(32);

/**
 * A sale with an expiry is an immediate charge at the PSP (its BR Code, the PSP's pixCopiaECola,
 * carries the PSP's location); without one, a static BR Code with our key and the sale's txid.
 */
/** The connector, read at each call (a test may put a checking proxy in front of it). */
type Rail = { readonly client: ApiPixClient };

export function apiPixCharges(rail: Rail, merchant: Merchant): PixProvider {
  return {
    async createCharge({ amountCents, expiresInSeconds, debtor }) {
      if (expiresInSeconds === null) {
        const txid = newTxid();
        const brCode = buildBrCode({
          key: merchant.pixReceiverKey,
          amountCents,
          txid,
          merchantName: merchant.pixMerchantName,
          merchantCity: merchant.pixMerchantCity,
        });
        return { txid, brCode, charge: 'STATIC' };
      }
      const txid = newCobTxid();
      const devedor =
        debtor && (debtor.document.length === 11 ? { cpf: debtor.document, nome: debtor.name } : { cnpj: debtor.document, nome: debtor.name });
      try {
        const cob = await rail.client.putCob(txid, {
          calendario: { expiracao: expiresInSeconds },
          ...(devedor ? { devedor } : {}),
          valor: { original: valorFromCents(amountCents) },
          chave: merchant.pixReceiverKey,
        });
        if (!cob.pixCopiaECola) throw new ApiError('PROVIDER_ERROR', 'The PIX provider created the charge without a BR Code');
        return { txid, brCode: cob.pixCopiaECola, charge: 'ACTIVE' };
      } catch (error) {
        if (error instanceof ApiPixError) throw new ApiError('PROVIDER_ERROR', `The PIX provider did not create the charge (${error.kind})`);
        throw error;
      }
    },
  };
}

/** Our devolução ids: a refund's, and a returned Pix's (both unique, [A-Za-z0-9]{1,35}). */
export const refundDevolucaoId = (refundId: number) => `rf${refundId}`;
export const returnDevolucaoId = (endToEndId: string) => `rt${endToEndId.slice(-30)}`;

/** The API Pix devolução as our refund outcome. */
export function refundOutcomeOf(devolucao: Devolucao): RefundOutcome {
  if (devolucao.status === 'DEVOLVIDO') return { status: 'SUCCEEDED' };
  if (devolucao.status === 'NAO_REALIZADO') return { status: 'FAILED', reason: `NAO_REALIZADO${devolucao.motivo ? `: ${devolucao.motivo}` : ''}` };
  return { status: 'PENDING', providerRef: devolucao.rtrId };
}

/**
 * A PIX sale is refunded by a devolução of the Pix that paid it. A sale paid by an operator event
 * has no Pix at the PSP: with the sandbox the operator's word stands for the PSP's (settled at
 * once); with a real PSP the refund fails, to be made at the PSP and recorded with REFUNDED.
 */
export function apiPixRefunds(rail: Rail, others: RefundProvider, sandbox: boolean): RefundProvider {
  return {
    async refund(input) {
      if (input.paymentMethod !== 'PIX') return others.refund(input);
      if (input.pixEndToEndId === null) {
        return sandbox
          ? { status: 'SUCCEEDED' }
          : { status: 'FAILED', reason: 'no Pix received at the PSP for this sale (paid by an operator event)' };
      }
      try {
        const devolucao = await rail.client.putDevolucao(input.pixEndToEndId, refundDevolucaoId(input.refundId), {
          valor: valorFromCents(input.amountCents),
          natureza: 'ORIGINAL',
        });
        return refundOutcomeOf(devolucao);
      } catch (error) {
        // A refusal is final (sending it again would be refused again); anything else is sent again.
        if (isRefusal(error)) {
          return { status: 'FAILED', reason: `the PSP refused the devolução: ${error.problem?.title ?? `HTTP ${error.status}`}` };
        }
        throw error;
      }
    },
  };
}
