import type { Config } from '../config.ts';
import { buildBoleto, freeFieldForSale } from '../domain/boleto.ts';
import { randomBytes } from '../domain/random.ts';
import type { CardOutcome, PayoutOutcome, Providers } from './ports.ts';

/** The providers that stay in-process; PIX goes through the API Pix connector (src/pix). */
export type SandboxProviders = Omit<Providers, 'pix'>;

const externalId = (prefix: string) => `sbx_${prefix}_${randomBytes(12).toString('hex')}`;

// CONTRACT §6 sandbox test cards; any other valid number is approved.
const sandbox_card_outcomes: Record<string, CardOutcome> = {
  '4000000000000002': 'DECLINED',
  '4000000000000119': 'PROCESSING_ERROR',
};

export function sandboxCardOutcome(number: string): CardOutcome {
  return sandbox_card_outcomes[number] ?? 'APPROVED';
}

/** CONTRACT §6: an EMAIL key ending in @reject.test is rejected by the sandbox bank. */
export function sandboxPayoutOutcome(pixKeyType: string, pixKey: string): PayoutOutcome {
  return pixKeyType === 'EMAIL' && pixKey.endsWith('@reject.test') ? 'REJECTED' : 'COMPLETED';
}

export function sandboxProviders(config: Pick<Config, 'boletoBankCode'>): SandboxProviders {
  return {
    boleto: {
      issue({ saleId, amountCents, dueDate }) {
        const built = buildBoleto({ bankCode: config.boletoBankCode, amountCents, dueDate, freeField: freeFieldForSale(saleId) });
        // Inputs were validated before (amount bound, real date): a failure here is a bug.
        if (!built.ok) throw new Error(`boleto: ${built.refusal.message}`);
        return { externalId: externalId('bol'), ...built.value };
      },
    },
    card: {
      authorize({ number }) {
        // The sandbox decides now, while it sees the number; the autopilot plays the outcome later.
        return { externalId: externalId('card'), providerData: { sandboxOutcome: sandboxCardOutcome(number) } };
      },
      submit: null,
    },
    payout: {
      send({ pixKey, pixKeyType }) {
        return { externalId: externalId('pay'), providerData: { sandboxOutcome: sandboxPayoutOutcome(pixKeyType, pixKey) } };
      },
    },
    // The sandbox card processor and bank refund at once (CONTRACT §5a).
    refunds: { refund: async () => ({ status: 'SUCCEEDED' }) },
  };
}
