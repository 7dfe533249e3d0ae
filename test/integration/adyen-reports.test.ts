// Adyen's settlement reports (CONTRACT §15): a signed REPORT_AVAILABLE notification names a Settlement
// details report; the gateway queues it, downloads it from the test double of Adyen with the report
// user's HTTP Basic credentials, keeps its movements, and reads them back as the account's record.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { run, sql } from '../../src/db/sql.ts';
import { adyenRecord } from '../../src/providers/adyen/record.ts';
import { type ProviderMovement, RecordNotReady } from '../../src/providers/record.ts';
import { accepted, paidSale, type Rail, startRail, stopRail } from '../helpers/adyen-rail.ts';
import { railJob } from '../helpers/gateway.ts';

const report_user = 'report@Company.PagarGateway';
const report_password = 'report-password-of-the-test';

// biome-ignore format: Adyen's standard columns
const header = 'Company Account,Merchant Account,Psp Reference,Merchant Reference,Payment Method,Creation Date,TimeZone,Type,Modification Reference,Gross Currency,Gross Debit (GC),Gross Credit (GC),Exchange Rate,Net Currency,Net Debit (NC),Net Credit (NC),Commission (NC),Markup (NC),Scheme Fees (NC),Interchange (NC),Payment Method Variant,Modification Merchant Reference,Batch Number';

/** A report of a São Paulo day, 2026-03-02: the payment settled with its costs, a refund, the month's fee, and the payout closing the batch the next night. */
function reportOf(psp: string, merchantAccount: string, batch: number): string {
  const l = (cells: string) => `PagarCo,${merchantAccount},${cells},${batch}`;
  return [
    header,
    l(`${psp},1,visa,2026-03-02 10:15:00,BRT,Settled,${psp.slice(0, 8)}CAPTURE1,BRL,,160.00,1,BRL,,155.20,,1.30,0.40,3.10,visaclassic,`),
    l(`${psp},1,visa,2026-03-02 18:40:05,BRT,Refunded,${psp.slice(0, 8)}REFUND01,BRL,40.00,,1,BRL,40.00,,,,,,visaclassic,refund-1`),
    l(',,,2026-03-02 23:30:00,BRT,Fee,Transaction Fees,,,,,BRL,2.50,,,,,,,'),
    l(',,,2026-03-03 01:00:00,BRT,MerchantPayout,Payout,,,,,BRL,112.70,,,,,,,'),
  ].join('\n');
}

const day = { from: new Date('2026-03-02T03:00:00Z'), to: new Date('2026-03-03T03:00:00Z') };

async function readAll(reader: ReturnType<typeof adyenRecord>, window: typeof day): Promise<ProviderMovement[]> {
  const all: ProviderMovement[] = [];
  for await (const page of reader(window)) all.push(...page);
  return all;
}

interface ReportRow {
  state: string;
  tries: number;
  last_error: string | null;
  next_try_at: Date | null;
  rows: number | null;
  latest_at: Date | null;
  summary: { ignored: Record<string, number> } | null;
  account: string;
}
const reportRow = async (r: Rail, file: string) =>
  (await run<ReportRow>(r.gw.ctx.db, sql`SELECT * FROM settlement_reports WHERE file_name = ${file}`)).rows[0];
const noticeOf = async (r: Rail, file: string) =>
  (
    await run<{ kind: string; state: string; what: string }>(
      r.gw.ctx.db,
      sql`SELECT kind, state, fact->>'what' AS what FROM provider_events WHERE provider = 'adyen' AND external_reference = ${file}`,
    )
  ).rows[0];

describe('Adyen settlement reports, with the report credentials', () => {
  let r: Rail;
  const job = () => railJob(r.gw, 'adyen-settlement-reports');
  before(async () => {
    r = await startRail({ ADYEN_REPORT_USERNAME: report_user, ADYEN_REPORT_PASSWORD: report_password });
    r.adyen.reportUsername = report_user;
    r.adyen.reportPassword = report_password;
  });
  after(() => stopRail(r));

  test('REPORT_AVAILABLE → the report downloaded with Basic auth → its movements kept → read back as the record', async () => {
    const { psp } = await paidSale(r);
    const account = r.gw.ctx.rails.adyen!.account.id;
    const file = 'settlement_detail_report_batch_7.csv';
    r.adyen.publishReport(file, reportOf(psp, r.adyen.merchantAccount, 7));
    const reader = adyenRecord(r.gw.ctx.db, account);
    await assert.rejects(readAll(reader, day), RecordNotReady, 'no report yet: not ready, never empty');

    await accepted(r, r.adyen.reportNotification(file));
    assert.deepEqual(await noticeOf(r, file), { kind: 'NOTICE', state: 'applied', what: `report ${file} queued for download` });
    assert.equal((await reportRow(r, file))?.state, 'pending');
    assert.equal((await reportRow(r, file))?.account, account);

    assert.equal(await job().run(r.gw.ctx), 1);
    const download = r.adyen.requests.find((c) => c.method === 'GET' && c.path.endsWith(`/${file}`));
    const basic = `Basic ${Buffer.from(`${report_user}:${report_password}`).toString('base64')}`;
    assert.equal(download?.headers.authorization, basic);
    const fetched = (await reportRow(r, file))!;
    assert.equal(fetched.state, 'fetched');
    assert.equal(fetched.rows, 4);
    assert.equal(new Date(fetched.latest_at!).toISOString(), '2026-03-03T04:00:00.000Z');
    assert.deepEqual(fetched.summary?.ignored, { MerchantPayout: 1 });

    const movements = await readAll(reader, day);
    assert.deepEqual(
      movements.map(({ kind, reference, amount, at }) => ({ kind, reference, amount, at: at.toISOString() })),
      [
        { kind: 'CARD_SETTLED', reference: psp, amount: 16000, at: '2026-03-02T13:15:00.000Z' },
        { kind: 'FEE', reference: `${psp}:fee`, amount: -480, at: '2026-03-02T13:15:00.000Z' },
        { kind: 'CARD_REFUNDED', reference: `${psp.slice(0, 8)}REFUND01`, amount: -4000, at: '2026-03-02T21:40:05.000Z' },
        { kind: 'FEE', reference: 'Transaction Fees:fee', amount: -250, at: '2026-03-03T02:30:00.000Z' },
      ],
    );
    // Keyset pages of one: the same movements, in the same order.
    const paged: ProviderMovement[] = [];
    for await (const page of adyenRecord(r.gw.ctx.db, account, 1)(day)) {
      assert.equal(page.length, 1);
      paged.push(...page);
    }
    assert.deepEqual(paged, movements);
    await assert.rejects(readAll(reader, { from: day.to, to: new Date('2026-03-04T03:00:00Z') }), RecordNotReady, 'the next day is not reported yet');

    // Adyen sends the notification again: the report is neither queued nor read twice.
    await accepted(r, r.adyen.reportNotification(file));
    assert.equal(await job().run(r.gw.ctx), 0);
    const kept = await run<{ n: number }>(r.gw.ctx.db, sql`SELECT count(*)::int AS n FROM provider_movements WHERE account = ${account}`);
    assert.equal(kept.rows[0]!.n, 4);
  });

  test('credentials Adyen refuses: the report is failed with the reason, and tried again later', async () => {
    const file = 'settlement_detail_report_batch_8.csv';
    r.adyen.publishReport(file, reportOf('9915000000000008', r.adyen.merchantAccount, 8));
    r.adyen.reportPassword = 'the report user was given a new password';
    await accepted(r, r.adyen.reportNotification(file));
    assert.equal(await job().run(r.gw.ctx), 1);
    const failed = (await reportRow(r, file))!;
    assert.equal(failed.state, 'failed');
    assert.equal(failed.tries, 1);
    assert.match(failed.last_error!, /HTTP 401 .*the report credentials were refused/);
    assert.ok(new Date(failed.next_try_at!) > new Date(), 'tried again later, not at once');
    assert.equal(await job().run(r.gw.ctx), 0, 'not due yet');
    const reader = adyenRecord(r.gw.ctx.db, r.gw.ctx.rails.adyen!.account.id);
    await assert.rejects(
      readAll(reader, day),
      /settlement_detail_report_batch_8.csv .* is not read yet/,
      'a report not read: the record is not ready',
    );

    // The password is mended at Adyen, and the retry's time comes.
    r.adyen.reportPassword = report_password;
    await run(r.gw.ctx.db, sql`UPDATE settlement_reports SET next_try_at = now() - interval '1 second' WHERE file_name = ${file}`);
    assert.equal(await job().run(r.gw.ctx), 1);
    const retried = (await reportRow(r, file))!;
    assert.equal(retried.state, 'fetched');
    assert.equal(retried.tries, 2);
    assert.equal(retried.last_error, null);
    assert.equal((await readAll(reader, day)).filter((m) => m.kind === 'CARD_SETTLED').length, 2, 'both reports are the record');
  });

  test('a URL not on an Adyen host, or a report of another kind, is stored as a notice and never downloaded', async () => {
    const before = r.adyen.requests.length;
    const elsewhere = 'settlement_detail_report_batch_9.csv';
    const url = `https://reports.example.com/reports/download/MerchantAccount/${r.adyen.merchantAccount}/${elsewhere}`;
    await accepted(r, r.adyen.reportNotification(elsewhere, url));
    assert.equal(await reportRow(r, elsewhere), undefined);
    assert.deepEqual(await noticeOf(r, elsewhere), {
      kind: 'NOTICE',
      state: 'applied',
      what: `report ${elsewhere} not downloaded: https://reports.example.com is not an Adyen host`,
    });
    const other = 'payments_accounting_report_2026_03_02.csv';
    r.adyen.publishReport(other, header);
    await accepted(r, r.adyen.reportNotification(other));
    assert.equal(await reportRow(r, other), undefined);
    assert.match((await noticeOf(r, other))!.what, /not a Settlement details report/);
    assert.equal(await job().run(r.gw.ctx), 0);
    assert.equal(r.adyen.requests.length, before, 'nothing was fetched');
  });
});

describe('Adyen settlement reports, without the report credentials', () => {
  let r: Rail;
  before(async () => {
    r = await startRail();
  });
  after(() => stopRail(r));

  test('a report is left failed, saying why, until they are configured', async () => {
    const file = 'settlement_detail_report_batch_3.csv';
    r.adyen.publishReport(file, reportOf('9915000000000003', r.adyen.merchantAccount, 3));
    await accepted(r, r.adyen.reportNotification(file));
    const errors: object[] = [];
    const log = { warn() {}, error: (o: object) => errors.push(o) };
    assert.equal(await railJob(r.gw, 'adyen-settlement-reports').run(r.gw.ctx, undefined, log), 0);
    const row = (await reportRow(r, file))!;
    assert.equal(row.state, 'failed');
    assert.equal(row.next_try_at, null);
    assert.match(row.last_error!, /ADYEN_REPORT_USERNAME and ADYEN_REPORT_PASSWORD are not configured/);
    assert.equal(errors.length, 1, 'said once');
    assert.equal(await railJob(r.gw, 'adyen-settlement-reports').run(r.gw.ctx, undefined, log), 0);
    assert.equal(errors.length, 1, 'and not again');
    assert.equal(r.adyen.requests.filter((c) => c.method === 'GET').length, 0);
  });
});
