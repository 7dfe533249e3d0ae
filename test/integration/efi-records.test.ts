// Efí's own record of the platform's accounts (CONTRACT §15): the real Efí clients and record
// readers against the embedded PSP over HTTP, through a proxy that checks every request with the
// zod params schemas of Efí's SDK and every answer with its response schemas (the sent Pix's
// returns with this project's efi-pix-send.schema.json, where the SDK disagrees with Efí's
// documentation). Also the faults a test arms at the provider's side, seen in those records.
// Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before, describe, test } from 'node:test';
import type { SandboxPsp } from '@pagar/sandbox-psp';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import {
  CancelChargeParamsSchema,
  CreateOneStepChargeBodySchema,
  DetailChargeParamsSchema,
  DetailChargeResponseSchema,
  GetAccountBalanceParamsSchema,
  GetAccountBalanceResponseSchema,
  ListChargesParamsSchema,
  ListChargesResponseSchema,
  PixSendBodySchema,
  PixSendListParamsSchema,
  PixSendListResponseSchema,
  PixSendParamsSchema,
} from 'sdk-node-apis-efi';
import type { Db } from '../../src/db/db.ts';
import { openDb } from '../../src/db/open.ts';
import { createApiPixClient, createPixTransport } from '../../src/providers/api-pix/client/api-pix-client.ts';
import { type ChargeDetail, type ChargePaid, createEfiChargesClient } from '../../src/providers/efi/charges-client.ts';
import { createEfiPixSendClient, type SentPixListed } from '../../src/providers/efi/pix-send-client.ts';
import { boletoRecord, efiBalance, sentPixRecord } from '../../src/providers/efi/records.ts';
import type { ProviderMovement, RecordReader, RecordWindow } from '../../src/providers/record.ts';
import { type ExchangeChecker, startValidatingProxy, type ValidatingProxy } from '../helpers/api-pix-proxy.ts';
import { freshDatabase, type TestDatabase } from '../helpers/databases.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const { startSandboxPsp } = await import('@pagar/sandbox-psp');

const RECEIVER_KEY = '123e4567-e12b-12d1-a456-426655440000';
const sendSchema = JSON.parse(readFileSync('spec/providers/efi-pix-send.schema.json', 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
const checkSentAnswer = ajv.compile(sendSchema);

// The PSP's clock, moved by hand: every booking has the time the test gives it.
let now = new Date('2026-03-01T12:00:00Z');
const at = (iso: string) => {
  now = new Date(iso);
};

/** A query as the SDK takes it: these parameters are numbers there, and strings on the wire. */
function params(path: string, numeric: string[]): Record<string, unknown> {
  const query = Object.fromEntries(new URL(path, 'http://x').searchParams);
  for (const name of numeric) if (query[name] !== undefined) (query as Record<string, unknown>)[name] = Number(query[name]);
  return query;
}

const issues = (what: string, r: { success: boolean; error?: { message: string } }) => (r.success ? [] : [`${what}: ${r.error?.message}`]);
const pathOnly = (path: string) => path.split('?')[0]!;

/** Every request the clients send, checked by the SDK; every answer by the SDK (and our schema for sent Pix). */
function efiChecker(log: string[]): ExchangeChecker {
  return {
    request({ method, path, body }) {
      log.push(`${method} ${path}`);
      const p = pathOnly(path);
      if (method === 'GET' && p === '/v2/gn/pix/enviados')
        return issues('params', PixSendListParamsSchema.safeParse(params(path, ['paginacao.paginaAtual', 'paginacao.itensPorPagina'])));
      if (method === 'GET' && p === '/v2/gn/saldo') return issues('params', GetAccountBalanceParamsSchema.safeParse(params(path, [])));
      if (method === 'GET' && p === '/v1/charges') return issues('params', ListChargesParamsSchema.safeParse(params(path, ['limit', 'page'])));
      if (method === 'GET' && /^\/v1\/charge\/\d+$/.test(p)) return issues('params', DetailChargeParamsSchema.safeParse({ id: Number(p.slice(11)) }));
      if (method === 'PUT' && p.startsWith('/v3/gn/pix/'))
        return [...issues('params', PixSendParamsSchema.safeParse({ idEnvio: p.slice(11) })), ...issues('body', PixSendBodySchema.safeParse(body))];
      if (method === 'POST' && p === '/v1/charge/one-step') return issues('body', CreateOneStepChargeBodySchema.safeParse(body));
      if (method === 'PUT' && /^\/v1\/charge\/\d+\/cancel$/.test(p))
        return issues('params', CancelChargeParamsSchema.safeParse({ id: Number(p.split('/')[3]) }));
      return [];
    },
    response({ method, path, status, body }) {
      if (status < 200 || status > 299) return [`answered ${status}: ${JSON.stringify(body)}`];
      const p = pathOnly(path);
      if (method === 'GET' && p === '/v2/gn/pix/enviados') return sentListIssues(body);
      if (method === 'GET' && p === '/v2/gn/saldo') return issues('answer', GetAccountBalanceResponseSchema.safeParse(body));
      if (method === 'GET' && p === '/v1/charges') return issues('answer', ListChargesResponseSchema.safeParse(body));
      if (method === 'GET' && /^\/v1\/charge\/\d+$/.test(p)) return issues('answer', DetailChargeResponseSchema.safeParse(body));
      return [];
    },
  };
}

/**
 * The SDK's list schema, but its strict `devolucoes` ({ rtrId, valor, horario: string }) is not what
 * Efí documents (an `id`, a `status`, `horario` as { solicitacao, liquidacao }): those items are
 * checked with our schema of Efí's documentation, the rest of the page with the SDK's.
 */
function sentListIssues(body: unknown): string[] {
  const page = body as { pix?: Record<string, unknown>[] };
  const out: string[] = [];
  for (const item of page.pix ?? []) {
    const id = String(item.idEnvio);
    if (!checkSentAnswer(item)) out.push(`item ${id}: ${JSON.stringify(checkSentAnswer.errors)}`);
  }
  const withoutReturns = { ...page, pix: (page.pix ?? []).map(({ devolucoes: _, ...item }) => item) };
  return [...out, ...issues('answer', PixSendListResponseSchema.safeParse(withoutReturns))];
}

async function collect(reader: RecordReader, window: RecordWindow): Promise<ProviderMovement[][]> {
  const pages: ProviderMovement[][] = [];
  for await (const page of reader(window)) pages.push(page);
  return pages;
}

/** A São Paulo day as a window: from 03:00 UTC to 03:00 UTC the next day. */
const spDay = (date: string): RecordWindow => ({
  from: new Date(`${date}T03:00:00Z`),
  to: new Date(new Date(`${date}T03:00:00Z`).getTime() + 86_400_000),
});

describe('Efí records read from the embedded PSP', () => {
  let database: TestDatabase;
  let db: Db;
  let psp: SandboxPsp;
  let proxy: ValidatingProxy;
  let receiver: Receiver;
  const log: string[] = [];
  let send: ReturnType<typeof createEfiPixSendClient>;
  let charges: ReturnType<typeof createEfiChargesClient>;
  let apiPix: ReturnType<typeof createApiPixClient>;

  before(async () => {
    database = await freshDatabase();
    db = await openDb(database.url, tmpdir());
    receiver = await startReceiver();
    // Sends settle when the test says (settleSends), at the test's clock.
    psp = await startSandboxPsp({
      db,
      receiverKey: RECEIVER_KEY,
      merchantName: 'Loja Sandbox',
      merchantCity: 'São Paulo',
      clock: { now: () => now },
      sendDelayMs: 3_600_000,
      callbackRetryDelaysMs: [10],
    });
    proxy = await startValidatingProxy({ target: psp.efiUrl, checker: efiChecker(log) });
    // The token caches keep the PSP's time, so a token the PSP deems expired is never sent.
    const credentials = { clientId: psp.clientId, clientSecret: psp.clientSecret, clock: () => now.getTime() };
    send = createEfiPixSendClient(proxy.url, createPixTransport({ baseUrl: proxy.url, tokenUrl: psp.tokenUrl, ...credentials }));
    const chargesTransport = createPixTransport({ baseUrl: proxy.url, tokenUrl: `${psp.efiUrl}/v1/authorize`, grantBody: 'json', ...credentials });
    charges = createEfiChargesClient(proxy.url, chargesTransport);
    apiPix = createApiPixClient({ baseUrl: psp.apiUrl, tokenUrl: psp.tokenUrl, ...credentials });
    await apiPix.putWebhook(RECEIVER_KEY, receiver.url('/hooks'));
  });
  after(async () => {
    await psp?.close();
    await proxy?.close();
    await receiver?.close();
    await db?.close();
    await database?.drop();
  });

  const payout = (idEnvio: string, valor: string, chave = 'payee@example.com') =>
    send.sendPix(idEnvio, { valor, pagador: { chave: RECEIVER_KEY, infoPagador: `Saque ${idEnvio}` }, favorecido: { chave } });
  const sentRow = async (idEnvio: string) => send.getSent(idEnvio);

  test('sent Pix: REALIZADO → PAYOUT (−), returns → PAYOUT_RETURNED (+), read page by page, the window half-open', async () => {
    at('2026-03-02T02:59:59Z'); // the evening before, São Paulo time
    await payout('recA', '150.00');
    at('2026-03-02T03:00:00Z'); // the day's first second
    await payout('recB', '10.00');
    for (const [hour, id, valor] of [
      ['04', 'recC', '20.00'],
      ['05', 'recD', '30.00'],
      ['06', 'recE', '40.00'],
    ] as const) {
      at(`2026-03-02T${hour}:00:00Z`);
      await payout(id, valor);
    }
    at('2026-03-02T07:00:00Z');
    await payout('recR', '50.00', 'loja@reject.test'); // NAO_REALIZADO: no money moved
    await psp.settleSends();
    at('2026-03-02T08:00:00Z');
    await psp.returnSent('recC', 300);
    at('2026-03-02T09:00:00Z');
    await psp.returnSent('recA', 100); // a return today of a Pix sent yesterday
    at('2026-03-03T03:00:00Z'); // the next day's first second: Efí lists it (fim is inclusive), the window does not
    await payout('recF', '60.00');
    await psp.settleSends();
    at('2026-03-03T04:00:00Z');
    await psp.returnSent('recB', 50); // tomorrow's

    log.length = 0;
    const pages = await collect(sentPixRecord(send, { pageSize: 2 }), spDay('2026-03-02'));
    const listed = log.filter((l) => l.startsWith('GET /v2/gn/pix/enviados'));
    assert.deepEqual(
      listed.map((l) => params(l.slice(4), ['paginacao.paginaAtual', 'paginacao.itensPorPagina'])),
      [0, 1, 2, 3].map((page) => ({
        inicio: '2026-02-23T03:00:00.000Z', // seven days back, for returns of older sends
        fim: '2026-03-03T03:00:00.000Z',
        'paginacao.paginaAtual': page,
        'paginacao.itensPorPagina': 2,
      })),
      'seven sent Pix, two a page: four pages',
    );
    assert.ok(pages.length > 1, 'the movements come in more than one page');
    const movements = pages.flat();
    const [a, b, c, d, e] = await Promise.all(['recA', 'recB', 'recC', 'recD', 'recE'].map(sentRow));
    const payouts = [
      [b!, -1000, '2026-03-02T03:00:00.000Z'],
      [c!, -2000, '2026-03-02T04:00:00.000Z'],
      [d!, -3000, '2026-03-02T05:00:00.000Z'],
      [e!, -4000, '2026-03-02T06:00:00.000Z'],
    ] as const;
    const returns = [
      [c!, 300, '2026-03-02T08:00:00.000Z'],
      [a!, 100, '2026-03-02T09:00:00.000Z'],
    ] as const;
    const byTime = (rows: (string | number)[][]) => rows.sort((x, y) => String(x[4]).localeCompare(String(y[4])));
    assert.deepEqual(
      byTime(movements.map((m) => [m.id, m.kind, m.reference, m.amount, m.at.toISOString()])),
      byTime([
        ...payouts.map(([s, cents, time]) => [`sent:${s.endToEndId}`, 'PAYOUT', s.idEnvio, cents, time]),
        ...returns.map(([s, cents, time]) => [`sent-return:${s.returns[0]!.id}`, 'PAYOUT_RETURNED', s.returns[0]!.id, cents, time]),
      ]),
    );
    assert.match(returns[0][0].returns[0]!.id, /^D\d{20}[a-zA-Z0-9]{11}$/, 'a return is named by its rtrId');
    assert.deepEqual(
      await collect(sentPixRecord(send, { returnsLookbackDays: 0 }), spDay('2026-03-02')).then((p) => p.flat().length),
      5,
      'without looking back, the return of yesterday’s Pix is not seen',
    );
    assert.deepEqual(proxy.violations, []);
  });

  test('sendTwiceNext: one idEnvio booked twice is two PAYOUT movements, and twice the money out of the balance', async () => {
    at('2026-03-04T12:00:00Z');
    const before = await efiBalance(send);
    psp.sendTwiceNext();
    await payout('twice1', '25.00');
    await payout('once1', '5.00'); // the fault is armed for one send only
    await psp.settleSends();
    const movements = (await collect(sentPixRecord(send), spDay('2026-03-04'))).flat();
    const twice = movements.filter((m) => m.reference === 'twice1');
    assert.equal(twice.length, 2);
    assert.deepEqual(
      twice.map((m) => [m.kind, m.amount]),
      [
        ['PAYOUT', -2500],
        ['PAYOUT', -2500],
      ],
    );
    assert.notEqual(twice[0]!.id, twice[1]!.id, 'two end-to-end ids');
    assert.equal(movements.filter((m) => m.reference === 'once1').length, 1);
    const read = await sentRow('twice1');
    assert.equal(read.status, 'REALIZADO');
    assert.ok(
      twice.some((m) => m.id === `sent:${read.endToEndId}`),
      'a read by idEnvio shows the one the request made',
    );
    assert.equal(await efiBalance(send), before - 2 * 2500 - 500);
    assert.deepEqual(proxy.violations, []);
  });

  test('devolveByHand: a devolução DEVOLVIDO in GET /pix and GET /pix/{e2eid}, no callback, the balance lower', async () => {
    at('2026-03-04T13:00:00Z');
    const before = await efiBalance(send);
    const pix = await psp.pay('handDevolucao0001', 5_000);
    const callbacks = receiver.requestsTo('/hooks/pix').length;
    assert.ok(callbacks >= 1, 'the Pix itself was called back');
    at('2026-03-04T13:05:00Z');
    const devolucao = await psp.devolveByHand(pix.endToEndId, 2_000);
    assert.equal(devolucao.status, 'DEVOLVIDO');
    assert.equal(devolucao.natureza, 'ORIGINAL');
    assert.match(devolucao.id, /^PSP[a-zA-Z0-9]{16}$/, 'an id the PSP made');
    assert.match(devolucao.rtrId, /^D\d{20}[a-zA-Z0-9]{11}$/);
    const read = await apiPix.getPix(pix.endToEndId);
    assert.deepEqual(
      read.devolucoes?.map((d) => [d.id, d.valor, d.status, d.horario.liquidacao]),
      [[devolucao.id, '20.00', 'DEVOLVIDO', '2026-03-04T13:05:00.000Z']],
    );
    const listed: string[] = [];
    for await (const p of apiPix.allPix({ inicio: new Date('2026-03-04T00:00:00Z'), fim: new Date('2026-03-05T00:00:00Z') }))
      for (const d of p.devolucoes ?? []) listed.push(`${p.endToEndId}/${d.id}/${d.status}`);
    assert.deepEqual(listed, [`${pix.endToEndId}/${devolucao.id}/DEVOLVIDO`]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(receiver.requestsTo('/hooks/pix').length, callbacks, 'nobody was told');
    assert.equal(await efiBalance(send), before + 5_000 - 2_000);
    await assert.rejects(psp.devolveByHand(pix.endToEndId, 3_001), RangeError, 'no more than what is left');
    await assert.rejects(psp.devolveByHand('E12345678202603041300abcdefghijk', 1), /no Pix/);
  });

  describe('boletos', () => {
    const boleto = async (cents: number) =>
      (
        await charges.createOneStep({
          items: [{ name: 'Curso', value: cents, amount: 1 }],
          metadata: { custom_id: `rec${cents}`, notification_url: receiver.url('/charges') },
          payment: { banking_billet: { customer: { name: 'Maria Silva', cpf: '52998224725' }, expire_at: '2026-03-20' } },
        })
      ).chargeId;
    const ids: Record<string, number> = {};

    before(async () => {
      at('2026-03-01T12:00:00Z');
      for (const [name, cents] of [
        ['eve', 1_001],
        ['first', 1_002],
        ['partial', 1_003],
        ['silent', 1_004],
        ['last', 1_005],
        ['next', 1_006],
        ['unpaid', 1_007],
        ['canceled', 1_008],
      ] as const)
        ids[name] = await boleto(cents);
      await charges.cancel(ids.canceled!);
      const pay = async (when: string, name: string, cents?: number) => {
        at(when);
        await psp.payBoleto(ids[name]!, cents);
      };
      await pay('2026-03-05T02:59:59Z', 'eve');
      await pay('2026-03-05T03:00:00Z', 'first');
      await pay('2026-03-05T12:00:00Z', 'partial', 999); // less than its value: what was paid is what counts
      at('2026-03-05T13:00:00Z');
      await psp.payBoletoSilently(ids.silent!);
      await pay('2026-03-06T02:59:59Z', 'last');
      await pay('2026-03-06T03:00:00Z', 'next');
    });

    const charge = (name: string) => String(ids[name]);

    test('BOLETO_PAID (+ what was paid) for each boleto paid that São Paulo day, page by page; not the eve, the next day, the unpaid, the canceled', async () => {
      log.length = 0;
      const pages = await collect(boletoRecord(charges, { pageSize: 2 }), spDay('2026-03-05'));
      assert.ok(pages.length > 1, 'more than one page');
      assert.deepEqual(
        pages.flat().map((m) => [m.id, m.kind, m.reference, m.amount, m.at.toISOString()]),
        [
          [`charge:${charge('first')}:paid`, 'BOLETO_PAID', charge('first'), 1_002, '2026-03-05T03:00:00.000Z'],
          [`charge:${charge('partial')}:paid`, 'BOLETO_PAID', charge('partial'), 999, '2026-03-05T12:00:00.000Z'],
          [`charge:${charge('silent')}:paid`, 'BOLETO_PAID', charge('silent'), 1_004, '2026-03-05T13:00:00.000Z'],
          [`charge:${charge('last')}:paid`, 'BOLETO_PAID', charge('last'), 1_005, '2026-03-06T02:59:59.000Z'],
        ],
      );
      const lists = log.filter((l) => l.startsWith('GET /v1/charges')).map((l) => params(l.slice(4), ['limit', 'page']));
      assert.deepEqual(
        lists,
        [1, 2, 3].map((page) => ({ charge_type: 'billet', begin_date: '2026-03-05', end_date: '2026-03-05', date_of: 'payment', limit: 2, page })),
        'four paid that day, two a page: the third page, empty, ends it',
      );
      assert.deepEqual(proxy.violations, []);
    });

    test('a window inside a day, and one across two days, keep the payments within them only', async () => {
      const hour = await collect(boletoRecord(charges), { from: new Date('2026-03-05T12:00:00Z'), to: new Date('2026-03-05T13:00:00Z') });
      assert.deepEqual(
        hour.flat().map((m) => m.reference),
        [charge('partial')],
      );
      log.length = 0;
      const across = await collect(boletoRecord(charges), { from: new Date('2026-03-05T20:00:00Z'), to: new Date('2026-03-06T04:00:00Z') });
      assert.deepEqual(
        across.flat().map((m) => m.reference),
        [charge('last'), charge('next')],
      );
      const [list] = log.filter((l) => l.startsWith('GET /v1/charges')).map((l) => params(l.slice(4), ['limit', 'page']));
      assert.equal(`${list!.begin_date}..${list!.end_date}`, '2026-03-05..2026-03-06', 'the São Paulo days the window covers');
    });

    test('payBoletoSilently: paid at the bank with no notification, yet paid in its detail and in the record', async () => {
      const tokens = async (chargeId?: number) =>
        (
          await db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM sandbox_psp.charge_notifications WHERE $1::bigint IS NULL OR charge_id = $1',
            [chargeId ?? null],
          )
        ).rows[0]!.n;
      assert.equal(await tokens(ids.first), 1, 'payBoleto notifies');
      assert.equal(await tokens(ids.silent), 0, 'payBoletoSilently does not');
      // Every notification made was posted to the charge's URL (the receiver's), and only those.
      assert.equal(receiver.requestsTo('/charges').length, await tokens());
      const detail = await charges.detail(ids.silent!);
      assert.deepEqual([detail.status, detail.paidValue], ['paid', 1_004]);
      assert.deepEqual(proxy.violations, []);
    });

    test('the balance: a boleto paid at a bank adds what was paid; one paid by its own Pix adds it once', async () => {
      at('2026-03-07T12:00:00Z');
      const bank = await boleto(2_001);
      const byPix = await boleto(2_002);
      const before = await efiBalance(send);
      await psp.payBoleto(bank);
      assert.equal(await efiBalance(send), before + 2_001);
      await psp.pay(`bolix${String(byPix).padStart(25, '0')}`, 2_002);
      assert.equal((await charges.detail(byPix)).status, 'paid', 'the Pix paid the boleto');
      assert.equal(await efiBalance(send), before + 2_001 + 2_002);
      const paid = (await collect(boletoRecord(charges), spDay('2026-03-07'))).flat();
      assert.deepEqual(
        paid.map((m) => [m.reference, m.amount]),
        [
          [String(bank), 2_001],
          [String(byPix), 2_002],
        ],
      );
      assert.deepEqual(proxy.violations, []);
    });
  });
});

describe('Efí records: what the readers do with an answer short of something (stub clients)', () => {
  const day = spDay('2026-03-05');
  const paid = (over: Partial<ChargePaid>): ChargePaid => ({
    chargeId: 7,
    customId: null,
    status: 'paid',
    total: 1_000,
    paidValue: 900,
    paidAt: '2026-03-05 10:00:00',
    ...over,
  });
  const boletos = (page: ChargePaid[], detail: (id: number) => Promise<ChargeDetail>) => ({
    async *paidBoletoPages() {
      yield page;
    },
    detail,
  });
  const noDetail = async (): Promise<ChargeDetail> => assert.fail('the detail is read only when the list lacks the paid value');

  test('a paid boleto: São Paulo time read as UTC−3, settled counts, the detail read only for a missing paid_value', async () => {
    const details: number[] = [];
    const reader = boletoRecord(
      boletos(
        [
          paid({}),
          paid({ chargeId: 8, status: 'settled', paidAt: '2026-03-05T11:00:00-03:00' }),
          paid({ chargeId: 9, paidValue: null }),
          paid({ chargeId: 10, status: 'canceled', paidAt: null }),
        ],
        async (id) => {
          details.push(id);
          return { chargeId: id, customId: null, status: 'paid', total: 1_000, paidValue: 950 };
        },
      ),
    );
    const movements = (await collect(reader, day)).flat();
    assert.deepEqual(
      movements.map((m) => [m.reference, m.amount, m.at.toISOString()]),
      [
        ['7', 900, '2026-03-05T13:00:00.000Z'],
        ['8', 900, '2026-03-05T14:00:00.000Z'],
        ['9', 950, '2026-03-05T13:00:00.000Z'],
      ],
    );
    assert.deepEqual(details, [9]);
  });

  test('a paid boleto without its payment time, or a time that is none, makes the record unreadable; zoneless times are São Paulo’s', async () => {
    await assert.rejects(collect(boletoRecord(boletos([paid({ paidAt: null })], noDetail)), day), /paid_at is missing/);
    await assert.rejects(collect(boletoRecord(boletos([paid({ paidAt: 'ontem' })], noDetail)), day), /is not a time/);
    // A time without a zone is São Paulo's, as Efí writes them; a bare date is that day's first instant there.
    const times = boletoRecord(boletos([paid({ paidAt: '2026-03-05T10:00:00' }), paid({ chargeId: 8, paidAt: '2026-03-05' })], noDetail));
    assert.deepEqual(
      (await collect(times, day)).flat().map((m) => m.at.toISOString()),
      ['2026-03-05T13:00:00.000Z', '2026-03-05T03:00:00.000Z'],
    );
  });

  test('a return of a sent Pix without its time makes the record unreadable; a window must be one', async () => {
    const sent: SentPixListed = {
      idEnvio: 'x1',
      endToEndId: null,
      valor: '10.00',
      status: 'REALIZADO',
      reason: null,
      returns: [{ id: 'D1', valor: '1.00', at: null }],
      requestedAt: '2026-03-05T12:00:00Z',
      settledAt: null,
    };
    const client = {
      async *sentPages() {
        yield [sent];
      },
    };
    await assert.rejects(collect(sentPixRecord(client), day), /has no horario/);
    const withTime = { ...sent, returns: [{ id: 'D1', valor: '1.00', at: '2026-03-05T13:00:00Z' }] };
    const ok = sentPixRecord({
      async *sentPages() {
        yield [withTime];
      },
    });
    assert.deepEqual(
      (await collect(ok, day)).flat().map((m) => [m.id, m.amount]),
      [
        ['sent:x1', -1000],
        ['sent-return:D1', 100],
      ],
      'without an end-to-end id, the send is named by its idEnvio',
    );
    assert.throws(() => sentPixRecord(client, { returnsLookbackDays: -1 }), RangeError);
    await assert.rejects(collect(ok, { from: day.to, to: day.from }), RangeError);
  });
});
