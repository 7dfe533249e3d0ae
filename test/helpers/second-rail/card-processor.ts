// A card processor of the test's own, as a new rail's folder would hold one: the whole card
// processor port (CONTRACT §11) over an in-memory record, so a test can register it as a second
// account with one line and watch every call the gateway makes to it.
import type { ProviderFact } from '../../../src/domain/provider-facts.ts';
import type { Account, CardProcessor } from '../../../src/providers/ports.ts';

export interface TestCardProcessor extends CardProcessor {
  /** Every call, in order: `operation saleId-or-refundId`. */
  calls: string[];
}

export function testCardProcessor(id: string): TestCardProcessor {
  const account: Account = { id, connector: 'sandbox' };
  const payments = new Map<string, { saleId: number; amount: number; captured: boolean }>();
  const calls: string[] = [];
  const fact = (identity: string, paymentId: string, f: ProviderFact['fact']): ProviderFact => ({
    provider: 'sandbox',
    identity: `${id}:${identity}`,
    externalReference: paymentId,
    fact: f,
  });
  return {
    capability: 'CARD',
    account,
    calls,
    reference: () => ({ externalId: null, providerData: null }),
    async authorise(sale) {
      calls.push(`authorise ${sale.saleId}`);
      const paymentId = `T${sale.saleId}`;
      payments.set(paymentId, { saleId: sale.saleId, amount: sale.amountCents, captured: false });
      const ref = { ids: [paymentId], saleId: sale.saleId, referenceSuffices: true };
      const answer = fact(`answer ${sale.saleId}`, paymentId, {
        kind: 'CARD_ANSWER',
        sale: ref,
        paymentId,
        result: 'AUTHORISED',
        captureByGateway: true,
        data: {},
      });
      return { facts: [answer], action: null };
    },
    // It never asks for the shopper.
    details: async () => [],
    async capture({ saleId, paymentId }) {
      calls.push(`capture ${saleId}`);
      const payment = payments.get(paymentId);
      if (!payment) return { status: 'REFUSED', detail: 'no such payment' };
      payment.captured = true;
      return { status: 'DONE', detail: `C${saleId}` };
    },
    async refund(input) {
      calls.push(`refund ${input.refundId}`);
      return payments.has(input.externalTransactionId) ? { status: 'SUCCEEDED' } : { status: 'FAILED', reason: 'not a payment of this processor' };
    },
    async giveBack({ paymentId }) {
      calls.push(`giveBack ${paymentId}`);
      return { status: 'DONE', detail: null };
    },
    async sync({ saleId, paymentId }) {
      calls.push(`sync ${saleId}`);
      const payment = payments.get(paymentId);
      if (!payment?.captured) return [];
      const ref = { ids: [paymentId], saleId, referenceSuffices: true };
      return [
        fact(`capture ${saleId}`, paymentId, { kind: 'CAPTURE', sale: ref, paymentId, amount: payment.amount, currency: 'BRL', captured: true }),
      ];
    },
  };
}
