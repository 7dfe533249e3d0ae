/**
 * The API Pix connector (CONTRACT §11.1): the PIX PSP port of one account through the BCB's API Pix
 * (charges, devoluções, charge removal, a Pix read back), the PSP's callback and reconciliation
 * turned into provider facts. Pointed at a real PSP, or at the embedded one, which it cannot tell apart.
 */

import { buildBrCode } from '../../domain/pix-brcode.ts';
import type { Account, CancelOutcome, GiveBack, PixChargeInput, PixPsp, RefundInput, RefundOutcome } from '../ports.ts';
import { devolucoesOf, pixRecord } from './record.ts';

type Charged = Awaited<ReturnType<PixPsp['charge']>>;

import { type ApiPixClient, ApiPixError, createApiPixClient, isRefusal, valorFromCents } from './client/api-pix-client.ts';
import type { ApiPixConnection } from './config.ts';
import { cobTxid, refundDevolucaoId, returnDevolucaoId, staticTxid } from './keys.ts';
import { receivedPixFacts } from './received-pix.ts';

export interface ApiPixSettings {
  installationId: string;
  receiverKey: string;
  merchantName: string;
  merchantCity: string;
}

/** The port and the client it talks through (replaceable: tests put a checking proxy in front of the PSP). */
export interface ApiPixConnector extends PixPsp {
  client: ApiPixClient;
}

const refusalOf = (error: ApiPixError) => error.problem?.title ?? `HTTP ${error.status}`;

export function apiPixConnector(
  connection: Pick<ApiPixConnection, 'baseUrl' | 'tokenUrl' | 'clientId' | 'clientSecret'> & Partial<ApiPixConnection>,
  s: ApiPixSettings,
  account: Account,
): ApiPixConnector {
  const connector: ApiPixConnector = {
    capability: 'PIX',
    account,
    client: createApiPixClient(connection),
    charge: (input) => charge(connector.client, s, input),
    removeCharge: (txid) => removeCharge(connector.client, txid),
    refund: (input) => refund(connector.client, s, input),
    giveBack: (payment) => giveBack(connector.client, s, payment),
    sync: (endToEndId) => sync(connector.client, { ...s, account: account.id }, endToEndId),
    record: (window) => pixRecord(connector.client)(window),
    devolucoesOf: (ids) => devolucoesOf(connector.client, ids),
  };
  return connector;
}

async function sync(client: ApiPixClient, s: ApiPixSettings & { account: string }, endToEndId: string) {
  try {
    const pix = await client.getPix(endToEndId);
    // A Pix the PSP does not know is not a payment, whatever anyone said.
    return pix.endToEndId === endToEndId ? await receivedPixFacts(client, pix, s.installationId, s.account) : [];
  } catch (error) {
    if (error instanceof ApiPixError && error.status === 404) return [];
    throw error;
  }
}

/**
 * A sale with an expiry is an immediate charge at the PSP (its BR Code, the PSP's pixCopiaECola,
 * carries the PSP's location); without one, a static BR Code with our key and the sale's txid.
 */
async function charge(
  client: ApiPixClient,
  s: ApiPixSettings,
  { amountCents, expiresInSeconds, debtor, reference }: PixChargeInput,
): Promise<Charged> {
  if (expiresInSeconds === null) {
    const txid = staticTxid(s.installationId);
    const brCode = buildBrCode({ key: s.receiverKey, amountCents, txid, merchantName: s.merchantName, merchantCity: s.merchantCity });
    return { ok: true, charge: { txid, brCode, charge: 'STATIC', madeAt: null } };
  }
  const txid = cobTxid(s.installationId, reference);
  const devedor =
    debtor && (debtor.document.length === 11 ? { cpf: debtor.document, nome: debtor.name } : { cnpj: debtor.document, nome: debtor.name });
  try {
    const cob = await client.putCob(txid, {
      calendario: { expiracao: expiresInSeconds },
      ...(devedor ? { devedor } : {}),
      valor: { original: valorFromCents(amountCents) },
      chave: s.receiverKey,
    });
    if (!cob.pixCopiaECola) return { ok: false, reason: 'The PIX provider created the charge without a BR Code' };
    // Only a retry's charge can exist already, and only a payable one may be sold.
    if (cob.status !== 'ATIVA') return { ok: false, reason: `The PIX provider holds this charge as ${cob.status}` };
    const madeAt = new Date(cob.calendario.criacao);
    return { ok: true, charge: { txid, brCode: cob.pixCopiaECola, charge: 'ACTIVE', madeAt: Number.isNaN(madeAt.getTime()) ? null : madeAt } };
  } catch (error) {
    if (error instanceof ApiPixError) return { ok: false, reason: `The PIX provider did not create the charge (${error.kind})` };
    throw error;
  }
}

/** A PIX sale is refunded by a devolução of the Pix that paid it (CONTRACT §5a), settled when the PSP says so. */
async function refund(client: ApiPixClient, s: ApiPixSettings, input: RefundInput): Promise<RefundOutcome> {
  if (input.pixEndToEndId === null) return { status: 'FAILED', reason: 'no Pix received at the PSP for this sale (paid by an operator event)' };
  try {
    const devolucao = await client.putDevolucao(input.pixEndToEndId, refundDevolucaoId(s.installationId, input.refundId), {
      valor: valorFromCents(input.amountCents),
      natureza: 'ORIGINAL',
    });
    if (devolucao.status === 'DEVOLVIDO') return { status: 'SUCCEEDED' };
    if (devolucao.status === 'NAO_REALIZADO') return { status: 'FAILED', reason: `NAO_REALIZADO${devolucao.motivo ? `: ${devolucao.motivo}` : ''}` };
    return { status: 'PENDING', providerRef: devolucao.rtrId };
  } catch (error) {
    // A refusal is final (sending it again would be refused again); anything else is sent again.
    if (isRefusal(error)) return { status: 'FAILED', reason: `the PSP refused the devolução: ${refusalOf(error)}` };
    throw error;
  }
}

// A status the file does not list yet (an open enum) is one still under way.
const devolucao_status: Record<string, 'SENT' | 'DONE' | 'REFUSED'> = { EM_PROCESSAMENTO: 'SENT', DEVOLVIDO: 'DONE', NAO_REALIZADO: 'REFUSED' };

/** A charge nobody may pay any more is removed; one already paid or removed has nothing left to remove. */
async function removeCharge(client: ApiPixClient, txid: string): Promise<CancelOutcome> {
  try {
    await client.patchCob(txid, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
  } catch (error) {
    if (!isRefusal(error)) throw error;
  }
  return { status: 'DONE', detail: null };
}

/** A Pix that paid nothing is returned whole; idempotent: asked again, the PSP says how it stands. */
async function giveBack(client: ApiPixClient, s: ApiPixSettings, payment: GiveBack): Promise<CancelOutcome> {
  try {
    const id = payment.key ?? returnDevolucaoId(s.installationId, payment.paymentId);
    const devolucao = await client.putDevolucao(payment.paymentId, id, {
      valor: valorFromCents(payment.amountCents),
      natureza: 'ORIGINAL',
      descricao: 'Pix devolvido: a cobrança não aceita este pagamento',
    });
    return { status: devolucao_status[devolucao.status] ?? 'SENT', detail: devolucao.motivo ?? null, reference: devolucao.rtrId };
  } catch (error) {
    // A return the PSP will not make is shown as not made.
    if (!isRefusal(error)) throw error;
    return { status: 'REFUSED', detail: `refused by the PSP: ${refusalOf(error)}` };
  }
}
