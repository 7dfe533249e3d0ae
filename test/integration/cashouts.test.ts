import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { payoutAutopilotJob } from '../../src/providers/sandbox/autopilot.ts';
import { onPostgres } from '../helpers/databases.ts';
import { fund } from '../helpers/funding.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway } from '../helpers/gateway.ts';

describe('cashouts', () => {
  let gw: Gateway;
  let current = new Date('2026-11-21T12:00:00.000Z');
  before(async () => {
    gw = await startGateway({ clock: { now: () => current } });
  });
  after(async () => {
    await gw.close();
  });

  const cashout = (seller: SellerKeys, body: unknown, headers: Record<string, string> = {}) =>
    gw.app.inject({ method: 'POST', url: '/api/public/cashout', headers: { ...seller.headers, ...headers }, payload: body as object });
  const balance = async (seller: SellerKeys) => (await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers })).json();
  const event = (id: number, e: string) =>
    gw.app.inject({ method: 'POST', url: `/admin/cashouts/${id}/events`, headers: adminHeaders, payload: { event: e } });
  const verifyOk = async () =>
    assert.equal((await gw.app.inject({ method: 'GET', url: '/admin/ledger/verify', headers: adminHeaders })).json().ok, true);

  async function fundedSeller(cents: number) {
    const seller = await gw.createSeller();
    await fund(gw, seller.id, cents);
    return seller;
  }

  test("201 with the spec's Cashout object; PENDING moves available to blocked", async () => {
    const seller = await fundedSeller(50_000);
    const res = await cashout(seller, { amount: 150.5, pixKey: '529.982.247-25', pixKeyType: 'CPF' });
    assert.equal(res.statusCode, 201, res.body);
    const c = res.json();
    assert.deepEqual(Object.keys(c).sort(), ['amount', 'createdAt', 'fees', 'id', 'netAmount', 'pixKey', 'pixKeyType', 'status'].sort());
    assert.equal(c.amount, '150.50');
    assert.deepEqual(c.fees, { fixed: '2.00', variable: '0.00', total: '2.00' });
    assert.equal(c.netAmount, '148.50');
    assert.equal(c.pixKey, '52998224725');
    assert.equal(c.pixKeyType, 'CPF');
    assert.equal(c.status, 'PENDING');
    assert.equal(c.createdAt, current.toISOString());
    assert.deepEqual(await balance(seller), { available: 34_950, blocked: 15_050, total: 50_000 });
    const read = await gw.app.inject({ method: 'GET', url: `/api/public/cashout/${c.id}`, headers: seller.headers });
    assert.equal(read.statusCode, 200);
    // The read adds what the payout provider said (CONTRACT §11.3): nothing yet.
    assert.deepEqual(read.json(), { ...c, failureReason: null, returnedAmount: '0.00' });
    await verifyOk();
  });

  test('amount as a decimal string, default key type CPF, variable fee in basis points (half-even)', async () => {
    const seller = await fundedSeller(1_000_000);
    await gw.app.inject({
      method: 'PATCH',
      url: `/admin/sellers/${seller.id}`,
      headers: adminHeaders,
      payload: { feeSchedule: { cashout: { fixedCents: 100, variableBasisPoints: 150 } } },
    });
    const res = await cashout(seller, { amount: '1000.30', pixKey: '52998224725' });
    assert.equal(res.statusCode, 201, res.body);
    // 100030 × 1.5 % = 1500.45 → 1500; total 1600
    assert.deepEqual(res.json().fees, { fixed: '1.00', variable: '15.00', total: '16.00' });
    assert.equal(res.json().netAmount, '984.30');
    assert.equal(res.json().pixKeyType, 'CPF');
    // Exact half-cent ties, where half-even differs from half-up (and from half-down, truncation):
    // 100300 × 150 bp = 1504.5 → 1504 (even; half-up would say 1505); total 100 + 1504 = 1604
    const down = await cashout(seller, { amount: '1003.00', pixKey: '52998224725' });
    assert.equal(down.statusCode, 201, down.body);
    assert.deepEqual(down.json().fees, { fixed: '1.00', variable: '15.04', total: '16.04' }, '1504.5 cents rounds to the even 1504');
    assert.equal(down.json().netAmount, '986.96');
    // 100100 × 150 bp = 1501.5 → 1502 (even; half-down or truncation would say 1501); total 1602
    const up = await cashout(seller, { amount: '1001.00', pixKey: '52998224725' });
    assert.equal(up.statusCode, 201, up.body);
    assert.deepEqual(up.json().fees, { fixed: '1.00', variable: '15.02', total: '16.02' }, '1501.5 cents rounds to the even 1502');
    assert.equal(up.json().netAmount, '984.98');
    // the fee is charged at completion: fee_revenue takes exactly the rounded total
    for (const [c, fee] of [
      [down.json(), 1604],
      [up.json(), 1602],
    ] as const) {
      assert.equal((await event(c.id, 'PROCESSING')).statusCode, 200);
      assert.equal((await event(c.id, 'COMPLETED')).json().status, 'COMPLETED');
      const revenue = await gw.ctx.db.query<{ s: unknown }>(
        "SELECT coalesce(sum(amount), 0)::bigint AS s FROM journal_lines l JOIN postings p ON p.id = l.posting_id WHERE p.cashout_id = $1 AND l.account = 'fee_revenue'",
        [c.id],
      );
      assert.equal(Number(revenue.rows[0]!.s), fee, `fee_revenue of cashout ${c.id}`);
    }
    await verifyOk();
  });

  test("every error of the spec's table, in CONTRACT §8's order", async () => {
    const seller = await fundedSeller(20_000);
    const cases: [unknown, number, string | undefined, string?][] = [
      [{ amount: 'abc', pixKey: '52998224725' }, 400, 'VALIDATION_ERROR', 'amount'],
      [{ amount: 0, pixKey: '52998224725' }, 400, 'VALIDATION_ERROR', 'amount'],
      [{ amount: -5, pixKey: '52998224725' }, 400, 'VALIDATION_ERROR', 'amount'],
      [{ amount: 100.005, pixKey: '52998224725' }, 400, 'VALIDATION_ERROR', 'amount'],
      [{ pixKey: '52998224725' }, 400, 'VALIDATION_ERROR', 'amount'],
      [{ amount: 150, pixKey: '1234567' }, 400, 'VALIDATION_ERROR', 'pixKey'],
      [{ amount: 150, pixKey: 'x'.repeat(78) }, 400, 'VALIDATION_ERROR', 'pixKey'],
      [{ amount: 150, pixKey: 52998224725 }, 400, 'VALIDATION_ERROR', 'pixKey'],
      [{ amount: 150, pixKey: '52998224725', pixKeyType: 'IBAN' }, 400, 'VALIDATION_ERROR', 'pixKeyType'],
      [{ amount: 150, pixKey: '52998224724' }, 400, 'INVALID_PIX_KEY'],
      [{ amount: 150, pixKey: '11222333000180', pixKeyType: 'CNPJ' }, 400, 'INVALID_PIX_KEY'],
      [{ amount: 150, pixKey: 'not-an-email', pixKeyType: 'EMAIL' }, 400, 'INVALID_PIX_KEY'],
      [{ amount: 150, pixKey: '11987654321', pixKeyType: 'PHONE' }, 400, 'INVALID_PIX_KEY'],
      [{ amount: 150, pixKey: 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz', pixKeyType: 'RANDOM' }, 400, 'INVALID_PIX_KEY'],
      [{ amount: 99.99, pixKey: '52998224725' }, 422, 'MINIMUM_VALUE'],
      [{ amount: 100000.01, pixKey: '52998224725' }, 422, 'MAXIMUM_VALUE'],
      [{ amount: 200.01, pixKey: '52998224725' }, 422, 'INSUFFICIENT_BALANCE'],
    ];
    for (const [body, status, errorType, field] of cases) {
      const res = await cashout(seller, body);
      assert.equal(res.statusCode, status, `${JSON.stringify(body)} → ${res.body}`);
      assert.equal(res.json().errorType, errorType, JSON.stringify(body));
      if (field)
        assert.ok(
          res.json().details.some((d: { field: string }) => d.field === field),
          `${JSON.stringify(body)}: ${res.body}`,
        );
    }
    assert.deepEqual(await balance(seller), { available: 20_000, blocked: 0, total: 20_000 });
    // Permissions come before limits and balance.
    await gw.app.inject({ method: 'PATCH', url: `/admin/sellers/${seller.id}`, headers: adminHeaders, payload: { transferAllowed: false } });
    let res = await cashout(seller, { amount: 50, pixKey: '52998224725' });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().errorType, 'TRANSFER_NOT_ALLOWED');
    await gw.app.inject({ method: 'PATCH', url: `/admin/sellers/${seller.id}`, headers: adminHeaders, payload: { apiWithdrawalEnabled: false } });
    res = await cashout(seller, { amount: 50, pixKey: '52998224725' });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().errorType, 'API_WITHDRAWAL_DISABLED_GLOBALLY');
    // Key validity still comes first.
    res = await cashout(seller, { amount: 150, pixKey: '52998224724' });
    assert.equal(res.json().errorType, 'INVALID_PIX_KEY');
    // Missing keys: 401 before anything.
    res = await gw.app.inject({ method: 'POST', url: '/api/public/cashout', payload: { amount: 'x' } });
    assert.equal(res.statusCode, 401);
  });

  test('fees that reach the amount are MINIMUM_VALUE', async () => {
    const seller = await fundedSeller(50_000);
    await gw.app.inject({
      method: 'PATCH',
      url: `/admin/sellers/${seller.id}`,
      headers: adminHeaders,
      payload: { feeSchedule: { cashout: { fixedCents: 10_000, variableBasisPoints: 0 } } },
    });
    const res = await cashout(seller, { amount: 100, pixKey: '52998224725' });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().errorType, 'MINIMUM_VALUE');
  });

  test('keys are normalised per type', async () => {
    const seller = await fundedSeller(1_000_000);
    const cases: [string, string, string][] = [
      ['EMAIL', 'Maria.Silva@Example.COM', 'maria.silva@example.com'],
      ['PHONE', '+5511987654321', '+5511987654321'],
      ['RANDOM', '123E4567-E12B-12D1-A456-426655440000', '123e4567-e12b-12d1-a456-426655440000'],
      ['CNPJ', '12.ABC.345/01DE-35', '12ABC34501DE35'],
    ];
    for (const [type, raw, normalised] of cases) {
      const res = await cashout(seller, { amount: 100, pixKey: raw, pixKeyType: type });
      assert.equal(res.statusCode, 201, `${type}: ${res.body}`);
      assert.equal(res.json().pixKey, normalised);
    }
  });

  test('lifecycle: balances in cents after PROCESSING, COMPLETED, REJECTED, CANCELLED; other moves 409', async () => {
    const seller = await fundedSeller(100_000);
    const a = (await cashout(seller, { amount: 200, pixKey: '52998224725' })).json();
    const b = (await cashout(seller, { amount: 300, pixKey: '52998224725' })).json();
    const c = (await cashout(seller, { amount: 100, pixKey: '52998224725' })).json();
    assert.deepEqual(await balance(seller), { available: 40_000, blocked: 60_000, total: 100_000 });
    assert.equal((await event(a.id, 'PROCESSING')).json().status, 'PROCESSING');
    assert.deepEqual(await balance(seller), { available: 40_000, blocked: 60_000, total: 100_000 });
    assert.equal((await event(a.id, 'COMPLETED')).json().status, 'COMPLETED');
    assert.deepEqual(await balance(seller), { available: 40_000, blocked: 40_000, total: 80_000 });
    await event(b.id, 'PROCESSING');
    assert.equal((await event(b.id, 'REJECTED')).json().status, 'REJECTED');
    assert.deepEqual(await balance(seller), { available: 70_000, blocked: 10_000, total: 80_000 });
    assert.equal((await event(c.id, 'CANCELLED')).json().status, 'CANCELLED');
    assert.deepEqual(await balance(seller), { available: 80_000, blocked: 0, total: 80_000 });
    // The repeat of the last event is a no-op; every other move is refused and changes nothing.
    assert.equal((await event(a.id, 'COMPLETED')).statusCode, 200);
    for (const [id, e] of [
      [a.id, 'REJECTED'],
      [a.id, 'CANCELLED'],
      [a.id, 'PROCESSING'],
      [b.id, 'COMPLETED'],
      [c.id, 'PROCESSING'],
    ] as const) {
      const res = await event(id, e);
      assert.equal(res.statusCode, 409, `${e}: ${res.body}`);
      assert.equal(res.json().errorType, 'INVALID_TRANSITION');
    }
    const d = (await cashout(seller, { amount: 100, pixKey: '52998224725' })).json();
    assert.equal((await event(d.id, 'COMPLETED')).statusCode, 409); // PENDING → COMPLETED is not a move
    assert.equal((await event(999_999, 'COMPLETED')).statusCode, 404);
    assert.equal((await event(d.id, 'PAID')).statusCode, 400);
    const payouts = await gw.ctx.db.query<{ s: number }>(
      "SELECT coalesce(sum(amount), 0)::bigint AS s FROM journal_lines l JOIN postings p ON p.id = l.posting_id WHERE p.cashout_id = $1 AND split_part(l.account, ':', 1) = 'customer_funds'",
      [a.id],
    );
    assert.equal(payouts.rows[0]!.s, 19_800);
    await verifyOk();
  });

  test('GET /api/public/cashout/{id}: 400, 403, 404', async () => {
    const seller = await fundedSeller(20_000);
    const other = await gw.createSeller();
    const c = (await cashout(seller, { amount: 100, pixKey: '52998224725' })).json();
    assert.equal((await gw.app.inject({ method: 'GET', url: `/api/public/cashout/${c.id}`, headers: other.headers })).statusCode, 403);
    assert.equal((await gw.app.inject({ method: 'GET', url: '/api/public/cashout/999999', headers: seller.headers })).statusCode, 404);
    assert.equal((await gw.app.inject({ method: 'GET', url: '/api/public/cashout/abc', headers: seller.headers })).statusCode, 400);
  });

  test('the sandbox payout: the efi connector and the embedded PSP, PENDING → PROCESSING → COMPLETED, and @reject.test → REJECTED', async () => {
    const seller = await fundedSeller(100_000);
    const ok = (await cashout(seller, { amount: 100, pixKey: '52998224725' })).json();
    const bad = (await cashout(seller, { amount: 200, pixKey: 'someone@reject.test', pixKeyType: 'EMAIL' })).json();
    const status = async (id: number) =>
      (
        await gw.ctx.db.query<{ status: string; external_id: string | null; processed_at: Date | null }>(
          'SELECT status, external_id, processed_at FROM cashouts WHERE id = $1',
          [id],
        )
      ).rows[0]!;
    const payouts = railJob(gw, 'efi-payouts');
    await payouts.run(gw.ctx);
    assert.equal((await status(ok.id)).status, 'PROCESSING');
    assert.match((await status(ok.id)).external_id!, /^E[0-9]{20}[a-zA-Z0-9]{11}$/, "the Pix's end-to-end id");
    await gw.ctx.rails.psp!.settleSends();
    // No callback reaches a gateway that does not listen: reconciliation, an interval later, learns the outcome.
    current = new Date(current.getTime() + 61_000);
    await payouts.run(gw.ctx);
    assert.equal((await status(ok.id)).status, 'COMPLETED');
    assert.deepEqual((await status(ok.id)).processed_at, current);
    assert.equal((await status(bad.id)).status, 'REJECTED');
    assert.deepEqual(await balance(seller), { available: 90_000, blocked: 0, total: 90_000 });
    await verifyOk();
  });

  test('a cashout of the in-process sandbox bank (written before the efi connector) is still played to its end', async () => {
    const seller = await fundedSeller(100_000);
    const id = (await cashout(seller, { amount: 100, pixKey: '52998224725' })).json().id;
    await gw.ctx.db.query("UPDATE cashouts SET provider = 'sandbox', next_check_at = NULL WHERE id = $1", [id]);
    const statusOf = async () => (await gw.ctx.db.query<{ status: string }>('SELECT status FROM cashouts WHERE id = $1', [id])).rows[0]!.status;
    for (const expected of ['PROCESSING', 'COMPLETED']) {
      current = new Date(current.getTime() + 700);
      await payoutAutopilotJob.run(gw.ctx);
      assert.equal(await statusOf(), expected);
    }
    await verifyOk();
  });

  test('Idempotency-Key: one cashout, replayed answer', async () => {
    const seller = await fundedSeller(50_000);
    const body = { amount: 100, pixKey: '52998224725' };
    const first = await cashout(seller, body, { 'idempotency-key': 'payout-1' });
    const again = await cashout(seller, { pixKey: '52998224725', amount: 100 }, { 'idempotency-key': 'payout-1' });
    assert.equal(first.statusCode, 201);
    assert.equal(again.statusCode, 201);
    assert.equal(again.body, first.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(await balance(seller), { available: 40_000, blocked: 10_000, total: 50_000 });
    const other = await cashout(seller, { amount: 101, pixKey: '52998224725' }, { 'idempotency-key': 'payout-1' });
    assert.equal(other.statusCode, 422);
    assert.equal(other.json().errorType, 'IDEMPOTENCY_KEY_REUSED');
  });

  test('100 concurrent cashouts against a balance covering exactly N: N × 201, the rest INSUFFICIENT_BALANCE', async () => {
    const n = 37;
    const seller = await fundedSeller(n * 10_000);
    const peers = onPostgres ? await Promise.all([gw.peer(), gw.peer()]) : [];
    const apps = [gw.app, ...peers.map((p) => p.app)];
    // As the SDK asks: a key per cashout, and a 503 (a pool connection not free within its wait, when
    // 100 requests queue on one seller's balance on a loaded machine) asked again under the same key.
    const ask = async (i: number) => {
      const key = `burst-${seller.id}-${i}`;
      for (let attempt = 1; ; attempt++) {
        const res = await apps[i % apps.length]!.inject({
          method: 'POST',
          url: '/api/public/cashout',
          headers: { ...seller.headers, 'idempotency-key': key },
          payload: { amount: 100, pixKey: '52998224725' },
        });
        if (res.statusCode !== 503 || attempt === 5) return res;
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    };
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => ask(i)));
    const tally: Record<string, number> = {};
    for (const r of results) {
      const answer = `${r.statusCode} ${r.statusCode >= 400 ? r.json().errorType : ''}`.trim();
      tally[answer] = (tally[answer] ?? 0) + 1;
    }
    assert.deepEqual(tally, { '201': n, '422 INSUFFICIENT_BALANCE': 100 - n });
    assert.deepEqual(await balance(seller), { available: 0, blocked: n * 10_000, total: n * 10_000 });
    for (const p of peers) await p.close();
    await verifyOk();
  });
});
