// CARD_PROVIDER=adyen harness: a gateway talking to a test double of Adyen's Checkout API through a
// proxy that checks every request and answer against the official Checkout file, and notifications
// signed as Adyen signs them, each body checked against the official webhooks file.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { type AdyenDouble, type NotificationItemInput, startAdyenDouble } from './adyen-double.ts';
import { checkAdyenNotification, startAdyenValidatingProxy, type ValidatingProxy } from './adyen-spec.ts';
import { cardExample } from './fixtures.ts';
import { adminHeaders, type Gateway, type GatewayOptions, type SellerKeys, startGateway } from './gateway.ts';

export type Json = Record<string, unknown>;

export interface Rail {
  gw: Gateway;
  adyen: AdyenDouble;
  proxy: ValidatingProxy;
  seller: SellerKeys;
  base: string;
}

/** `clock`: the gateway's (a test clock, to move time for the expiry job). */
export async function startRail(env: Record<string, string> = {}, options: Pick<GatewayOptions, 'clock'> = {}): Promise<Rail> {
  const adyen = await startAdyenDouble();
  const proxy = await startAdyenValidatingProxy({ target: adyen.url });
  const gw = await startGateway({
    ...options,
    env: {
      CARD_PROVIDER: 'adyen',
      ADYEN_CHECKOUT_URL: proxy.url,
      ADYEN_API_KEY: adyen.apiKey,
      ADYEN_MERCHANT_ACCOUNT: adyen.merchantAccount,
      ADYEN_HMAC_KEY: adyen.hmacKeyHex,
      ADYEN_NOTIFICATION_USERNAME: adyen.username,
      ADYEN_NOTIFICATION_PASSWORD: adyen.password,
      ...env,
    },
  });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
  return { gw, adyen, proxy, seller: await gw.createSeller(), base };
}

export async function stopRail(r: Rail | undefined): Promise<void> {
  await r?.gw.close();
  await r?.proxy.close();
  await r?.adyen.close();
}

export async function sale(r: Rail, body: Json): Promise<number> {
  const res = await r.gw.app.inject({ method: 'POST', url: '/api/sales', headers: r.seller.headers, payload: body });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.json().sale.status, 'PENDENTE', 'CONTRACT §4: the answer says PENDENTE; the sale moves on after it');
  return res.json().sale.id;
}

export async function read(r: Rail, id: number): Promise<Json> {
  const res = await r.gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: r.seller.headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

export async function balance(r: Rail): Promise<{ available: number; blocked: number }> {
  return (await r.gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: r.seller.headers })).json();
}

export async function ledgerOk(r: Rail): Promise<void> {
  const verify = (await r.gw.app.inject({ method: 'GET', url: '/admin/ledger/verify', headers: adminHeaders })).json();
  assert.equal(verify.ok, true, JSON.stringify(verify));
}

/** Sends a signed notification whose body the official webhooks file accepts; what the gateway answered. */
export async function notify(r: Rail, item: NotificationItemInput, options: { tamperHmac?: boolean; username?: string; password?: string } = {}) {
  assert.deepEqual(checkAdyenNotification(r.adyen.notificationBody(item, options)), [], `${item.eventCode} fixture against adyen-webhooks-v1.json`);
  return r.adyen.notify(`${r.base}/providers/adyen/notifications`, item, options);
}

export async function accepted(r: Rail, item: NotificationItemInput): Promise<void> {
  const answer = await notify(r, item);
  assert.deepEqual(answer, { status: 200, body: '[accepted]' });
}

export const pspOf = async (r: Rail, id: number) => (await read(r, id)).externalTransactionId as string;
export const authorisation = (id: number, psp: string, amount: number, success = true): NotificationItemInput => ({
  eventCode: 'AUTHORISATION',
  success,
  pspReference: psp,
  merchantReference: String(id),
  amount: { value: amount },
});

/** A credit sale made PAGO by Adyen's AUTHORISATION (automatic capture). */
export async function paidSale(r: Rail, amount = 16000): Promise<{ id: number; psp: string }> {
  const id = await sale(
    r,
    cardExample('4111111111111111', '123', { amount, items: [{ title: 'Camiseta', unitPrice: amount - 1000, quantity: 1, tangible: true }] }),
  );
  const psp = await pspOf(r, id);
  await accepted(r, authorisation(id, psp, amount));
  assert.equal((await read(r, id)).status, 'PAGO');
  return { id, psp };
}

export async function refund(r: Rail, id: number, amount?: number): Promise<Json> {
  const res = await r.gw.app.inject({
    method: 'POST',
    url: `/api/transactions/${id}/refund`,
    headers: r.seller.headers,
    payload: amount === undefined ? {} : { amount },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** The pspReference Adyen's double gave a refund request of ours. */
export function refundPsp(r: Rail, refundId: number): string {
  const call = r.adyen.requests.find(
    (c) => c.path.endsWith('/refunds') && (c.body as Json).reference === `refund-${refundId}` && c.answer?.status === 201,
  );
  assert.ok(call, `refund-${refundId} reached Adyen`);
  return (call.answer!.body as Json).pspReference as string;
}
