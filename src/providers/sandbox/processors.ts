/**
 * The sandbox connector: the in-process card processor (CONTRACT §6). Card outcomes are decided when
 * it sees the card, and played by the autopilot; PIX, payouts and boletos go through the API Pix and
 * Efí connectors to the embedded PSP (./psp). Boletos numbered here before they were registered at an
 * issuer keep this connector for their cancel.
 */
import { randomBytes } from '../../domain/random.ts';
import type { Account, CardOutcome, CardProcessor } from '../ports.ts';

const externalId = (prefix: string) => `sbx_${prefix}_${randomBytes(12).toString('hex')}`;

// CONTRACT §6 sandbox test cards; any other valid number is approved.
const sandbox_card_outcomes: Record<string, CardOutcome> = {
  '4000000000000002': 'DECLINED',
  '4000000000000119': 'PROCESSING_ERROR',
};

export function sandboxCardOutcome(number: string): CardOutcome {
  return sandbox_card_outcomes[number] ?? 'APPROVED';
}

/** CONTRACT §6: an EMAIL key ending in @reject.test is rejected (cashouts paid by the in-process sandbox, before the Efí connector). */
export function sandboxPayoutOutcome(pixKeyType: string, pixKey: string): 'COMPLETED' | 'REJECTED' {
  return pixKeyType === 'EMAIL' && pixKey.endsWith('@reject.test') ? 'REJECTED' : 'COMPLETED';
}

/** The sandbox card processor's one account. */
export const sandbox_card_account: Account = { id: 'sandbox', connector: 'sandbox' };

export function sandboxCardProcessor(): CardProcessor {
  return {
    capability: 'CARD',
    account: sandbox_card_account,
    // The sandbox decides now, while it sees the number; the autopilot plays the outcome later.
    reference: ({ number }) => ({ externalId: externalId('card'), providerData: { sandboxOutcome: sandboxCardOutcome(number) } }),
    authorise: async () => [],
    // It captures what it approves itself.
    capture: async ({ paymentId }) => ({ status: 'DONE', detail: paymentId }),
    // The sandbox card processor and bank refund at once (CONTRACT §5a), and give back at once what a sale cannot take.
    refund: async () => ({ status: 'SUCCEEDED' }),
    giveBack: async () => ({ status: 'DONE', detail: null }),
    // No record apart from the sale's own: what it decided is played by the autopilot.
    sync: async () => null,
  };
}
