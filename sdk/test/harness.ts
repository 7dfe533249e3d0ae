// The SDK suites' bench: a real gateway (test/helpers/gateway.ts) listening on a loopback port, the
// SDK pointed at it over real HTTP, and the background work the test gateway does not run by itself
// (notification delivery, the PSP callback registration) run by hand.
import type { AddressInfo } from 'node:net';
import { createDeliveryJob } from '../../src/notifications/delivery.ts';
import { boletoExample, cardExample, debitExample, pixExample } from '../../test/helpers/fixtures.ts';
import { ADMIN_TOKEN, type Gateway, type GatewayOptions, railJob, type SellerKeys, startGateway } from '../../test/helpers/gateway.ts';
import { type CreateSaleBody, OperatorClient, type RetryPolicy, SellerClient } from '../src/index.ts';

export type Json = Record<string, unknown>;

/** Fast retries for tests: the same policy as the default, with short waits. */
export const FAST: RetryPolicy = { retryBaseDelayMs: 5, retryMaxDelayMs: 20, timeoutMs: 10_000 };

export interface SdkBench {
  gw: Gateway;
  baseUrl: string;
  operator: OperatorClient;
  /** A new seller and a SellerClient on its keys (through `baseUrl`, or another URL such as a proxy's). */
  seller(options?: { baseUrl?: string; policy?: RetryPolicy }): Promise<{ keys: SellerKeys; client: SellerClient }>;
  /** Runs the delivery job until a run claims nothing (bounded: 50 runs). */
  deliver(): Promise<void>;
  close(): Promise<void>;
}

export async function startBench(options: GatewayOptions = {}): Promise<SdkBench> {
  const gw = await startGateway(options);
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
  // The embedded PSP calls the gateway back where it listens (as `npm start` sets up).
  await gw.ctx.providers.listeningAt(baseUrl);
  const reconcile = railJob(gw, 'pix-reconcile');
  await reconcile.run(gw.ctx);
  const delivery = createDeliveryJob({ retryDelaysMs: [60_000], random: () => 0.5 });
  return {
    gw,
    baseUrl,
    operator: new OperatorClient({ baseUrl, adminToken: ADMIN_TOKEN, ...FAST }),
    async seller(o = {}) {
      const keys = await gw.createSeller();
      return {
        keys,
        client: new SellerClient({ baseUrl: o.baseUrl ?? baseUrl, publicKey: keys.publicKey, privateKey: keys.privateKey, ...FAST, ...o.policy }),
      };
    },
    async deliver() {
      for (let i = 0; i < 50; i++) {
        const claimed = await delivery.run(gw.ctx);
        await delivery.settled();
        if (claimed === 0) return;
      }
      throw new Error('the delivery job never ran dry');
    },
    async close() {
      await delivery.close();
      await reconcile.close?.();
      await gw.close();
    },
  };
}

// The gateway suites' sale bodies (test/helpers/fixtures.ts), typed as the SDK takes them.

/** CONTRACT §4's PIX sale, without a postback or an expiry unless given. */
export const pixSale = (amount = 15000, extra: Json = {}) => pixExample({ amount, postbackUrl: null, pix: null }, extra) as CreateSaleBody;

/** CONTRACT §4's credit-card sale of a physical product (16000 = 15000 + shipping 1000, 3 installments). */
export const cardSale = (number = '4111111111111111') => cardExample(number) as CreateSaleBody;

/** A debit sale without its `authentication` (a 5555… Mastercard, an e-book of 4990 cents): the test adds it. */
export const debitSale = (): CreateSaleBody => {
  const { authentication: _, ...body } = debitExample();
  return body as CreateSaleBody;
};

/** A boleto sale (a CNPJ with punctuation, two lines, 25050 cents). */
export const boletoSale = () => boletoExample() as CreateSaleBody;
