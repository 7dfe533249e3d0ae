/**
 * Downloads the Settlement details reports Adyen announced (CONTRACT §15), one at a time: HTTP Basic
 * with the report user's credentials, bounded in time, the CSV streamed through the parser and its
 * movements kept page by page (a movement read twice is kept once, so a download cut half-way is
 * simply made again). A failure is recorded with its reason and tried again later, longer each time.
 */
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import type { AppContext } from '../../context.ts';
import { backoffMs } from '../../db/db.ts';
import { maybeOne, run, sql } from '../../db/sql.ts';
import type { Job, JobLog } from '../../workers/job.ts';
import { keepMovements } from '../record-store.ts';
import type { AdyenConnector } from './connector.ts';
import { readSettlementReport, type SettlementSummary } from './settlement-report.ts';

// A download holds its report this long; renewed with every page, so a long report is never taken twice.
const lease_ms = 10 * 60_000;
const retry_base_ms = 60_000;
const retry_cap_ms = 6 * 3600_000;

interface DueReport {
  id: number;
  url: string;
  file_name: string;
  tries: number;
}

const silent: JobLog = { warn() {}, error() {} };

export function createAdyenReportJob(adyen: AdyenConnector): Job {
  const timeoutMs = adyen.connection.timeoutMs;
  const agent = new Agent({ connections: 2, keepAliveTimeout: 10_000, connect: { timeout: timeoutMs, rejectUnauthorized: true } });
  return {
    name: 'adyen-settlement-reports',
    idle_interval_ms: 30_000,
    async run(ctx, _wake, log = silent, stopping) {
      const credentials = adyen.connection.reportCredentials;
      if (!credentials) return leaveWithoutCredentials(ctx, adyen.account.id, log);
      const report = await claimDue(ctx, adyen.account.id);
      if (!report) return 0;
      try {
        const body = await download(agent, report.url, credentials, timeoutMs, stopping);
        const summary = await keepReport(ctx, adyen, report, body);
        await run(
          ctx.db,
          sql`UPDATE settlement_reports SET state = 'fetched', fetched_at = ${ctx.clock.now()}, rows = ${summary.rows}, latest_at = ${summary.latestAt},
                summary = ${JSON.stringify(summary)}::jsonb, last_error = NULL, next_try_at = NULL
              WHERE id = ${report.id}`,
        );
        if (summary.otherCurrency.rows > 0)
          log.error(
            { account: adyen.account.id, file: report.file_name, otherCurrency: summary.otherCurrency },
            'Adyen settlement report has lines in a currency other than BRL: not reconciled',
          );
      } catch (error) {
        if (stopping?.aborted) {
          // Not a failure of the report: the next process takes it up at once.
          await run(ctx.db, sql`UPDATE settlement_reports SET next_try_at = NULL, tries = tries - 1 WHERE id = ${report.id}`).catch(() => {});
          throw stopping.reason;
        }
        const reason = (error instanceof Error ? error.message : String(error)).slice(0, 500);
        const next = new Date(ctx.clock.now().getTime() + backoffMs(report.tries - 1, retry_base_ms, retry_cap_ms));
        await run(ctx.db, sql`UPDATE settlement_reports SET state = 'failed', last_error = ${reason}, next_try_at = ${next} WHERE id = ${report.id}`);
        log.warn(
          { account: adyen.account.id, file: report.file_name, tries: report.tries, reason, nextTryAt: next },
          'Adyen settlement report not downloaded',
        );
      }
      return 1;
    },
    close: () => agent.close(),
  };
}

/** Without the report user's credentials nothing can be downloaded: each new report is left failed, said once. */
async function leaveWithoutCredentials(ctx: AppContext, account: string, log: JobLog): Promise<number> {
  const reason = 'ADYEN_REPORT_USERNAME and ADYEN_REPORT_PASSWORD are not configured';
  const left = await run<{ file_name: string }>(
    ctx.db,
    sql`UPDATE settlement_reports SET state = 'failed', last_error = ${reason}, next_try_at = NULL
        WHERE account = ${account} AND state = 'pending' RETURNING file_name`,
  );
  for (const r of left.rows) log.error({ account, file: r.file_name, reason }, 'Adyen settlement report cannot be downloaded');
  return 0;
}

/** The next report due (new, waiting for credentials, or its retry time come), leased to this worker. */
async function claimDue(ctx: AppContext, account: string): Promise<DueReport | null> {
  const now = ctx.clock.now();
  const r = await run<DueReport>(
    ctx.db,
    sql`UPDATE settlement_reports SET tries = tries + 1, next_try_at = ${new Date(now.getTime() + lease_ms)}
        WHERE id = (
          SELECT id FROM settlement_reports
          WHERE account = ${account} AND state <> 'fetched' AND (next_try_at IS NULL OR next_try_at <= ${now})
          ORDER BY next_try_at NULLS FIRST, id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id, url, file_name, tries`,
  );
  return maybeOne(r);
}

async function download(
  agent: Agent,
  url: string,
  credentials: { username: string; password: string },
  timeoutMs: number,
  stopping?: AbortSignal,
): Promise<Readable> {
  const authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(url, {
      method: 'GET',
      headers: { authorization, accept: 'text/csv' },
      dispatcher: agent,
      headersTimeout: timeoutMs,
      // Between two chunks of the body: a report of any size downloads, a stalled one is cut.
      bodyTimeout: timeoutMs,
      ...(stopping ? { signal: stopping } : {}),
    });
  } catch (error) {
    const e = error as { code?: string; message?: string };
    throw new Error(`no answer from ${new URL(url).host}: ${e.code ?? e.message ?? String(error)}`);
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    const refused = res.statusCode === 401 || res.statusCode === 403 ? ': the report credentials were refused' : '';
    throw new Error(`HTTP ${res.statusCode} from ${new URL(url).host}${refused}`);
  }
  return res.body;
}

/** Reads the report through, keeping each page (and renewing the lease with it). */
async function keepReport(ctx: AppContext, adyen: AdyenConnector, report: DueReport, body: Readable): Promise<SettlementSummary> {
  const { pages, summary } = readSettlementReport(body, { merchantAccount: adyen.connection.merchantAccount });
  for await (const page of pages) {
    await keepMovements(ctx.db, adyen.account.id, page);
    await run(ctx.db, sql`UPDATE settlement_reports SET next_try_at = ${new Date(ctx.clock.now().getTime() + lease_ms)} WHERE id = ${report.id}`);
  }
  return summary;
}
