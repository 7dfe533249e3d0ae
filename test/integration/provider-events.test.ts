// Provider events (CONTRACT §14) through HTTP: every fact a provider sends is stored once and ends
// applied, held until its sale can move, or left for the operator; the cases the connector issue
// found from outside (a chargeback before its authorisation, disputes and refunds the state machine
// cannot take, an authorisation of another amount, keys without the installation id, one key making
// many provider calls) each end as the contract says.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { idempotencyExpiryJob } from '../../src/http/idempotency.ts';
import { applyProviderFact } from '../../src/providers/events/apply-fact.ts';
import { held_facts_channel } from '../../src/transactions/transitions.ts';
import type { NotificationItemInput } from '../helpers/adyen-double.ts';
import {
  accepted,
  authorisation,
  balance,
  type Json,
  ledgerOk,
  paidSale,
  pspOf,
  type Rail,
  read,
  refund,
  refundPsp,
  sale,
  startRail,
  stopRail,
} from '../helpers/adyen-rail.ts';
import { cardExample, pixExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway } from '../helpers/gateway.ts';

interface Event {
  id: number;
  provider: string;
  kind: string;
  state: string;
  reason: string | null;
  transactionId: number | null;
  refundId: number | null;
  amount: number | null;
  externalReference: string;
  followup: { call: string; status: string; detail: string | null } | null;
  resolvedAt: string | null;
  note: string | null;
}

async function events(gw: Gateway, query = ''): Promise<Event[]> {
  const res = await gw.app.inject({ method: 'GET', url: `/admin/provider-events?limit=100${query}`, headers: adminHeaders });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

const card300 = () =>
  cardExample('4111111111111111', '123', { amount: 30000, items: [{ title: 'Tênis', unitPrice: 29000, quantity: 1, tangible: true }] });
const dispute = (eventCode: string, s: { id: number; psp: string }, extra: Partial<NotificationItemInput> = {}): NotificationItemInput => ({
  eventCode,
  success: true,
  pspReference: s.psp,
  merchantReference: String(s.id),
  amount: { value: 30000 },
  ...extra,
});

describe('provider events: Adyen (CARD_PROVIDER=adyen)', () => {
  let r: Rail;
  before(async () => {
    r = await startRail();
  });
  after(async () => {
    if (r) assert.deepEqual(r.proxy.violations, [], 'every request and answer conforms to adyen-checkout-v71.json');
    await stopRail(r);
  });
  const ofSale = async (id: number) => (await events(r.gw)).filter((e) => e.transactionId === id);

  test('a chargeback before its AUTHORISATION is held, then applied by it: the sale ends CHARGEBACK with the fine', async () => {
    const id = await sale(r, card300());
    const s = { id, psp: await pspOf(r, id) };
    assert.equal((await read(r, id)).status, 'EM_PROCESSAMENTO');
    await accepted(r, dispute('NOTIFICATION_OF_CHARGEBACK', s));
    const [waiting] = await ofSale(id);
    assert.deepEqual([waiting?.kind, waiting?.state], ['CHARGEBACK', 'held']);
    assert.match(waiting!.reason!, /before the payment was recorded/);
    assert.equal((await read(r, id)).status, 'EM_PROCESSAMENTO', 'nothing moved');
    const before = await balance(r);

    await accepted(r, authorisation(id, s.psp, 30000));
    const after = await read(r, id);
    assert.equal(after.status, 'CHARGEBACK');
    // CONTRACT §5: 30000 at 49 + 499 bp: fee 1546, net 28454 credited; the chargeback fine 1500 taken.
    assert.equal(after.netAmount, 28454);
    assert.equal((await balance(r)).available, before.available + 28454 - 1500);
    assert.deepEqual(
      (await ofSale(id)).map((e) => [e.kind, e.state]),
      [
        ['AUTHORISATION', 'applied'],
        ['CHARGEBACK', 'applied'],
        // Adyen's synchronous answer (Authorised: EM_PROCESSAMENTO) is a fact like its notifications.
        ['CARD_ANSWER', 'applied'],
      ],
    );
    await ledgerOk(r);
  });

  test('a chargeback lost before its AUTHORISATION: the money goes back to the shopper, not to the seller', async () => {
    const id = await sale(r, card300());
    const s = { id, psp: await pspOf(r, id) };
    const before = await balance(r);
    await accepted(r, dispute('CHARGEBACK', s, { additionalData: { disputeStatus: 'Lost' } }));
    await accepted(r, authorisation(id, s.psp, 30000));
    assert.equal((await read(r, id)).status, 'ESTORNADO');
    // Net credited, then the fine and the whole amount back to the payer: the seller keeps nothing of it.
    assert.equal((await balance(r)).available, before.available + 28454 - 1500 - 30000);
    await ledgerOk(r);
  });

  test('disputes and refunds the state machine cannot take are left for the operator, shown with their money', async () => {
    // A chargeback on a sale the seller already refunded.
    const refunded = await paidSale(r, 30000);
    const full = await refund(r, refunded.id);
    const refundItem = {
      eventCode: 'REFUND',
      success: true,
      pspReference: refundPsp(r, full.id as number),
      originalReference: refunded.psp,
      merchantReference: `refund-${full.id}`,
      amount: { value: 30000 },
    };
    await accepted(r, refundItem);
    assert.equal((await read(r, refunded.id)).status, 'ESTORNADO');
    await accepted(r, dispute('CHARGEBACK', refunded));
    // A dispute lost, then another step of it (reversed) after its money went back.
    const lost = await paidSale(r, 30000);
    await accepted(r, dispute('CHARGEBACK', lost, { additionalData: { disputeStatus: 'Lost' } }));
    assert.equal((await read(r, lost.id)).status, 'ESTORNADO');
    await accepted(r, dispute('CHARGEBACK_REVERSED', lost));
    // A REFUND the gateway never asked for.
    await accepted(r, { ...refundItem, pspReference: 'UNASKED000000001', merchantReference: 'portal-refund-7', amount: { value: 4200 } });

    const open = await events(r.gw, '&state=needs_operator');
    const shown = (ref: string, kind: string) => open.find((e) => e.externalReference === ref && e.kind === kind);
    assert.match(shown(refunded.psp, 'CHARGEBACK')!.reason!, /chargeback opened for a ESTORNADO sale: its money was already returned/);
    assert.match(shown(lost.psp, 'CHARGEBACK')!.reason!, /chargeback reversed for a ESTORNADO sale/);
    const unasked = shown('UNASKED000000001', 'REFUND')!;
    assert.deepEqual([unasked.amount, unasked.reason], [4200, 'a refund of 4200 cents the gateway never asked for']);
    assert.equal((await read(r, lost.id)).status, 'ESTORNADO', 'nothing moved on its own');
    await ledgerOk(r);

    // Resolved with a note, once; an applied or held event cannot be resolved.
    const resolve = (id: number, note = 'devolvido pelo portal') =>
      r.gw.app.inject({ method: 'POST', url: `/admin/provider-events/${id}/resolve`, headers: adminHeaders, payload: { note } });
    const done = await resolve(unasked.id);
    assert.equal(done.statusCode, 200, done.body);
    assert.deepEqual([done.json().note, typeof done.json().resolvedAt], ['devolvido pelo portal', 'string']);
    assert.equal((await resolve(unasked.id)).statusCode, 409);
    const appliedOne = (await events(r.gw, '&state=applied'))[0]!;
    assert.equal((await resolve(appliedOne.id)).json().errorType, 'INVALID_TRANSITION');
    assert.equal((await resolve(99_999_999)).statusCode, 404);
    assert.equal((await resolve(unasked.id, '')).statusCode, 400);
  });

  test('an AUTHORISATION of another amount: the payment is reversed, the sale ends FALHA, the operator sees it', async () => {
    const id = await sale(r, card300());
    const psp = await pspOf(r, id);
    const before = await balance(r);
    await accepted(r, authorisation(id, psp, 29999));
    assert.equal((await read(r, id)).status, 'FALHA');
    const reversal = r.adyen.requests.find((c) => c.path === `/payments/${psp}/reversals`);
    assert.ok(reversal, 'the money went back by a reversal');
    assert.equal(reversal.headers['idempotency-key'], `${r.gw.ctx.installationId}-reversal-${psp}`);
    const [event] = (await ofSale(id)).filter((e) => e.kind === 'AUTHORISATION');
    assert.equal(event?.state, 'needs_operator');
    assert.match(event!.reason!, /authorised 29999 BRL for a sale of 30000 BRL: returned/);
    assert.deepEqual(event!.followup, { call: 'RETURN', status: 'DONE', detail: null });
    assert.deepEqual(await balance(r), before, 'no money moved');
    await ledgerOk(r);
  });

  test('every key sent to Adyen carries the installation id; a repeated notification is one event', async () => {
    const { id, psp } = await paidSale(r, 30000);
    const part = await refund(r, id, 1000);
    const call = r.adyen.requests.find((c) => c.path === `/payments/${psp}/refunds`);
    assert.equal(call?.headers['idempotency-key'], `${r.gw.ctx.installationId}-refund-${part.id}`);
    const payment = r.adyen.requests.find((c) => c.path === '/payments' && (c.body as Json).reference === String(id));
    assert.equal(payment?.headers['idempotency-key'], `${r.gw.ctx.installationId}-payment-${id}`);
    await accepted(r, authorisation(id, psp, 30000));
    assert.equal((await ofSale(id)).filter((e) => e.kind === 'AUTHORISATION').length, 1, 'deduplicated by pspReference + eventCode + success');
  });

  test('GET /metrics exports the events by state', async () => {
    const metrics = await r.gw.app.inject({ method: 'GET', url: '/metrics', headers: adminHeaders });
    const value = (state: string) => Number(new RegExp(`gateway_provider_events\\{state="${state}"\\} (\\d+)`).exec(metrics.body)?.[1]);
    const all = await events(r.gw);
    assert.equal(value('applied'), all.filter((e) => e.state === 'applied').length);
    assert.equal(value('needs_operator'), all.filter((e) => e.state === 'needs_operator' && e.resolvedAt === null).length);
    assert.equal(value('held'), 0);
  });
});

describe('provider events: the one apply step on every rail (PIX, sandbox)', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  before(async () => {
    gw = await startGateway();
    seller = await gw.createSeller();
  });
  after(async () => {
    await gw?.close();
  });

  test('ten concurrent PIX sales with one Idempotency-Key make one charge at the PSP and one sale', async () => {
    const cobs = async () => (await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sandbox_psp.cobs')).rows[0]!.n;
    const before = await cobs();
    const body = pixExample({ amount: 4321 });
    const headers = { ...seller.headers, 'idempotency-key': 'one-charge' };
    const answers = await Promise.all(Array.from({ length: 10 }, () => gw.app.inject({ method: 'POST', url: '/api/sales', headers, payload: body })));
    const fresh = answers.filter((a) => a.statusCode === 201 && a.headers['idempotent-replayed'] === undefined);
    assert.equal(fresh.length, 1, answers.map((a) => a.statusCode).join(' '));
    for (const a of answers) assert.ok(a.statusCode === 201 || a.json().errorType === 'IDEMPOTENCY_KEY_IN_USE', a.body);
    assert.equal((await cobs()) - before, 1, 'one charge at the PSP');
    const txid = (await readSale(fresh[0]!.json().sale.id)).externalTransactionId as string;
    assert.ok(txid.startsWith(gw.ctx.installationId), `the charge's txid carries the installation id: ${txid}`);
  });

  test('a key claimed by a holder that died is free within seconds', async () => {
    const key = 'crashed-holder';
    // The claim a process leaves behind when it dies between claiming and answering.
    await gw.ctx.db.query(
      `INSERT INTO idempotency_claims (seller_id, endpoint, key, claimed_by, claimed_until)
       VALUES ($1, 'POST /api/sales', $2, 'dead-holder', clock_timestamp() + interval '2 seconds')`,
      [seller.id, key],
    );
    const post = () =>
      gw.app.inject({
        method: 'POST',
        url: '/api/sales',
        headers: { ...seller.headers, 'idempotency-key': key },
        payload: pixExample({ amount: 1234 }),
      });
    assert.equal((await post()).statusCode, 409, 'held while its lease lives');
    const deadline = Date.now() + 6_000;
    let retry = await post();
    while (retry.statusCode === 409 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      retry = await post();
    }
    assert.equal(retry.statusCode, 201, retry.body);
    // A lapsed claim is kept 30 s (its charge's reference serves a retry of the same body), then the
    // expiry job drops it.
    await gw.ctx.db.query(
      `INSERT INTO idempotency_claims (seller_id, endpoint, key, claimed_by, claimed_until)
       VALUES ($1, 'POST /api/sales', 'recent', 'dead-holder', clock_timestamp() - interval '1 second'),
              ($1, 'POST /api/sales', 'forgotten', 'dead-holder', clock_timestamp() - interval '31 seconds')`,
      [seller.id],
    );
    await idempotencyExpiryJob.run(gw.ctx);
    const left = await gw.ctx.db.query('SELECT key FROM idempotency_claims WHERE seller_id = $1', [seller.id]);
    assert.deepEqual(left.rows, [{ key: 'recent' }]);
  });

  test('a fact held for a sale is tried again when the sale moves: the move wakes the job', async () => {
    // A chargeback reversal that came before its chargeback (a sandbox card sale, paid; facts applied as a connector would hand them).
    const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: cardExample() });
    const id = res.json().sale.id as number;
    for (const event of ['SENT_TO_PROCESSOR', 'APPROVED'])
      await gw.app.inject({ method: 'POST', url: `/admin/transactions/${id}/events`, headers: adminHeaders, payload: { event } });
    const fact = { kind: 'CHARGEBACK' as const, sale: { ids: [], saleId: id, referenceSuffices: true }, step: 'reversed' as const };
    const held = await applyProviderFact(gw.ctx, { provider: 'sandbox', identity: `reversed-${id}`, externalReference: `sbx-${id}`, fact });
    assert.equal(held.state, 'held');
    const woken: string[] = [];
    const unlisten = await gw.ctx.db.listen(held_facts_channel, { onPayload: (p) => woken.push(p) });
    try {
      const opened = await gw.app.inject({
        method: 'POST',
        url: `/admin/transactions/${id}/events`,
        headers: adminHeaders,
        payload: { event: 'CHARGEBACK_OPENED' },
      });
      assert.equal(opened.statusCode, 200, opened.body);
      for (let i = 0; i < 50 && woken.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(woken, [String(id)], 'the move of a sale with held facts notifies the job');
    } finally {
      await unlisten();
    }
    await railJob(gw, 'provider-events-held').run(gw.ctx);
    assert.equal((await readSale(id)).status, 'PAGO', 'the reversal applied once its chargeback was there');
    const [event] = (await events(gw, '&provider=sandbox')).filter((e) => e.transactionId === id);
    assert.equal(event?.state, 'applied');
  });

  test('facts held for good do not starve a sale that moves: the job takes the moved sale first', async () => {
    const cardSale = async () => {
      const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: cardExample() });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().sale.id as number;
    };
    const reversal = (id: number) =>
      applyProviderFact(gw.ctx, {
        provider: 'sandbox',
        identity: `reversed-${id}`,
        externalReference: `sbx-${id}`,
        fact: { kind: 'CHARGEBACK', sale: { ids: [], saleId: id, referenceSuffices: true }, step: 'reversed' },
      });
    // More sales with facts that wait for good than the job takes in one round (50), held before ours.
    for (let i = 0; i < 55; i++) assert.equal((await reversal(await cardSale())).state, 'held');
    const id = await cardSale();
    for (const event of ['SENT_TO_PROCESSOR', 'APPROVED'])
      await gw.app.inject({ method: 'POST', url: `/admin/transactions/${id}/events`, headers: adminHeaders, payload: { event } });
    assert.equal((await reversal(id)).state, 'held');
    const opened = await gw.app.inject({
      method: 'POST',
      url: `/admin/transactions/${id}/events`,
      headers: adminHeaders,
      payload: { event: 'CHARGEBACK_OPENED' },
    });
    assert.equal(opened.statusCode, 200, opened.body);
    await railJob(gw, 'provider-events-held').run(gw.ctx);
    assert.equal((await readSale(id)).status, 'PAGO', 'the reversal applied in the first round after the move');
  });

  async function readSale(id: number): Promise<Json> {
    return (await gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers })).json();
  }
});
