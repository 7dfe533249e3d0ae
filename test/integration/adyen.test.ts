// CARD_PROVIDER=adyen end to end: the gateway talks to a test double of Adyen's Checkout API through a
// proxy that checks every request and answer against the official Checkout file, and receives
// notifications signed as Adyen signs them, each body checked against the official webhooks file.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { NotificationItemInput } from '../helpers/adyen-double.ts';
import {
  accepted,
  authorisation,
  balance,
  type Json,
  ledgerOk,
  notify,
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
import { cardExample, debitExample } from '../helpers/fixtures.ts';

describe('CARD_PROVIDER=adyen, automatic capture', () => {
  let r: Rail;
  before(async () => {
    r = await startRail();
  });
  after(async () => {
    // The dropped connections of the outage test are the only findings allowed: no request or answer broke the file.
    if (r)
      assert.deepEqual(
        r.proxy.violations.filter((v) => !v.endsWith('the target did not answer: socket hang up')),
        [],
        'every request and answer conforms to adyen-checkout-v71.json',
      );
    await stopRail(r);
  });

  test('a credit sale in 3 instalments is authorised, then PAGO on the signed AUTHORISATION; a resent one changes nothing', async () => {
    const id = await sale(r, cardExample());
    const call = r.adyen.requests.find((c) => c.path === '/payments' && (c.body as Json).reference === String(id));
    assert.ok(call, 'POST /payments reached Adyen');
    const body = call.body as Json;
    assert.deepEqual(body.amount, { currency: 'BRL', value: 16000 });
    assert.deepEqual(body.installments, { value: 3 });
    assert.equal((body.paymentMethod as Json).fundingSource, 'credit');
    // CONTRACT §11.2: every key carries the installation's id, so no other installation on this account sends it.
    assert.equal(call.headers['idempotency-key'], `${r.gw.ctx.installationId}-payment-${id}`);
    assert.match(r.gw.ctx.installationId, /^[a-z0-9]{12}$/);
    assert.equal(body.captureDelayHours, 0, 'automatic capture: captured at once');
    const psp = (call.answer!.body as Json).pspReference as string;

    const processing = await read(r, id);
    assert.equal(processing.status, 'EM_PROCESSAMENTO');
    assert.equal(processing.externalTransactionId, psp);
    // Nothing of the card beyond brand and last four: not the number, not the CVV.
    const row = await r.gw.ctx.db.query<{ t: string }>('SELECT row_to_json(t)::text AS t FROM transactions t WHERE id = $1', [id]);
    assert.ok(!row.rows[0]!.t.includes('4111111111111111') && !row.rows[0]!.t.includes('"123"'), row.rows[0]!.t);

    await accepted(r, authorisation(id, psp, 16000));
    const paid = await read(r, id);
    assert.equal(paid.status, 'PAGO');
    const before = await balance(r);
    assert.equal(before.available, paid.netAmount);
    await accepted(r, authorisation(id, psp, 16000));
    assert.deepEqual(await balance(r), before, 'a repeated notification changes nothing');
    const kept = await r.gw.ctx.db.query('SELECT outcome FROM adyen_notifications WHERE psp_reference = $1', [psp]);
    assert.equal(kept.rowCount, 1);
    await ledgerOk(r);
  });

  test('a refused card ends RECUSADO at once; a debit card is sent as debit', async () => {
    const refused = await sale(r, cardExample('4000000000000002'));
    assert.equal((await read(r, refused)).status, 'RECUSADO');
    const debit = await sale(r, debitExample());
    const call = r.adyen.requests.find((c) => c.path === '/payments' && (c.body as Json).reference === String(debit));
    assert.equal(((call!.body as Json).paymentMethod as Json).fundingSource, 'debit');
    assert.equal((call!.body as Json).installments, undefined);
    assert.equal((await read(r, debit)).status, 'EM_PROCESSAMENTO');
  });

  test('an Error result and an unreachable Adyen both end FALHA; a late AUTHORISATION still pays', async () => {
    const error = await sale(r, cardExample('4000000000000119'));
    assert.equal((await read(r, error)).status, 'FALHA');
    r.adyen.failNext('payments', 'drop', 2);
    const lost = await sale(r, cardExample());
    const failed = await read(r, lost);
    assert.equal(failed.status, 'FALHA');
    assert.equal(failed.externalTransactionId, String(lost), 'known by our reference until Adyen names it');
    await accepted(r, authorisation(lost, 'LATEPSP000000001', 16000));
    const paid = await read(r, lost);
    assert.equal(paid.status, 'PAGO');
    assert.equal(paid.externalTransactionId, 'LATEPSP000000001');
    await ledgerOk(r);
  });

  test('a partial then a full refund: PENDING until REFUND, the sale ESTORNADO at the end; REFUND_FAILED gives the cents back', async () => {
    const { id, psp } = await paidSale(r);
    const start = await balance(r);
    const partial = await refund(r, id, 5000);
    assert.equal(partial.status, 'PENDING');
    await accepted(r, {
      eventCode: 'REFUND',
      success: true,
      pspReference: refundPsp(r, partial.id as number),
      originalReference: psp,
      merchantReference: `refund-${partial.id}`,
      amount: { value: 5000 },
    });
    let read1 = await read(r, id);
    assert.equal(read1.status, 'PAGO');
    assert.equal(read1.refundedAmount, 5000);
    assert.equal((await balance(r)).available, start.available - 5000);

    const rest = await refund(r, id);
    assert.equal(rest.amount, 11000);
    await accepted(r, {
      eventCode: 'REFUND',
      success: true,
      pspReference: refundPsp(r, rest.id as number),
      originalReference: psp,
      merchantReference: `refund-${rest.id}`,
      amount: { value: 11000 },
    });
    read1 = await read(r, id);
    assert.equal(read1.status, 'ESTORNADO');
    assert.equal(read1.refundedAmount, 16000);
    await ledgerOk(r);
  });

  test('REFUND_FAILED fails the refund and gives its cents back', async () => {
    const { id, psp } = await paidSale(r);
    const start = await balance(r);
    const failing = await refund(r, id, 1000);
    await accepted(r, {
      eventCode: 'REFUND_FAILED',
      success: true,
      pspReference: refundPsp(r, failing.id as number),
      originalReference: psp,
      merchantReference: `refund-${failing.id}`,
      amount: { value: 1000 },
    });
    const refunds = (await r.gw.app.inject({ method: 'GET', url: `/api/transactions/${id}/refunds`, headers: r.seller.headers })).json();
    assert.equal(refunds.data.find((x: Json) => x.id === failing.id).status, 'FAILED');
    assert.equal((await balance(r)).available, start.available, 'a failed refund gives its cents back');

    await ledgerOk(r);
  });

  test('chargebacks: opened with the fine, reversed back to PAGO; lost (SECOND_CHARGEBACK) to ESTORNADO', async () => {
    const won = await paidSale(r);
    const before = await balance(r);
    const dispute = (eventCode: string, s: { id: number; psp: string }, extra: Partial<NotificationItemInput> = {}): NotificationItemInput => ({
      eventCode,
      success: true,
      pspReference: s.psp,
      merchantReference: String(s.id),
      amount: { value: 16000 },
      ...extra,
    });
    await accepted(r, dispute('NOTIFICATION_OF_CHARGEBACK', won, { additionalData: { chargebackReasonCode: '10.4' } }));
    assert.equal((await read(r, won.id)).status, 'CHARGEBACK');
    assert.equal((await balance(r)).available, before.available - 1500, 'CONTRACT §5: the chargeback fine');
    await accepted(r, dispute('CHARGEBACK', won));
    assert.equal((await read(r, won.id)).status, 'CHARGEBACK', 'the chargeback itself after its notice: the same state');
    await accepted(r, dispute('CHARGEBACK_REVERSED', won));
    assert.equal((await read(r, won.id)).status, 'PAGO');

    const lost = await paidSale(r);
    const mid = await balance(r);
    await accepted(r, dispute('CHARGEBACK', lost));
    await accepted(r, dispute('SECOND_CHARGEBACK', lost));
    assert.equal((await read(r, lost.id)).status, 'ESTORNADO');
    // CONTRACT §5: the fine, then the whole amount back to the payer (no reserve here); the fee is not returned.
    assert.equal((await balance(r)).available, mid.available - 1500 - 16000);
    await ledgerOk(r);
  });

  test('a dispute item with a pspReference of its own is matched by the payment reference; a chargeback waits for a pending refund (held, then applied)', async () => {
    const s1 = await paidSale(r);
    await accepted(r, {
      eventCode: 'NOTIFICATION_OF_CHARGEBACK',
      success: true,
      pspReference: 'DISPUTE000000001',
      merchantReference: String(s1.id),
      amount: { value: 16000 },
    });
    assert.equal((await read(r, s1.id)).status, 'CHARGEBACK');

    const s2 = await paidSale(r);
    const pending = await refund(r, s2.id, 1000);
    const chargeback: NotificationItemInput = {
      eventCode: 'CHARGEBACK',
      success: true,
      pspReference: s2.psp,
      merchantReference: String(s2.id),
      amount: { value: 16000 },
    };
    // CONTRACT §14: stored and acknowledged; holding it is the gateway's job, not a resend's.
    await accepted(r, chargeback);
    assert.equal((await read(r, s2.id)).status, 'PAGO');
    const held = await r.gw.ctx.db.query<{ state: string }>(
      "SELECT state FROM provider_events WHERE provider = 'adyen' AND kind = 'CHARGEBACK' AND external_reference = $1",
      [s2.psp],
    );
    assert.deepEqual(held.rows, [{ state: 'held' }], 'held until the refund settles');
    const refundItem = {
      eventCode: 'REFUND',
      success: true,
      pspReference: refundPsp(r, pending.id as number),
      originalReference: s2.psp,
      merchantReference: `refund-${pending.id}`,
      amount: { value: 1000 },
    };
    await accepted(r, refundItem);
    assert.equal((await read(r, s2.id)).status, 'CHARGEBACK', 'applied as soon as the refund settled');
    await accepted(r, chargeback);
    assert.equal((await read(r, s2.id)).status, 'CHARGEBACK');

    // REFUND_FAILED after the refund succeeded (the scheme sent it back): recorded for the operator, nothing undone.
    await accepted(r, { ...refundItem, eventCode: 'REFUND_FAILED' });
    const kept = await r.gw.ctx.db.query<{ outcome: string }>(
      "SELECT outcome FROM adyen_notifications WHERE event_code = 'REFUND_FAILED' AND psp_reference = $1",
      [refundItem.pspReference],
    );
    assert.match(kept.rows[0]!.outcome, /^FOR THE OPERATOR: refund \d+ failed after it SUCCEEDED/);
    await ledgerOk(r);
  });

  test('bad credentials, a bad HMAC or a tampered field are refused and change nothing', async () => {
    const id = await sale(r, cardExample());
    const psp = await pspOf(r, id);
    const item = authorisation(id, psp, 16000);
    const wrongPassword = await notify(r, item, { password: 'not-the-password' });
    assert.equal(wrongPassword.status, 401);
    const badHmac = await notify(r, item, { tamperHmac: true });
    assert.equal(badHmac.status, 401);
    assert.match(badHmac.body, /HMAC/);
    const noAuth = await fetch(`${r.base}/providers/adyen/notifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(r.adyen.notificationBody(item)),
    });
    assert.equal(noAuth.status, 401);
    assert.match(noAuth.headers.get('www-authenticate') ?? '', /^Basic/);
    // Signed for one amount, sent with another: the signature no longer matches.
    const signed = r.adyen.notificationBody(item) as { notificationItems: { NotificationRequestItem: { amount: { value: number } } }[] };
    signed.notificationItems[0]!.NotificationRequestItem.amount.value = 1;
    const tampered = await fetch(`${r.base}/providers/adyen/notifications`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${r.adyen.username}:${r.adyen.password}`).toString('base64')}`,
      },
      body: JSON.stringify(signed),
    });
    assert.equal(tampered.status, 401);
    assert.equal((await read(r, id)).status, 'EM_PROCESSAMENTO');
    assert.equal((await r.gw.ctx.db.query('SELECT 1 FROM adyen_notifications WHERE psp_reference = $1', [psp])).rowCount, 0);
  });

  test('an authorisation for a sale that cannot take it is returned to the shopper; an unknown event code is acknowledged', async () => {
    // Adyen unreachable, the seller cancels the FALHA sale; then Adyen's late word that it authorised it after all.
    r.adyen.failNext('payments', 'drop', 2);
    const id = await sale(r, cardExample());
    const cancel = await r.gw.app.inject({ method: 'POST', url: `/api/transactions/${id}/cancel`, headers: r.seller.headers });
    assert.equal(cancel.statusCode, 200, cancel.body);
    await accepted(r, authorisation(id, 'ODDPSP0000000001', 16000));
    assert.equal((await read(r, id)).status, 'CANCELADO');
    const reversal = r.adyen.requests.find((c) => c.path === '/payments/ODDPSP0000000001/reversals');
    assert.ok(reversal, 'the money went back by a reversal');
    assert.equal(reversal.headers['idempotency-key'], `${r.gw.ctx.installationId}-reversal-ODDPSP0000000001`);
    const kept = await r.gw.ctx.db.query<{ outcome: string }>("SELECT outcome FROM adyen_notifications WHERE psp_reference = 'ODDPSP0000000001'");
    assert.match(kept.rows[0]!.outcome, /CANCELADO sale: returned/);
    await accepted(r, {
      eventCode: 'REPORT_AVAILABLE',
      success: true,
      pspReference: 'REPORT0000000001',
      merchantReference: 'report',
      amount: { value: 0 },
      reason: 'https://ca-test.adyen.com/reports/download/settlement.csv',
    });
  });
});

describe('CARD_PROVIDER=adyen, manual capture', () => {
  let r: Rail;
  before(async () => {
    r = await startRail({ ADYEN_CAPTURE: 'manual' });
  });
  after(async () => {
    if (r) assert.deepEqual(r.proxy.violations, []);
    await stopRail(r);
  });

  test('authorised, captured by the gateway, PAGO on the CAPTURE notification', async () => {
    const id = await sale(r, cardExample());
    const payment = r.adyen.requests.find((c) => c.path === '/payments' && (c.body as Json).reference === String(id))!;
    assert.deepEqual((payment.body as Json).additionalData, { manualCapture: 'true' });
    const psp = await pspOf(r, id);
    const capture = r.adyen.requests.find((c) => c.path === `/payments/${psp}/captures`);
    assert.ok(capture, 'the gateway captured the authorisation');
    assert.deepEqual((capture.body as Json).amount, { currency: 'BRL', value: 16000 });
    await accepted(r, authorisation(id, psp, 16000));
    assert.equal((await read(r, id)).status, 'EM_PROCESSAMENTO', 'authorised is not yet paid');
    const capturePsp = (capture.answer!.body as Json).pspReference as string;
    await accepted(r, {
      eventCode: 'CAPTURE',
      success: true,
      pspReference: capturePsp,
      originalReference: psp,
      merchantReference: `capture-${id}`,
      amount: { value: 16000 },
    });
    assert.equal((await read(r, id)).status, 'PAGO');
    await ledgerOk(r);
  });

  test('a failed capture ends FALHA', async () => {
    const id = await sale(r, cardExample());
    const psp = await pspOf(r, id);
    await accepted(r, {
      eventCode: 'CAPTURE_FAILED',
      success: true,
      pspReference: 'CAPFAIL000000001',
      originalReference: psp,
      merchantReference: String(id),
      amount: { value: 16000 },
    });
    assert.equal((await read(r, id)).status, 'FALHA');
  });
});
