// The sandbox card processor's own record (CONTRACT §15): what its autopilot authorises is booked as
// Settled and what it refunds as Refunded at the embedded PSP, which serves a São Paulo day of them
// as Adyen's Settlement details report; the processor's record reads those reports back.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import type { ProviderMovement, RecordWindow } from '../../src/providers/record.ts';
import { cardAutopilotJob } from '../../src/providers/sandbox/autopilot.ts';
import type { SandboxPsp } from '../../src/providers/sandbox/embedded-psp.ts';
import { type SandboxCardProcessor, sandboxCardProcessor } from '../../src/providers/sandbox/processors.ts';
import { cardExample } from '../helpers/fixtures.ts';
import { type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';

async function readAll(processor: SandboxCardProcessor, window: RecordWindow): Promise<ProviderMovement[]> {
  const all: ProviderMovement[] = [];
  for await (const page of processor.record(window)) all.push(...page);
  return all;
}

describe('the sandbox card processor’s settlement record', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let psp: SandboxPsp;
  let processor: SandboxCardProcessor;
  let current = new Date();
  before(async () => {
    gw = await startGateway({ clock: { now: () => current } });
    seller = await gw.createSeller();
    psp = gw.ctx.rails.psp!;
    processor = gw.ctx.providers.port('CARD', 'sandbox') as SandboxCardProcessor;
  });
  after(() => gw?.close());

  test('an authorised sale is booked Settled once, a refund Refunded under its reference; both read back', async () => {
    const t0 = current;
    const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: cardExample() });
    assert.equal(res.statusCode, 201, res.body);
    const { id } = res.json().sale;
    const window = { from: new Date(t0.getTime() - 3600_000), to: new Date(t0.getTime() + 3600_000) };
    for (const step of [400, 800]) {
      current = new Date(t0.getTime() + step);
      await cardAutopilotJob.run(gw.ctx);
    }
    const sale = (await gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers })).json();
    assert.equal(sale.status, 'PAGO');
    const payment = sale.externalTransactionId as string;
    current = new Date(t0.getTime() + 5000);
    assert.equal(await cardAutopilotJob.run(gw.ctx), 0);

    const refund = await gw.app.inject({ method: 'POST', url: `/api/transactions/${id}/refund`, headers: seller.headers, payload: { amount: 5000 } });
    assert.equal(refund.statusCode, 201, refund.body);
    const movements = await readAll(processor, window);
    assert.deepEqual(
      movements.map(({ id: movementId, kind, reference, amount }) => ({ id: movementId, kind, reference, amount })),
      [
        { id: `Settled:${payment}`, kind: 'CARD_SETTLED', reference: payment, amount: 16000 },
        { id: `Refunded:sbx_refund_${refund.json().id}`, kind: 'CARD_REFUNDED', reference: `sbx_refund_${refund.json().id}`, amount: -5000 },
      ],
    );
    // Booked at the autopilot's outcome, by the processor's clock; the report keeps whole seconds.
    assert.equal(movements[0]!.at.getTime(), Math.floor((t0.getTime() + 800) / 1000) * 1000);
  });

  test('a window across midnight in São Paulo reads both days’ reports, and only the window’s part of each', async () => {
    const at = (iso: string) => new Date(iso);
    const book = (ref: string, when: string) =>
      psp.settleCard({ type: 'Settled', pspReference: ref, merchantReference: '1', amountCents: 1000, feeCents: 25, at: at(when) });
    await book('sbx_card_early', '2026-03-02T13:00:00Z'); // 10:00 in São Paulo, before the window
    await book('sbx_card_late', '2026-03-03T02:30:00Z'); // 23:30 of the 2nd in São Paulo
    await book('sbx_card_after', '2026-03-03T03:30:00Z'); // 00:30 of the 3rd
    await book('sbx_card_after', '2026-03-03T03:45:00Z'); // the same settlement again: kept once
    const movements = await readAll(processor, { from: at('2026-03-03T02:00:00Z'), to: at('2026-03-03T04:00:00Z') });
    assert.deepEqual(
      movements.map(({ kind, reference, amount, at: when }) => [kind, reference, amount, when.toISOString()]),
      [
        ['CARD_SETTLED', 'sbx_card_late', 1000, '2026-03-03T02:30:00.000Z'],
        ['FEE', 'sbx_card_late:fee', -25, '2026-03-03T02:30:00.000Z'],
        ['CARD_SETTLED', 'sbx_card_after', 1000, '2026-03-03T03:30:00.000Z'],
        ['FEE', 'sbx_card_after:fee', -25, '2026-03-03T03:30:00.000Z'],
      ],
    );
  });

  test('the report is Adyen’s layout behind HTTP Basic; an unknown file is 404', async () => {
    const url = `${psp.reportsUrl}/settlement_detail_report_2026-03-02.csv`;
    const anonymous = await request(url);
    assert.equal(anonymous.statusCode, 401);
    await anonymous.body.dump();
    const authorization = `Basic ${Buffer.from(`${psp.clientId}:${psp.clientSecret}`).toString('base64')}`;
    const wrong = await request(url, { headers: { authorization: `Basic ${Buffer.from(`${psp.clientId}:nope`).toString('base64')}` } });
    assert.equal(wrong.statusCode, 401);
    await wrong.body.dump();
    const ok = await request(url, { headers: { authorization } });
    assert.equal(ok.statusCode, 200);
    assert.match(String(ok.headers['content-type']), /^text\/csv/);
    const lines = (await ok.body.text()).trim().split('\n');
    assert.match(lines[0]!, /^Company Account,Merchant Account,Psp Reference,Merchant Reference,Payment Method,Creation Date,TimeZone,Type,/);
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(',').slice(2, 12)),
      [
        ['sbx_card_early', '1', 'card', '2026-03-02 10:00:00', 'BRT', 'Settled', 'sbx_card_early', 'BRL', '', '10.00'],
        ['sbx_card_late', '1', 'card', '2026-03-02 23:30:00', 'BRT', 'Settled', 'sbx_card_late', 'BRL', '', '10.00'],
      ],
    );
    for (const file of ['settlement_detail_report_2026-02-30.csv', 'settlement_detail_report_batch_1.csv']) {
      const missing = await request(`${psp.reportsUrl}/${file}`, { headers: { authorization } });
      assert.equal(missing.statusCode, 404, file);
      await missing.body.dump();
    }
  });

  test('without a running embedded PSP the record cannot be read: it throws', async () => {
    const window = { from: new Date('2026-03-02T03:00:00Z'), to: new Date('2026-03-03T03:00:00Z') };
    await assert.rejects(readAll(sandboxCardProcessor(null), window), /the embedded PSP is not running/);
    // A port nobody listens on: the PSP is gone.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const gone = { ...psp, reportsUrl: `http://127.0.0.1:${port}/reports` } as SandboxPsp;
    await assert.rejects(readAll(sandboxCardProcessor(gone), window));
  });
});
