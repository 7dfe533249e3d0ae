import type { App } from '../../src/app.ts';

/** The token of a sale's 3-D Secure page, from the URL its answer gave. */
export function tokenOf(url: string): string {
  const match = /\/checkout\/3ds\/([A-Za-z0-9_-]+)$/.exec(url);
  if (!match) throw new Error(`not a 3-D Secure page: ${url}`);
  return match[1]!;
}

/** The shopper comes back from the issuer with `redirectResult`, posted as an issuer's form is. */
export function shopperReturns(app: App, token: string, redirectResult: string) {
  return app.inject({
    method: 'POST',
    url: `/checkout/3ds/${token}/return`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ redirectResult }).toString(),
  });
}

/**
 * A sandbox sale's shopper presses "Autenticar" at the sandbox issuer: the sale is then the
 * autopilot's to play, as a sale without 3-D Secure is. Fails unless the return sends the shopper back.
 */
export async function authenticateInSandbox(app: App, sale: { payment: { card: { authentication: { url: string } | null } | null } }) {
  const auth = sale.payment.card?.authentication;
  if (!auth) throw new Error('the sale asked for no authentication');
  const res = await shopperReturns(app, tokenOf(auth.url), 'sandbox-authenticated');
  if (res.statusCode !== 303) throw new Error(`the return answered ${res.statusCode}: ${res.body}`);
  return res;
}
