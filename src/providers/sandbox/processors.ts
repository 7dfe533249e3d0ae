/**
 * The sandbox connector: the in-process card processor (CONTRACT §6). Card outcomes are decided when
 * it sees the card, and played by the autopilot; PIX, payouts and boletos go through the API Pix and
 * Efí connectors to the embedded PSP (./psp). Boletos numbered here before they were registered at an
 * issuer keep this connector for their cancel.
 */
import { request } from 'undici';
import type { ProviderFact } from '../../domain/provider-facts.ts';
import { randomBytes } from '../../domain/random.ts';
import { readSettlementReport } from '../adyen/settlement-report.ts';
import type { Account, CardOutcome, CardProcessor } from '../ports.ts';
import type { ProviderMovement, RecordReader, RecordWindow } from '../record.ts';
import type { SandboxPsp } from './embedded-psp.ts';

const externalId = (prefix: string) => `sbx_${prefix}_${randomBytes(12).toString('hex')}`;

// CONTRACT §6 sandbox test cards; any other valid number is approved.
const sandbox_card_outcomes: Record<string, CardOutcome> = {
  '4000000000000002': 'DECLINED',
  '4000000000000119': 'PROCESSING_ERROR',
};

export function sandboxCardOutcome(number: string): CardOutcome {
  return sandbox_card_outcomes[number] ?? 'APPROVED';
}

/** CONTRACT §11.2: a card ending in 0002 always fails the sandbox issuer's authentication, whatever the shopper presses. */
export const sandboxAuthenticates = (number: string) => !number.endsWith('0002');

/** What the sandbox issuer page posts back as `redirectResult`, by the button pressed. */
export const sandbox_redirect_results = { authenticated: 'sandbox-authenticated', refused: 'sandbox-refused' } as const;

/** CONTRACT §6: an EMAIL key ending in @reject.test is rejected (cashouts paid by the in-process sandbox, before the Efí connector). */
export function sandboxPayoutOutcome(pixKeyType: string, pixKey: string): 'COMPLETED' | 'REJECTED' {
  return pixKeyType === 'EMAIL' && pixKey.endsWith('@reject.test') ? 'REJECTED' : 'COMPLETED';
}

/** The sandbox card processor's one account. */
export const sandbox_card_account: Account = { id: 'sandbox', connector: 'sandbox' };

export interface SandboxCardProcessor extends CardProcessor {
  /** Its own record (CONTRACT §15): the embedded PSP's settlement reports of the window's São Paulo days. Throws when the PSP is not running. */
  record: RecordReader;
  /** Books a payment it authorised as settled (the autopilot, as it tells the outcome); nothing without the embedded PSP. */
  settle(payment: { saleId: number; paymentId: string; amountCents: number }): Promise<void>;
}

/** `psp`: the embedded PSP that keeps its settlement record (null when every other rail is real: no record then). */
export function sandboxCardProcessor(psp: SandboxPsp | null = null): SandboxCardProcessor {
  return {
    capability: 'CARD',
    account: sandbox_card_account,
    // The sandbox decides now, while it sees the number; the autopilot plays the outcome later.
    reference: ({ number }) => ({
      externalId: externalId('card'),
      providerData: { sandboxOutcome: sandboxCardOutcome(number), sandboxAuthenticates: sandboxAuthenticates(number) },
    }),
    // With the shopper's browser it always asks for authentication, at its own issuer page (routes.ts).
    authorise: async (sale) => ({
      facts: [],
      action: sale.authentication
        ? { method: 'GET', url: `${sale.authentication.baseUrl}/sandbox/3ds/${sale.authentication.token}`, data: null }
        : null,
    }),
    // Authenticated: the autopilot plays the outcome decided when it saw the card. Otherwise refused now.
    async details({ saleId, redirectResult, providerData }) {
      if (redirectResult === sandbox_redirect_results.authenticated && providerData?.sandboxAuthenticates !== false) return [];
      const fact: ProviderFact = {
        provider: 'sandbox',
        identity: `sandbox-3ds-${saleId}:answer`,
        externalReference: String(saleId),
        fact: {
          kind: 'CARD_ANSWER',
          sale: { ids: [], saleId, referenceSuffices: true },
          paymentId: null,
          result: 'REFUSED',
          captureByGateway: false,
          data: { refusalReason: '3D Not Authenticated' },
        },
      };
      return [fact];
    },
    // It captures what it approves itself.
    capture: async ({ paymentId }) => ({ status: 'DONE', detail: paymentId }),
    // The sandbox card processor and bank refund at once (CONTRACT §5a), booked in its record under the refund's reference; it
    // gives back at once what a sale cannot take.
    async refund(input) {
      const providerRef = `sbx_refund_${input.refundId}`;
      await psp?.settleCard({
        type: 'Refunded',
        pspReference: input.externalTransactionId,
        merchantReference: String(input.transactionId),
        modificationReference: providerRef,
        amountCents: input.amountCents,
      });
      return { status: 'SUCCEEDED', providerRef };
    },
    giveBack: async () => ({ status: 'DONE', detail: null }),
    // No record of a payment apart from the sale's own: what it decided is played by the autopilot.
    sync: async () => null,
    record: (window) => recordOf(psp, window),
    async settle({ saleId, paymentId, amountCents }) {
      await psp?.settleCard({ type: 'Settled', pspReference: paymentId, merchantReference: String(saleId), amountCents });
    },
  };
}

// Longest the embedded PSP may take to start answering, and between two parts of a report.
const report_timeout_ms = 15_000;
const sao_paulo_offset_ms = -3 * 3600_000;

/** The São Paulo dates a window touches (Brazil has kept UTC−3 all year since 2019). */
function daysOf(window: RecordWindow): string[] {
  const dateOf = (t: number) => new Date(t + sao_paulo_offset_ms).toISOString().slice(0, 10);
  const last = dateOf(window.to.getTime() - 1);
  const days: string[] = [];
  for (let t = window.from.getTime(); days.length === 0 || days[days.length - 1]! < last; t += 86_400_000) {
    if (days.length > 62) throw new RangeError('a sandbox card record is read at most two months at a time');
    days.push(dateOf(t));
  }
  return days;
}

async function* recordOf(psp: SandboxPsp | null, window: RecordWindow): AsyncGenerator<ProviderMovement[]> {
  if (!psp) throw new Error('the embedded PSP is not running: the sandbox card processor has no record to read');
  if (window.to <= window.from) return;
  const authorization = `Basic ${Buffer.from(`${psp.clientId}:${psp.clientSecret}`).toString('base64')}`;
  for (const day of daysOf(window)) {
    const url = `${psp.reportsUrl}/settlement_detail_report_${day}.csv`;
    const res = await request(url, {
      headers: { authorization, accept: 'text/csv' },
      headersTimeout: report_timeout_ms,
      bodyTimeout: report_timeout_ms,
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new Error(`the embedded PSP answered HTTP ${res.statusCode} to the settlement report of ${day}`);
    }
    // A day's report holds that whole São Paulo day: only the window's part of it is the window's.
    for await (const page of readSettlementReport(res.body).pages) {
      const inside = page.filter((m) => m.at >= window.from && m.at < window.to);
      if (inside.length > 0) yield inside;
    }
  }
}
