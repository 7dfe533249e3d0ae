// The PIX rail end to end (CONTRACT §11.1, §5a): the gateway's api-pix connector and the embedded
// PSP over HTTP, the PSP calling the gateway back on its listening port. Every request the connector
// sends and every answer it gets pass a proxy that checks them against the official API Pix file,
// and every callback the PSP sends passes a tap that checks it too: a violation fails the suite.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { ApiPixError, createApiPixClient } from '../../src/providers/api-pix/client/api-pix-client.ts';
import type { CobGerada } from '../../src/providers/api-pix/client/api-pix-types.ts';
import { settleRefund } from '../../src/transactions/refund-moves.ts';
import type { Job } from '../../src/workers/job.ts';
import { checkApiPixCallback, startValidatingProxy, type ValidatingProxy } from '../helpers/api-pix-spec.ts';
import { cardExample, pixExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway } from '../helpers/gateway.ts';

interface Tap {
  url: string;
  violations: string[];
  close(): Promise<void>;
}

/** Forwards the PSP's callbacks to the gateway unchanged, checking each body against the file. */
async function startCallbackTap(gatewayPort: number): Promise<Tap> {
  const violations: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      for (const v of checkApiPixCallback(JSON.parse(body.toString('utf8')))) violations.push(`callback ${req.url}: ${v}`);
      const forward = httpRequest(
        { host: '127.0.0.1', port: gatewayPort, method: req.method, path: req.url, headers: { 'content-type': 'application/json' }, timeout: 10_000 },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.writeHead(502).end());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    violations,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('the PIX rail: the api-pix connector against the embedded PSP', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let proxy: ValidatingProxy;
  let tap: Tap;
  let reconcile: Job;
  const inject = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) =>
    gw.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  const psp = () => gw.ctx.rails.psp!;

  before(async () => {
    gw = await startGateway({ env: { PIX_RECONCILE_SECONDS: '5' } });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    tap = await startCallbackTap((gw.app.server.address() as AddressInfo).port);
    await gw.ctx.providers.listeningAt(tap.url);
    proxy = await startValidatingProxy({ target: psp().apiUrl });
    await gw.ctx.rails.apiPix.client.close();
    gw.ctx.rails.apiPix.client = createApiPixClient({
      baseUrl: proxy.url,
      tokenUrl: psp().tokenUrl,
      clientId: psp().clientId,
      clientSecret: psp().clientSecret,
    });
    reconcile = railJob(gw, 'pix-reconcile');
    await reconcile.run(gw.ctx); // registers the callback URL (PUT /webhook/{chave})
    seller = await gw.createSeller();
  });
  after(async () => {
    await gw?.close();
    await proxy?.close();
    await tap?.close();
  });

  test('at start the worker registered the callback URL at the PSP (PUT /webhook/{chave}), keyed by the secret path', async () => {
    const webhook = await gw.ctx.rails.apiPix.client.getWebhook(gw.config.pixReceiverKey);
    assert.equal(webhook.webhookUrl, `${tap.url}/providers/pix/${gw.config.pixRail.webhookSecret}`);
  });

  async function sale(amount = 15000): Promise<{ id: number; txid: string }> {
    const res = await inject('POST', '/api/sales', seller.headers, pixExample({ amount }));
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().sale.id as number;
    return { id, txid: (await read(id)).externalTransactionId };
  }
  const read = async (id: number) => (await inject('GET', `/api/transactions/${id}`, seller.headers)).json();
  const pay = (txid: string, body: object = {}) => inject('POST', `/sandbox/pix/${txid}/pay`, adminHeaders, body);
  const balance = async () => (await inject('GET', '/api/public/balance', seller.headers)).json();
  const received = async (e2e: string) =>
    (
      await gw.ctx.db.query<{ outcome: string; return_status: string | null; return_reason: string | null }>(
        'SELECT outcome, return_status, return_reason FROM pix_received WHERE end_to_end_id = $1',
        [e2e],
      )
    ).rows[0];
  const verify = async () => assert.equal((await inject('GET', '/admin/ledger/verify', adminHeaders)).json().ok, true);

  test('a Pix paid at the PSP makes the sale PAGO through the callback; a second Pix for it is returned whole', async () => {
    const { id, txid } = await sale();
    const paid = await pay(txid);
    assert.equal(paid.statusCode, 200, paid.body);
    const e2e = paid.json().endToEndId as string;
    assert.match(e2e, /^E[0-9]{8}[0-9]{12}[A-Za-z0-9]{11}$/);
    const after = await read(id);
    assert.deepEqual([after.status, after.systemFee, after.netAmount], ['PAGO', 298, 14702], 'paid through the real callback path');
    const notified = await gw.ctx.db.query<{ kind: string }>(
      "SELECT kind FROM notifications WHERE transaction_id = $1 AND payload::jsonb->>'status' = 'PAGO'",
      [id],
    );
    assert.deepEqual(
      notified.rows.map((n) => n.kind),
      ['TRANSACTION_POSTBACK'],
      'the PAGO postback is queued in the same commit',
    );
    assert.deepEqual(await received(e2e), { outcome: 'PAID', return_status: null, return_reason: null });

    const again = await pay(txid);
    const second = again.json().endToEndId as string;
    assert.equal((await received(second))?.outcome, 'RETURNED');
    assert.equal((await received(second))?.return_reason, 'the sale is PAGO');
    await psp().settleDevolucoes();
    assert.equal((await received(second))?.return_status, 'DEVOLVIDO', 'the PSP returned it and said so');
    assert.equal((await read(id)).status, 'PAGO', 'the sale is paid once');
    await verify();
  });

  test("a sale paid by its id (POST /sandbox/sales/{id}/pay); the create answer's txid is the PSP's", async () => {
    const created = await inject('POST', '/api/sales', seller.headers, pixExample({ amount: 2000 }));
    const { id, payment } = created.json().sale;
    assert.equal(payment.pix.txid, (await read(id)).externalTransactionId);
    const paid = await inject('POST', `/sandbox/sales/${id}/pay`, adminHeaders, {});
    assert.equal(paid.statusCode, 200, paid.body);
    assert.deepEqual(paid.json(), { id, status: 'PAGO' });
    assert.equal((await read(id)).status, 'PAGO');

    const card = (await inject('POST', '/api/sales', seller.headers, cardExample())).json().sale.id;
    const refused = await inject('POST', `/sandbox/sales/${card}/pay`, adminHeaders, {});
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(refused.json().errorType, 'INVALID_TRANSITION');
    const unknown = await inject('POST', '/sandbox/sales/999999/pay', adminHeaders, {});
    assert.deepEqual([unknown.statusCode, unknown.json().error], [404, 'Not Found']);
    const bad = await inject('POST', '/sandbox/sales/01/pay', adminHeaders, {});
    assert.equal(bad.statusCode, 400);
    assert.equal((await inject('POST', `/sandbox/sales/${id}/pay`, seller.headers, {})).statusCode, 401, 'the operator token only');
    await verify();
  });

  test('a dropped callback: the sale stays PENDENTE until reconciliation lists the Pix, then PAGO', async () => {
    const { id, txid } = await sale(2500);
    psp().setCallbacks('drop');
    try {
      assert.equal((await pay(txid)).statusCode, 200);
      assert.equal((await read(id)).status, 'PENDENTE', 'no callback came');
    } finally {
      psp().setCallbacks('deliver');
    }
    await reconcile.run(gw.ctx);
    assert.equal((await read(id)).status, 'PAGO', 'reconciliation found it');
    await reconcile.run(gw.ctx);
    assert.equal((await read(id)).status, 'PAGO', 'and applies it once');
  });

  test('a Pix of another amount, and a Pix after cancellation, are returned; the cancelled charge is removed at the PSP', async () => {
    const short = await sale(3000);
    const wrong = (await pay(short.txid, { amount: 2999 })).json().endToEndId as string;
    assert.equal((await received(wrong))?.return_reason, '2999 cents for a sale of 3000');
    assert.equal((await read(short.id)).status, 'PENDENTE');

    const cancelled = await sale(4000);
    assert.equal((await inject('POST', `/api/transactions/${cancelled.id}/cancel`, seller.headers)).statusCode, 200);
    await reconcile.run(gw.ctx);
    assert.equal((await gw.ctx.rails.apiPix.client.getCob(cancelled.txid)).status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
    const late = (await pay(cancelled.txid)).json().endToEndId as string;
    assert.equal((await received(late))?.return_reason, 'the sale is CANCELADO');
    await psp().settleDevolucoes();
    // The first return settled on the PSP's own timer; on a loaded machine its callback may still be
    // in the PSP's retries: reconciliation reads both returns' ends, as it would for a lost callback.
    await reconcile.run(gw.ctx);
    assert.equal((await received(late))?.return_status, 'DEVOLVIDO');
    assert.equal((await read(cancelled.id)).status, 'CANCELADO');
    const shown = (await inject('GET', '/admin/pix/returns?limit=100', adminHeaders)).json().data as {
      endToEndId: string;
      reason: string;
      status: string;
    }[];
    assert.deepEqual(
      shown.filter((r) => r.endToEndId === late || r.endToEndId === wrong).map((r) => [r.endToEndId, r.reason, r.status]),
      [
        [late, 'the sale is CANCELADO', 'DEVOLVIDO'],
        [wrong, '2999 cents for a sale of 3000', 'DEVOLVIDO'],
      ],
      'the operator sees every returned Pix, newest first, with its reason',
    );
  });

  test('refunds are devoluções: a partial one, then the rest, end ESTORNADO; a failed one restores the balance', async () => {
    const before = await balance();
    const { id, txid } = await sale();
    await pay(txid);
    assert.deepEqual(await balance(), { ...before, available: before.available + 14702, total: before.total + 14702 });

    const part = await inject('POST', `/api/transactions/${id}/refund`, seller.headers, { amount: 5000 });
    assert.deepEqual([part.statusCode, part.json().status], [201, 'PENDING'], part.body);
    await psp().settleDevolucoes();
    const settled = (await inject('GET', `/api/transactions/${id}/refunds`, seller.headers)).json().data;
    assert.deepEqual(
      settled.map((r: { status: string; amount: number }) => [r.status, r.amount]),
      [['SUCCEEDED', 5000]],
    );
    assert.deepEqual([(await read(id)).status, (await read(id)).refundedAmount], ['PAGO', 5000]);

    psp().failNextDevolucoes(1);
    const failing = await inject('POST', `/api/transactions/${id}/refund`, seller.headers, {});
    assert.equal(failing.json().amount, 10000);
    const blocked = await balance();
    await psp().settleDevolucoes();
    const [, failed] = (await inject('GET', `/api/transactions/${id}/refunds`, seller.headers)).json().data;
    assert.equal(failed.status, 'FAILED');
    assert.match(failed.failureReason, /^NAO_REALIZADO/);
    assert.deepEqual(await balance(), { ...blocked, available: blocked.available + 10000, blocked: blocked.blocked - 10000 });

    const rest = await inject('POST', `/api/transactions/${id}/refund`, seller.headers, {});
    assert.equal(rest.json().status, 'PENDING');
    await psp().settleDevolucoes();
    assert.deepEqual([(await read(id)).status, (await read(id)).refundedAmount], ['ESTORNADO', 15000]);
    assert.deepEqual(await balance(), { ...before, available: before.available - 298, total: before.total - 298 });
    await verify();
  });

  test('MED through the rail: a devolução MED_OPERACIONAL on a PAGO sale opens and loses the MED', async () => {
    const before = await balance();
    const { id, txid } = await sale();
    const e2e = (await pay(txid)).json().endToEndId as string;
    await psp().openMedDevolucao(e2e, { amountCents: 15000, natureza: 'MED_OPERACIONAL' });
    const after = await read(id);
    assert.equal(after.status, 'ESTORNADO');
    const events = await gw.ctx.db.query<{ event: string }>('SELECT event FROM transaction_events WHERE transaction_id = $1 ORDER BY id', [id]);
    assert.deepEqual(
      events.rows.map((e) => e.event),
      ['PAYMENT_CONFIRMED', 'MED_OPENED', 'MED_LOST'],
    );
    // MED lost: the net goes back from the MED block; the platform absorbs the fee; nothing more from available.
    assert.deepEqual(await balance(), before);
    await verify();
  });

  test('the callback trusts nothing but the PSP: an unknown secret is 404, an endToEndId the PSP does not know changes nothing', async () => {
    const secret = gw.config.pixRail.webhookSecret;
    const wrong = await inject('POST', `/providers/pix/${'x'.repeat(secret.length)}/pix`, {}, { pix: [{ endToEndId: `E${'1'.repeat(31)}` }] });
    assert.equal(wrong.statusCode, 404);
    const malformed = await inject('POST', '/providers/pix/guess/pix', {}, { nothing: true });
    assert.equal(malformed.statusCode, 404, 'without the secret the endpoint does not exist, whatever the body');
    const { id } = await sale(1234);
    const forged = await inject(
      'POST',
      `/providers/pix/${secret}/pix`,
      {},
      { pix: [{ endToEndId: `E${'2'.repeat(31)}`, txid: 'x', valor: '12.34' }] },
    );
    assert.equal(forged.statusCode, 200, forged.body);
    assert.equal((await read(id)).status, 'PENDENTE');
  });

  test('a callback confirms its Pix several at once: one the PSP cannot confirm is a 502, and those confirmed are applied', async () => {
    const paid: { id: number; endToEndId: string }[] = [];
    psp().setCallbacks('drop');
    try {
      for (let i = 0; i < 3; i++) {
        const { id, txid } = await sale(2600 + i);
        paid.push({ id, endToEndId: (await pay(txid)).json().endToEndId as string });
      }
    } finally {
      psp().setCallbacks('deliver');
    }
    const client = gw.ctx.rails.apiPix.client;
    const getPix = client.getPix;
    let inFlight = 0;
    let most = 0;
    let failing: string | null = paid[2]!.endToEndId;
    client.getPix = async (e2e) => {
      most = Math.max(most, ++inFlight);
      try {
        await new Promise((r) => setTimeout(r, 50));
        if (e2e === failing) throw new ApiPixError({ kind: 'network', operation: 'GET /pix/{e2eid}', reason: 'no answer (test)' });
        return await getPix.call(client, e2e);
      } finally {
        inFlight--;
      }
    };
    const callback = () =>
      inject('POST', `/providers/pix/${gw.config.pixRail.webhookSecret}/pix`, {}, { pix: paid.map((p) => ({ endToEndId: p.endToEndId })) });
    try {
      const first = await callback();
      assert.equal(first.statusCode, 502, first.body);
      assert.equal(first.json().errorType, 'PROVIDER_ERROR');
      assert.equal(most, 3, 'the three asked at once');
      assert.deepEqual(
        await Promise.all(paid.map(async (p) => (await read(p.id)).status)),
        ['PAGO', 'PAGO', 'PENDENTE'],
        'the confirmed Pix applied; the other waits for the call again',
      );
      failing = null;
      const again = await callback();
      assert.equal(again.statusCode, 200, again.body);
      assert.equal((await read(paid[2]!.id)).status, 'PAGO');
    } finally {
      client.getPix = getPix;
    }
    await verify();
  });

  test('a PSP that cannot be reached: the sale answers 502 PROVIDER_ERROR and nothing is written', async () => {
    const working = gw.ctx.rails.apiPix.client;
    gw.ctx.rails.apiPix.client = createApiPixClient({
      baseUrl: 'http://127.0.0.1:9/api/v2',
      tokenUrl: 'http://127.0.0.1:9/oauth/token',
      clientId: 'x',
      clientSecret: 'y',
      timeouts: { connectMs: 500, requestMs: 1500 },
    });
    try {
      const count = async () => (await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions')).rows[0]!.n;
      const before = await count();
      const res = await inject('POST', '/api/sales', seller.headers, pixExample());
      assert.equal(res.statusCode, 502, res.body);
      assert.equal(res.json().errorType, 'PROVIDER_ERROR');
      assert.equal(await count(), before);
    } finally {
      await gw.ctx.rails.apiPix.client.close();
      gw.ctx.rails.apiPix.client = working;
    }
  });

  /** Every PUT /cob's txid, in order; `around` runs each call (the real one is `put`). */
  async function watchingPutCob<T>(
    around: (put: () => Promise<CobGerada>, n: number) => Promise<CobGerada>,
    work: (txids: string[]) => Promise<T>,
  ): Promise<T> {
    const client = gw.ctx.rails.apiPix.client;
    const putCob = client.putCob;
    const txids: string[] = [];
    client.putCob = (txid, body) => {
      txids.push(txid);
      return around(() => putCob.call(client, txid, body), txids.length);
    };
    try {
      return await work(txids);
    } finally {
      client.putCob = putCob;
    }
  }
  const cobsOf = async (cents: number) =>
    (await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sandbox_psp.cobs WHERE original_cents = $1', [cents])).rows[0]!.n;
  const salesOf = async (cents: number) =>
    (await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE seller_id = $1 AND amount = $2', [seller.id, cents]))
      .rows[0]!.n;
  const keyed = (key: string) => ({ ...seller.headers, 'idempotency-key': key });
  const lostAnswer = () => new ApiPixError({ kind: 'network', operation: 'PUT /cob/{txid}', reason: 'the answer was lost (test)' });

  test('a charge whose answer was lost: the retry of its key and body gets that same charge at the PSP, not a second', async () => {
    const body = pixExample({ amount: 12_301 });
    await watchingPutCob(
      async (put, n) => {
        const cob = await put();
        if (n === 1) throw lostAnswer(); // made at the PSP, its answer never reached us
        return cob;
      },
      async (txids) => {
        const first = await inject('POST', '/api/sales', keyed('lost-answer'), body);
        assert.equal(first.statusCode, 502, first.body);
        // The first attempt made its charge 20 s before the retry: the sale's expiry is the charge's.
        const made = await gw.ctx.db.query<{ ends: Date }>(
          `UPDATE sandbox_psp.cobs SET criacao = criacao - interval '20 seconds' WHERE original_cents = 12301
           RETURNING criacao + expiracao * interval '1 second' AS ends`,
        );
        const retry = await inject('POST', '/api/sales', keyed('lost-answer'), body);
        assert.equal(retry.statusCode, 201, retry.body);
        assert.equal(txids.length, 2);
        assert.equal(txids[1], txids[0], 'the retry asked for the same charge');
        assert.equal(retry.json().sale.payment.pix.txid, txids[0]);
        assert.equal(retry.json().sale.payment.pix.expiresAt, made.rows[0]!.ends.toISOString(), "the charge's own expiry");
        assert.equal(await cobsOf(12_301), 1, 'one charge at the PSP');
        assert.equal(await salesOf(12_301), 1);
      },
    );
  });

  test("a charge made now lives from now, whatever the PSP's clock says (one 10 minutes behind here)", async () => {
    await watchingPutCob(
      async (put) => {
        const cob = await put();
        return { ...cob, calendario: { ...cob.calendario, criacao: new Date(Date.parse(cob.calendario.criacao) - 600_000).toISOString() } };
      },
      async () => {
        const asked = Date.now();
        const res = await inject('POST', '/api/sales', keyed('psp-clock-behind'), pixExample({ amount: 12_307 }));
        assert.equal(res.statusCode, 201, res.body);
        const lives = Date.parse(res.json().sale.payment.pix.expiresAt) - asked;
        assert.ok(lives >= 3_600_000 && lives < 3_610_000, `expires ${lives} ms after the request`);
      },
    );
  });

  test('after a lost answer, another body under the key, or the same body once its reference is spent, is a charge of its own', async () => {
    let lose = true;
    await watchingPutCob(
      async (put) => {
        const cob = await put();
        if (lose) throw lostAnswer();
        return cob;
      },
      async (txids) => {
        const fail = async (key: string, cents: number) => {
          lose = true;
          assert.equal((await inject('POST', '/api/sales', keyed(key), pixExample({ amount: cents }))).statusCode, 502);
          lose = false;
        };
        await fail('changed', 12_302);
        const changed = await inject('POST', '/api/sales', keyed('changed'), pixExample({ amount: 12_304 }));
        assert.equal(changed.statusCode, 201, changed.body);
        await fail('spent', 12_305);
        await gw.ctx.db.query(
          `UPDATE idempotency_claims SET reference_at = reference_at - interval '31 seconds' WHERE seller_id = $1 AND key = 'spent'`,
          [seller.id],
        );
        const late = await inject('POST', '/api/sales', keyed('spent'), pixExample({ amount: 12_305 }));
        assert.equal(late.statusCode, 201, late.body);
        assert.equal(txids.length, 4);
        assert.equal(new Set(txids).size, 4, 'each its own charge');
        assert.equal(await cobsOf(12_305), 2, "the spent reference's charge is left to expire unseen");
        // A retry that finds its charge no longer payable sells nothing.
        await fail('removed', 12_306);
        await gw.ctx.rails.apiPix.client.patchCob(txids[4]!, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
        const removed = await inject('POST', '/api/sales', keyed('removed'), pixExample({ amount: 12_306 }));
        assert.equal(removed.statusCode, 502, removed.body);
        assert.match(removed.json().message, /REMOVIDA_PELO_USUARIO_RECEBEDOR/);
        assert.equal(txids[5], txids[4]);
        assert.equal(await salesOf(12_306), 0);
      },
    );
  });

  test('a claim that lapses under a live holder (renewals cut by a stall): the request taking it over gets the same charge, the holder its answer', async () => {
    const body = pixExample({ amount: 12_303 });
    let reached!: () => void;
    const atPsp = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    await watchingPutCob(
      async (put, n) => {
        const cob = await put();
        if (n === 1) {
          reached();
          await released; // the holder, alive, stalls between its charge and its write
        }
        return cob;
      },
      async (txids) => {
        const holder = inject('POST', '/api/sales', keyed('lapsed-live'), body);
        await atPsp;
        // Its lease lapses as if its renewals could not reach the database; a renewal that lands
        // between the lapse and the taker's claim makes the taker a 409 (nothing called): lapse again.
        let taker = null;
        for (let i = 0; i < 5; i++) {
          await gw.ctx.db.query(
            `UPDATE idempotency_claims SET claimed_until = clock_timestamp() - interval '1 millisecond' WHERE seller_id = $1 AND key = 'lapsed-live'`,
            [seller.id],
          );
          taker = await inject('POST', '/api/sales', keyed('lapsed-live'), body);
          if (taker.statusCode !== 409) break;
        }
        assert.equal(taker?.statusCode, 201, taker?.body);
        release();
        const first = await holder;
        assert.equal(first.statusCode, 201, first.body);
        assert.equal(first.headers['idempotent-replayed'], 'true', "the holder's write found the key answered");
        assert.equal(first.body, taker?.body);
        assert.deepEqual(txids, [txids[0], txids[0]], 'both asked for one charge');
        assert.equal(await cobsOf(12_303), 1, 'one charge at the PSP');
        assert.equal(await salesOf(12_303), 1, 'one sale');
      },
    );
  });

  test('a MED devolução while a refund is PENDING waits, recorded, and is applied once the refund settles', async () => {
    const { id, txid } = await sale(8000);
    const e2e = (await pay(txid)).json().endToEndId as string;
    const rail = gw.ctx.rails.apiPix.refund;
    gw.ctx.rails.apiPix.refund = async () => ({ status: 'PENDING', providerRef: 'held-by-test' });
    let refundId: number;
    try {
      const refund = await inject('POST', `/api/transactions/${id}/refund`, seller.headers, { amount: 1000 });
      assert.equal(refund.json().status, 'PENDING', refund.body);
      refundId = refund.json().id;
    } finally {
      gw.ctx.rails.apiPix.refund = rail;
    }
    await psp().openMedDevolucao(e2e, { amountCents: 7000, natureza: 'MED_FRAUDE' });
    assert.equal((await read(id)).status, 'PAGO', 'the MED cannot open while the refund is pending');
    const open = async () =>
      (
        await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM pix_med_devolucoes WHERE end_to_end_id = $1 AND applied_at IS NULL', [
          e2e,
        ])
      ).rows[0]!.n;
    assert.equal(await open(), 1, 'recorded, not dropped');
    await settleRefund(gw.ctx.db, refundId, { status: 'FAILED', reason: 'test' }, new Date());
    await reconcile.run(gw.ctx);
    await railJob(gw, 'provider-events-held').run(gw.ctx);
    assert.equal((await read(id)).status, 'ESTORNADO', 'reconciliation applied the MED');
    assert.equal(await open(), 0);
    await verify();
  });

  test('a return the PSP refuses for good is shown NAO_REALIZADO and holds back nothing else', async () => {
    const ghost = `E${'9'.repeat(31)}`;
    // A Pix received for no sale, whose return was never sent (the followup job sends it).
    await gw.ctx.db.query(
      `INSERT INTO provider_events (provider, identity, kind, state, reason, fact, amount, external_reference, followup, followup_status, followup_at, received_at)
       VALUES ('api-pix', $1, 'PIX_RECEIVED', 'needs_operator', 'no sale has this txid', $2::jsonb, 100, $1, 'RETURN', 'TO_SEND', now() - interval '1 minute', now())`,
      [ghost, JSON.stringify({ kind: 'PIX_RECEIVED', endToEndId: ghost, txid: null, amount: 100, paidAt: new Date().toISOString() })],
    );
    const { id, txid } = await sale(2000);
    psp().setCallbacks('drop');
    try {
      await pay(txid);
    } finally {
      psp().setCallbacks('deliver');
    }
    await reconcile.run(gw.ctx);
    await railJob(gw, 'provider-followups').run(gw.ctx);
    const row = await received(ghost);
    assert.equal(row?.return_status, 'NAO_REALIZADO');
    assert.equal((await read(id)).status, 'PAGO', 'the rest of reconciliation ran');
  });

  test('no request, answer or callback broke the official API Pix file', () => {
    assert.deepEqual(proxy.violations, []);
    assert.deepEqual(tap.violations, []);
  });
});

test('the callback secret never reaches the logs', async () => {
  let logs = '';
  const logStream = new Writable({
    write(chunk, _enc, done) {
      logs += chunk.toString();
      done();
    },
  });
  const gw = await startGateway({ env: { LOG_LEVEL: 'info' }, logStream });
  try {
    const secret = gw.config.pixRail.webhookSecret;
    const res = await gw.app.inject({
      method: 'POST',
      url: `/providers/pix/${secret}/pix`,
      payload: { pix: [{ endToEndId: `E${'3'.repeat(31)}` }] },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(logs, /"route":"\/providers\/pix\/:secret\/pix","status":200/, 'the request is logged, by its route');
    assert.ok(!logs.includes(secret), 'without its secret');
    // A path no route matches is logged by its address, a secret-bearing one redacted.
    await gw.app.inject({ method: 'GET', url: `/providers/pix/${secret}/nothing` });
    assert.match(logs, /"route":"\/providers\/pix\/\[redacted\]\/nothing","status":404/);
    assert.ok(!logs.includes(secret), 'nor when no route matched');
  } finally {
    await gw.close();
  }
});
