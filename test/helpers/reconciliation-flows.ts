/**
 * What moves money at the embedded PSP's accounts, for the reconciliation tests (CONTRACT §15): the
 * gateway's own flows (a PIX sale paid and refunded, a card sale, a boleto, a cashout paid out), each
 * through the sandbox rails as a payer's bank and the PSP would, and the provider-side faults the PSP
 * can be made to commit (a devolução by hand, a Pix for another installation, a payout sent twice, a
 * boleto paid without telling, a devolução answered made and never made). Each answers what it moved.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cardAutopilotJob } from '../../src/providers/sandbox/autopilot.ts';
import { saleOf } from './fixtures.ts';
import { fund } from './funding.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys } from './gateway.ts';

export const PIX_ACCOUNT = 'api-pix:sandbox';
export const EFI_ACCOUNT = 'efi:sandbox';
export const CARD_ACCOUNT = 'sandbox';

export interface PixSale {
  id: number;
  e2e: string;
  amount: number;
  /** Refunded as the gateway has it (SUCCEEDED refunds, whether the PSP made them or not). */
  refunded: number;
  /** Given back as the PSP has it (its devoluções, whether the gateway asked for them or not). */
  devolved: number;
}

export interface BoletoSale {
  id: number;
  chargeId: string;
  amount: number;
}

export async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
}

const reaisToCents = (text: string): number => {
  const [whole, part = ''] = text.split('.');
  return Number(whole) * 100 + Number(part.padEnd(2, '0'));
};

/** The flows of one seller of a gateway. */
export class Flows {
  constructor(
    private readonly gw: Gateway,
    private readonly seller: SellerKeys,
  ) {}

  private psp = () => this.gw.ctx.rails.psp!;

  private async inject(method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object, status = 200) {
    const res = await this.gw.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  private read = (id: number) => this.inject('GET', `/api/transactions/${id}`, this.seller.headers);
  private newSale = async (body: Record<string, unknown>): Promise<number> =>
    (await this.inject('POST', '/api/sales', this.seller.headers, body, 201)).sale.id;
  private column = async (id: number, name: 'pix_end_to_end_id' | 'external_transaction_id') =>
    String((await this.gw.ctx.db.query<{ v: string }>(`SELECT ${name} AS v FROM transactions WHERE id = $1`, [id])).rows[0]!.v);
  private async paidBySandbox(id: number, what: string): Promise<void> {
    await this.inject('POST', `/sandbox/sales/${id}/pay`, adminHeaders);
    await until(what, async () => (await this.read(id)).status === 'PAGO');
  }

  /** A refund through the seller API, settled by its provider; its id. */
  private async refundSucceeded(id: number, amount: number, settle: () => Promise<unknown>): Promise<number> {
    const refundId = (await this.inject('POST', `/api/transactions/${id}/refund`, this.seller.headers, { amount }, 201)).id;
    await settle();
    await until(`refund ${refundId} of sale ${id} SUCCEEDED`, async () => {
      const list = await this.inject('GET', `/api/transactions/${id}/refunds`, this.seller.headers);
      return (list.data ?? list).some((r: { id: number; status: string }) => r.id === refundId && r.status === 'SUCCEEDED');
    });
    return refundId;
  }

  async paidPix(amount: number): Promise<PixSale> {
    const id = await this.newSale(saleOf('PIX', { amount }));
    await this.paidBySandbox(id, `PIX sale ${id} paid`);
    return { id, e2e: await this.column(id, 'pix_end_to_end_id'), amount, refunded: 0, devolved: 0 };
  }

  /** A devolução the gateway asks for and the PSP makes. */
  async refundPix(sale: PixSale, amount: number): Promise<void> {
    await this.refundSucceeded(sale.id, amount, () => this.psp().settleDevolucoes());
    sale.refunded += amount;
    sale.devolved += amount;
  }

  /** A card sale paid at the sandbox processor, then `refund` cents refunded (0: none). */
  async paidCard(amount: number, refund: number): Promise<void> {
    const id = await this.newSale(saleOf('CREDIT_CARD', { amount }));
    await until(`card sale ${id} paid`, async () => {
      await cardAutopilotJob.run(this.gw.ctx);
      return (await this.read(id)).status === 'PAGO';
    });
    if (refund > 0) await this.refundSucceeded(id, refund, async () => {});
  }

  async boleto(amount: number, paid: boolean): Promise<BoletoSale> {
    const id = await this.newSale(saleOf('BOLETO', { amount }));
    if (paid) await this.paidBySandbox(id, `boleto ${id} paid`);
    return { id, chargeId: await this.column(id, 'external_transaction_id'), amount };
  }

  /** A cashout of `cents` (funded first), paid out by the payout job, sent twice by the PSP when `twice`; its idEnvio and net cents. */
  async cashout(cents: number, twice: boolean): Promise<{ idEnvio: string; net: number }> {
    // Refunds may have left the seller owing (the fee is not returned): funded up to the amount.
    const { available } = await this.inject('GET', '/api/public/balance', this.seller.headers);
    if (available < cents) await fund(this.gw, this.seller.id, cents - available);
    const body = { amount: (cents / 100).toFixed(2), pixKey: '52998224725' };
    const made = await this.inject('POST', '/api/public/cashout', this.seller.headers, body, 201);
    if (twice) this.psp().sendTwiceNext();
    await railJob(this.gw, 'efi-payouts').run(this.gw.ctx);
    await this.psp().settleSends();
    await until(
      `cashout ${made.id} COMPLETED`,
      async () => (await this.inject('GET', `/api/public/cashout/${made.id}`, this.seller.headers)).status === 'COMPLETED',
    );
    return { idEnvio: `${this.gw.ctx.installationId}${made.id}`, net: reaisToCents(made.netAmount) };
  }

  // ---- the provider-side faults ----

  /** A devolução made at the PSP by hand; its rtrId. */
  async devolveByHand(sale: PixSale, amount: number): Promise<string> {
    const devolucao = await this.psp().devolveByHand(sale.e2e, amount);
    sale.devolved += amount;
    return devolucao.rtrId;
  }

  /** A Pix received under a txid this installation never made (another installation on the account); its end-to-end id. */
  async foreignPix(amount: number): Promise<string> {
    const txid = `x${randomBytes(16).toString('hex')}`.slice(0, 30);
    assert.ok(!txid.startsWith(this.gw.ctx.installationId));
    const valor = { original: (amount / 100).toFixed(2) };
    await this.gw.ctx.rails.apiPix.client.putCob(txid, { calendario: { expiracao: 3600 }, valor, chave: this.gw.ctx.config.pixReceiverKey });
    const { endToEndId } = await this.psp().pay(txid, amount);
    await until(`the foreign Pix ${endToEndId} told to the operator`, () => hasEvent(this.gw, 'PIX_RECEIVED', endToEndId));
    return endToEndId;
  }

  /** A boleto paid at the bank without a word to the gateway (`amount`, else its total), the sale then cancelled; the cents paid. */
  async boletoPaidSilently(boleto: BoletoSale, amount: number | null): Promise<number> {
    await this.psp().payBoletoSilently(Number(boleto.chargeId), amount ?? undefined);
    await this.inject('POST', `/api/transactions/${boleto.id}/cancel`, this.seller.headers);
    return amount ?? boleto.amount;
  }

  /** A refund the PSP answers made (DEVOLVIDO under an rtrId of its own) and never makes; that rtrId. */
  async refundNeverMade(sale: PixSale, amount: number): Promise<string> {
    const apiPix = this.gw.ctx.rails.apiPix;
    const refund = apiPix.refund;
    const rtrId = `D${randomBytes(16).toString('hex').toUpperCase()}`.slice(0, 32);
    apiPix.refund = async () => ({ status: 'SUCCEEDED', providerRef: rtrId });
    try {
      await this.refundSucceeded(sale.id, amount, async () => {});
    } finally {
      apiPix.refund = refund;
    }
    sale.refunded += amount;
    return rtrId;
  }
}

interface ProviderEventItem {
  id: number;
  kind: string;
  state: string;
  amount: number | null;
  externalReference: string | null;
}

/** Every provider event in `state` (default every state), newest first, every page. */
export async function providerEvents(gw: Gateway, state?: string): Promise<ProviderEventItem[]> {
  const all: ProviderEventItem[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `limit=100${state ? `&state=${state}` : ''}${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await gw.app.inject({ method: 'GET', url: `/admin/provider-events?${query}`, headers: adminHeaders });
    assert.equal(res.statusCode, 200, res.body);
    const page: { data: ProviderEventItem[]; nextCursor: string | null } = res.json();
    all.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

const hasEvent = async (gw: Gateway, kind: string, reference: string) =>
  (await providerEvents(gw, 'needs_operator')).some((e) => e.kind === kind && e.externalReference === reference);
